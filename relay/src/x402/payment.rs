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
    let tx = shared::b64::decode(transaction).map_err(|_| PaymentError::BadTransaction)?;
    let message = transaction_message(&tx).ok_or(PaymentError::BadTransaction)?;
    Ok(Payment { version, message_hash: shared::sha256(message), payload })
}

/// The message of a serialized Solana transaction: what follows the compact-u16 signature
/// count and the 64-byte signatures. `None` when the bytes cannot be a transaction.
pub fn transaction_message(tx: &[u8]) -> Option<&[u8]> {
    let (count, used) = compact_u16(tx)?;
    if count == 0 {
        return None;
    }
    let start = used.checked_add(usize::from(count).checked_mul(64)?)?;
    // A message has at least a 3-byte header, one key, a blockhash and two counts.
    tx.get(start..).filter(|m| m.len() >= 3 + 1 + 32 + 32 + 2)
}

/// Solana's compact-u16 ("shortvec"): 1 to 3 bytes, 7 bits each, little end first.
fn compact_u16(bytes: &[u8]) -> Option<(u16, usize)> {
    let mut value: u32 = 0;
    for (i, byte) in bytes.iter().take(3).enumerate() {
        value |= u32::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            return u16::try_from(value).ok().map(|v| (v, i + 1));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tx(signatures: u8, message_len: usize) -> Vec<u8> {
        let mut tx = vec![signatures];
        tx.extend(std::iter::repeat_n(0u8, 64 * usize::from(signatures)));
        tx.extend((0..message_len).map(|i| i as u8));
        tx
    }

    fn header(value: &Value) -> String {
        shared::b64::encode(value.to_string())
    }

    #[test]
    fn compact_u16_reads_one_to_three_bytes() {
        assert_eq!(compact_u16(&[0x02]), Some((2, 1)));
        assert_eq!(compact_u16(&[0x80, 0x01]), Some((128, 2)));
        assert_eq!(compact_u16(&[0xff, 0xff, 0x03]), Some((0xffff, 3)));
        assert_eq!(compact_u16(&[0x80, 0x80, 0x80]), None);
        assert_eq!(compact_u16(&[]), None);
    }

    #[test]
    fn message_is_what_follows_the_signatures() {
        let t = tx(2, 100);
        assert_eq!(transaction_message(&t).unwrap().len(), 100);
        assert_eq!(transaction_message(&t).unwrap()[0], 0);
        assert_eq!(transaction_message(&tx(0, 100)), None);
        assert_eq!(transaction_message(&tx(2, 10)), None);
        assert_eq!(transaction_message(&[5, 1, 2]), None);
    }

    #[test]
    fn the_key_ignores_signature_bytes() {
        // Filling the empty fee-payer slot changes the bytes but not the payment.
        let a = tx(2, 100);
        let mut b = a.clone();
        b[1..65].copy_from_slice(&[7u8; 64]);
        let p = |t: &[u8]| {
            let v = json!({"x402Version": 1, "scheme": "exact", "network": "solana",
                           "payload": {"transaction": shared::b64::encode(t)}});
            decode(1, &header(&v)).unwrap().message_hash
        };
        assert_eq!(p(&a), p(&b));
    }

    #[test]
    fn decode_checks_version_fields_and_transaction() {
        let t = shared::b64::encode(tx(2, 100));
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
        let t = shared::b64::encode(tx(2, 100));
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
