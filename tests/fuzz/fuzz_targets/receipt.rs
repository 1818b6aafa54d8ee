//! Receipts (contract §2.6): the lookup JSON decoded and verified (strict field decoding, the
//! address re-derived under the program id, the ed25519 signature), as clients and the relay
//! check what the enclave or a relay hands them.
//!
//! The first byte picks the mode: even, the rest is the receipt JSON; odd, the rest gives the
//! fields of a receipt the enclave key issues, which must then verify to the same body.
#![no_main]

use libfuzzer_sys::fuzz_target;
use shared::address::Address;
use shared::keys::{ClientKey, PromptHash, TeeKey};
use shared::receipt::{Receipt, ReceiptBody, ReceiptContext};

fn issued(rest: &[u8]) {
    // 32 + 32 + 16 + 32 fixed bytes, then the model and provider split at a NUL.
    if rest.len() < 112 {
        return;
    }
    let (fixed, names) = rest.split_at(112);
    let parts = svc_fuzz::split_nul(names, 2);
    let text = |i: usize| String::from_utf8_lossy(parts.get(i).copied().unwrap_or_default()).into_owned();
    let body = ReceiptBody {
        prompt_hash: PromptHash(fixed[..32].try_into().expect("32 bytes")),
        tee_pubkey: TeeKey(fixed[32..64].try_into().expect("32 bytes")),
        nonce: fixed[64..80].try_into().expect("16 bytes"),
        client_pubkey: ClientKey(fixed[80..112].try_into().expect("32 bytes")),
        model: text(0),
        provider: text(1),
    };
    let program = svc_fuzz::program_id();
    let ctx = ReceiptContext { program_id: program, timestamp: 1_800_000_000, tdx_quote_hash: Some([5; 32]) };
    let Ok(receipt) = Receipt::issue(&body, &svc_fuzz::receipt_key(), &ctx) else {
        assert!(body.model.len() > 255 || body.provider.len() > 255);
        return;
    };
    let verified = receipt.verify(&program).expect("an issued receipt verifies");
    assert_eq!(verified.body, body);
    let json = serde_json::to_vec(&receipt).expect("a receipt serialises");
    assert_eq!(serde_json::from_slice::<Receipt>(&json).ok().as_ref(), Some(&receipt));
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else { return };
    if mode % 2 == 1 {
        return issued(rest);
    }
    let Ok(receipt) = serde_json::from_slice::<Receipt>(rest) else { return };
    if let Ok(verified) = receipt.verify(&svc_fuzz::program_id()) {
        assert_eq!(Address::parse(&receipt.address), Some(verified.address));
        assert_eq!(hex::encode(verified.body.prompt_hash.0), receipt.encrypted_prompt_hash);
    }
    let _ = client::receipts::ReceiptQuery::parse(&receipt.address);
});
