//! The payment a client sent: `X-PAYMENT` (v1) or `PAYMENT-SIGNATURE` (v2), base64 of a JSON
//! `PaymentPayload` whose `payload.transaction` is a base64, partially signed Solana
//! transaction (SVM `exact` scheme). The relay reads only what it needs to match the offer and
//! to key the replay reservation; the facilitator checks the transaction itself.

use axum::http::HeaderMap;
use serde_json::Value;

use super::requirements::{PAYMENT_SIGNATURE, X_PAYMENT};

/// Largest accepted payment header (a Solana transaction is at most 1232 bytes; the v2 payload
/// adds the echoed requirements and resource).
pub const MAX_HEADER_LEN: usize = 16 * 1024;

/// Why a payment header was not understood. Messages never quote the header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PaymentError {
    #[error("send one payment header, X-PAYMENT (x402 v1) or PAYMENT-SIGNATURE (x402 v2), not both")]
    BothHeaders,
    #[error("the payment header is larger than {MAX_HEADER_LEN} bytes")]
    TooLarge,
    #[error("the payment header is not base64 of a JSON object")]
    NotBase64Json,
    #[error("X-PAYMENT carries x402Version 1 and PAYMENT-SIGNATURE x402Version 2")]
    WrongVersion,
    #[error("the payment payload lacks a required field (scheme, network, accepted or payload.transaction)")]
    MissingField,
    #[error("payload.transaction is not a base64 serialized Solana transaction")]
    BadTransaction,
}

impl PaymentError {
    /// The x402 reason code (the spec's generic ones).
    pub fn code(self) -> &'static str {
        match self {
            PaymentError::WrongVersion => "invalid_x402_version",
            _ => "invalid_payload",
        }
    }
}

/// A decoded payment header.
#[derive(Clone)]
pub struct Payment {
    /// 1 or 2.
    pub version: u8,
    /// The whole `PaymentPayload`, forwarded to the facilitator as sent.
    pub payload: Value,
    /// sha256 of the transaction's message: the bytes its signatures sign. The replay key.
    pub message_hash: [u8; 32],
}

// The payload can authorise a transfer: never print it.
impl std::fmt::Debug for Payment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Payment").field("version", &self.version).finish_non_exhaustive()
    }
}

impl Payment {
    /// v1: the payload's `scheme` and `network`.
    pub fn v1_scheme_network(&self) -> (Option<&str>, Option<&str>) {
        (self.payload.get("scheme").and_then(Value::as_str), self.payload.get("network").and_then(Value::as_str))
    }

    /// v2: the requirements the client says it accepted.
    pub fn accepted(&self) -> Option<&Value> {
        self.payload.get("accepted")
    }
}

/// The payment header present, if any: `Ok(None)` when neither is sent.
pub fn from_headers(headers: &HeaderMap) -> Result<Option<Payment>, PaymentError> {
    let (version, raw) = match (headers.get(X_PAYMENT), headers.get(PAYMENT_SIGNATURE)) {
        (None, None) => return Ok(None),
        (Some(_), Some(_)) => return Err(PaymentError::BothHeaders),
        (Some(v1), None) => (1, v1),
        (None, Some(v2)) => (2, v2),
    };
    if raw.len() > MAX_HEADER_LEN {
        return Err(PaymentError::TooLarge);
    }
    let text = raw.to_str().map_err(|_| PaymentError::NotBase64Json)?.trim();
    decode(version, text).map(Some)
}

/// Decodes the header text sent under the header of `version`.
pub fn decode(version: u8, text: &str) -> Result<Payment, PaymentError> {
    let bytes = shared::b64::decode(text).map_err(|_| PaymentError::NotBase64Json)?;
    let payload: Value = serde_json::from_slice(&bytes).map_err(|_| PaymentError::NotBase64Json)?;
    if !payload.is_object() {
        return Err(PaymentError::NotBase64Json);
    }
    if payload.get("x402Version").and_then(Value::as_u64) != Some(u64::from(version)) {
        return Err(PaymentError::WrongVersion);
    }
    let present = |key: &str| payload.get(key).is_some_and(|v| !v.is_null());
    let fields_ok = match version {
        1 => present("scheme") && present("network"),
        _ => payload.get("accepted").is_some_and(Value::is_object),
    };
    if !fields_ok {
        return Err(PaymentError::MissingField);
    }
    let transaction = payload
        .get("payload")
        .and_then(|p| p.get("transaction"))
        .and_then(Value::as_str)
        .ok_or(PaymentError::MissingField)?;
    let bytes = shared::b64::decode(transaction).map_err(|_| PaymentError::BadTransaction)?;
    Ok(Payment { version, message_hash: message_hash(&bytes)?, payload })
}

