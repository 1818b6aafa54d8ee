//! The x402 `exact` scheme's checks on a Solana payment (`shared::x402::check`), which the
//! relay's built-in facilitator runs on every `/verify` and `/settle` body.
//!
//! The first byte picks the mode: `M`, the rest is a message the payer signs, wrapped in the
//! fixture's requirements (so mutations reach the instruction checks behind the signature
//! check); anything else, the whole input is the `/verify` body JSON.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use shared::solana::{Transaction, VersionedMessage};
use svc_fuzz::x402::{fee_payer, owner_key, verify_body};

fn verify(body: &Value) {
    let Ok(accepted) = shared::x402::check(body, &fee_payer()) else { return };
    // An accepted payment is one transaction the relay can key, naming the facilitator.
    let wire = accepted.transaction.serialize();
    assert_eq!(
        relay::x402::payment::message_hash(&wire),
        Ok(shared::sha256(&accepted.transaction.message.serialize()))
    );
    assert_eq!(accepted.transaction.message.fee_payer().map(|a| a.0), Some(fee_payer()));
    assert!(!accepted.payer.is_empty());
}

fuzz_target!(|data: &[u8]| {
    match data.split_first() {
        Some((&b'M', rest)) => {
            let Ok(message) = VersionedMessage::parse(rest) else { return };
            let mut tx = Transaction::new_unsigned(message);
            let _ = tx.sign(&[&owner_key()]);
            let tx = shared::b64::encode(tx.serialize());
            for version in [1, 2] {
                verify(&verify_body(version, &tx));
            }
        }
        _ => {
            if let Ok(body) = serde_json::from_slice::<Value>(data) {
                verify(&body);
            }
        }
    }
});
