//! The client's side of a reply: the `encryptedResponse` object decoded and opened with the
//! request's HPKE context, and what opens read as each sealed reply format (chat, encrypted
//! agent, chat completion) with its receipt checked.
//!
//! The first byte picks the mode: even, the rest is the `encryptedResponse` JSON as a relay
//! could send it; odd, the rest is a plaintext the enclave seals and the client must open to
//! the same bytes before parsing it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use shared::reply::{self, EncryptedResponse};
use shared::wire::{AgentReplyPlaintext, ChatCompletion, ReplyPlaintext};

fn read(opened: &[u8]) {
    let program = svc_fuzz::program_id();
    if let Ok(inner) = serde_json::from_slice::<ReplyPlaintext>(opened) {
        let _ = inner.receipt.verify(&program);
    }
    if let Ok(inner) = serde_json::from_slice::<AgentReplyPlaintext>(opened) {
        let _ = inner.receipt.verify(&program);
    }
    if let Ok(inner) = serde_json::from_slice::<ChatCompletion>(opened) {
        let _ = inner.receipt.verify(&program);
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else { return };
    let exchange = svc_fuzz::exchange();
    let enc = &exchange.envelope.enc;
    if mode % 2 == 0 {
        let Ok(sealed) = serde_json::from_slice::<EncryptedResponse>(rest) else { return };
        if let Ok(opened) = reply::open(&exchange.client, enc, &sealed) {
            read(&opened);
        }
    } else {
        let mut rng = svc_fuzz::SeededRng::new(u64::from(mode));
        let sealed = reply::seal(&exchange.enclave, enc, rest, &mut rng);
        let wire = serde_json::to_vec(&sealed).expect("a reply serialises");
        let sealed: EncryptedResponse = serde_json::from_slice(&wire).expect("a reply parses back");
        let opened = reply::open(&exchange.client, enc, &sealed).expect("the client opens what the enclave sealed");
        assert_eq!(opened.as_slice(), rest);
        read(&opened);
    }
});
