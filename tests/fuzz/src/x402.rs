//! The x402 fixture: the facilitator's fee payer, the payer's key and the requirements a
//! `/verify` body carries (as `tests/standins`' facilitator tests build them).

use ed25519_dalek::SigningKey;
use serde_json::{Value, json};
use shared::address::Address;

pub const PAY_TO: &str = "2wKupLR9q6wXYppw8Gr2NvWxKBUqm4PPJKkQfoxHDBg4";
pub const USDC: &str = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
pub const AMOUNT: u64 = 5000;

/// The facilitator's key: the fee payer every payment must name.
pub fn fee_payer_key() -> SigningKey {
    SigningKey::from_bytes(&[9; 32])
}

pub fn fee_payer() -> [u8; 32] {
    fee_payer_key().verifying_key().to_bytes()
}

/// The payer (the transfer's authority and the client's signer).
pub fn owner_key() -> SigningKey {
    SigningKey::from_bytes(&[5; 32])
}

/// The `/verify` body for a payment transaction (base64) under x402 `version` 1 or 2.
pub fn verify_body(version: u64, transaction: &str) -> Value {
    let (v1, caip2) = shared::x402::NETWORKS[0];
    let extra = json!({"feePayer": Address(fee_payer()).to_string()});
    let mut req = json!({"scheme": "exact", "asset": USDC, "payTo": PAY_TO, "maxTimeoutSeconds": 60, "extra": extra});
    if version == 1 {
        req["network"] = json!(v1);
        req["maxAmountRequired"] = json!(AMOUNT.to_string());
        json!({"x402Version": 1, "paymentRequirements": req,
               "paymentPayload": {"x402Version": 1, "scheme": "exact", "network": v1,
                                  "payload": {"transaction": transaction}}})
    } else {
        req["network"] = json!(caip2);
        req["amount"] = json!(AMOUNT.to_string());
        json!({"x402Version": 2, "paymentRequirements": req,
               "paymentPayload": {"x402Version": 2, "accepted": req, "payload": {"transaction": transaction}}})
    }
}
