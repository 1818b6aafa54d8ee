//! The relay's reading of an x402 payment header (`X-PAYMENT`, v1, or `PAYMENT-SIGNATURE`,
//! v2): base64 of a JSON `PaymentPayload`, whose `payload.transaction` is parsed strictly to
//! key the replay reservation on the canonical message (issue 18, finding 4).
#![no_main]

use axum::http::{HeaderMap, HeaderValue};
use libfuzzer_sys::fuzz_target;
use relay::x402::payment::{self, Payment};
use serde_json::Value;
use shared::solana::Transaction;

fn check(p: &Payment) {
    let _ = (p.v1_scheme_network(), p.accepted());
    // The key is the hash of the canonical message of the one transaction in the payload.
    let tx = p.payload["payload"]["transaction"].as_str().expect("a decoded payment has a transaction");
    let tx = Transaction::parse(&shared::b64::decode(tx).expect("base64")).expect("a transaction");
    assert_eq!(p.message_hash, shared::sha256(&tx.message.serialize()));
    assert_eq!(payment::message_hash(&tx.serialize()), Ok(p.message_hash));
}

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        for version in [1, 2] {
            if let Ok(p) = payment::decode(version, text) {
                assert_eq!(p.version, version);
                assert_eq!(p.payload.get("x402Version").and_then(Value::as_u64), Some(u64::from(version)));
                check(&p);
            }
        }
    }
    if let Ok(value) = HeaderValue::from_bytes(data) {
        for name in ["x-payment", "payment-signature"] {
            let mut headers = HeaderMap::new();
            headers.insert(name, value.clone());
            if let Ok(Some(p)) = payment::from_headers(&headers) {
                check(&p);
            }
        }
    }
});