/// The payment's key: sha256 of its transaction's message as it serializes canonically. The
/// parse takes exactly one transaction (no trailing bytes), so neither junk appended to a signed
/// payment nor the bytes in the empty fee-payer slot make it a new payment.
pub fn message_hash(tx: &[u8]) -> Result<[u8; 32], PaymentError> {
    let parsed = shared::solana::Transaction::parse(tx).map_err(|_| PaymentError::BadTransaction)?;
    Ok(shared::sha256(&parsed.message.serialize()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A real payment-shaped transaction: two signers (the fee payer's slot empty), a memo.
    fn tx() -> Vec<u8> {
        use shared::address::Address;
        use shared::solana::{AccountMeta, Instruction, MessageV0, Transaction};
        let memo = Instruction {
            program_id: Address::parse("MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr").unwrap(),
            accounts: vec![AccountMeta::readonly(Address([2; 32]), true)],
            data: b"0123456789abcdef".to_vec(),
        };
        let message = MessageV0::compile(&Address([1; 32]), &[memo], [7; 32]).unwrap();
        Transaction::new_unsigned(message).serialize()
    }

    fn header(value: &Value) -> String {
        shared::b64::encode(value.to_string())
    }

    fn key_of(t: &[u8]) -> Result<[u8; 32], PaymentError> {
        let v = json!({"x402Version": 1, "scheme": "exact", "network": "solana",
                       "payload": {"transaction": shared::b64::encode(t)}});
        decode(1, &header(&v)).map(|p| p.message_hash)
    }

    #[test]
    fn the_key_is_the_canonical_message() {
        let a = tx();
        // Filling the empty fee-payer slot changes the bytes but not the payment.
        let mut signed = a.clone();
        signed[1..65].copy_from_slice(&[7u8; 64]);
        assert_eq!(key_of(&a).unwrap(), key_of(&signed).unwrap());
        // Junk after the signed payment is not a new payment: it is not a transaction at all.
        let mut junk = a.clone();
        junk.extend_from_slice(b"junk");
        assert_eq!(key_of(&junk), Err(PaymentError::BadTransaction));
        // Fewer signatures than the message requires, or a cut message: refused.
        assert_eq!(key_of(&a[..a.len() - 1]), Err(PaymentError::BadTransaction));
        let mut one_signature = vec![1u8];
        one_signature.extend_from_slice(&a[65..]);
        assert_eq!(key_of(&one_signature), Err(PaymentError::BadTransaction));
    }

    #[test]
    fn decode_checks_version_fields_and_transaction() {
        let t = shared::b64::encode(tx());
        let v1 = json!({"x402Version": 1, "scheme": "exact", "network": "solana", "payload": {"transaction": t}});
        let ok = decode(1, &header(&v1)).unwrap();
        assert_eq!(ok.version, 1);
        assert_eq!(ok.v1_scheme_network(), (Some("exact"), Some("solana")));
        assert_eq!(decode(2, &header(&v1)).unwrap_err(), PaymentError::WrongVersion);
        let v2 = json!({"x402Version": 2, "accepted": {"scheme": "exact"}, "payload": {"transaction": t}});
        assert!(decode(2, &header(&v2)).unwrap().accepted().is_some());
        let no_accepted = json!({"x402Version": 2, "payload": {"transaction": t}});
        assert_eq!(decode(2, &header(&no_accepted)).unwrap_err(), PaymentError::MissingField);
        let no_tx = json!({"x402Version": 1, "scheme": "exact", "network": "solana", "payload": {}});
        assert_eq!(decode(1, &header(&no_tx)).unwrap_err(), PaymentError::MissingField);
        let bad_tx = json!({"x402Version": 1, "scheme": "exact", "network": "solana",
                            "payload": {"transaction": "AAAA"}});
        assert_eq!(decode(1, &header(&bad_tx)).unwrap_err(), PaymentError::BadTransaction);
        assert_eq!(decode(1, "%%%").unwrap_err(), PaymentError::NotBase64Json);
        assert_eq!(decode(1, &shared::b64::encode("[1]")).unwrap_err(), PaymentError::NotBase64Json);
    }

    #[test]
    fn headers_pick_the_version() {
        let t = shared::b64::encode(tx());
        let v1 = json!({"x402Version": 1, "scheme": "exact", "network": "solana", "payload": {"transaction": t}});
        let mut h = HeaderMap::new();
        assert!(from_headers(&h).unwrap().is_none());
        h.insert("X-PAYMENT", header(&v1).parse().unwrap());
        assert_eq!(from_headers(&h).unwrap().unwrap().version, 1);
        h.insert("Payment-Signature", header(&v1).parse().unwrap());
        assert_eq!(from_headers(&h).unwrap_err(), PaymentError::BothHeaders);
        let mut big = HeaderMap::new();
        big.insert("x-payment", "A".repeat(MAX_HEADER_LEN + 4).parse().unwrap());
        assert_eq!(from_headers(&big).unwrap_err(), PaymentError::TooLarge);
    }
}
