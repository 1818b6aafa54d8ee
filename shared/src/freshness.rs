//! Freshness beyond the contract: `GET /tee/attestation?nonce=<64 hex>` makes the enclave sign
//! the client's nonce with its ed25519 key, which the binding quote ties to the enclave.

/// Domain separation for nonce signatures; nothing else the enclave signs starts like this.
pub const NONCE_PREFIX: &[u8] = b"SVC-ATTEST-NONCE-v1";

/// The signed message: `SVC-ATTEST-NONCE-v1` ‖ nonce (32) ‖ tee public key (32).
pub fn nonce_message(nonce: &[u8; 32], tee_public_key: &[u8; 32]) -> Vec<u8> {
    [NONCE_PREFIX, nonce.as_slice(), tee_public_key.as_slice()].concat()
}

/// Parses the `nonce` query value: exactly 64 hex characters.
pub fn parse_nonce(text: &str) -> Option<[u8; 32]> {
    if text.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    hex::decode_to_slice(text, &mut out).ok()?;
    Some(out)
}

/// The `nonce` value of a raw query string, if present (`Some(Err)` when present but bad).
pub fn nonce_from_query(query: Option<&str>) -> Option<Result<[u8; 32], ()>> {
    let value = query?.split('&').find_map(|pair| pair.strip_prefix("nonce="))?;
    Some(parse_nonce(value).ok_or(()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nonce_query_parsing() {
        let good = "ab".repeat(32);
        assert_eq!(nonce_from_query(None), None);
        assert_eq!(nonce_from_query(Some("x=1")), None);
        assert_eq!(nonce_from_query(Some(&format!("nonce={good}"))), Some(Ok([0xab; 32])));
        assert_eq!(nonce_from_query(Some(&format!("a=b&nonce={good}"))), Some(Ok([0xab; 32])));
        assert_eq!(nonce_from_query(Some("nonce=abc")), Some(Err(())));
        assert_eq!(nonce_from_query(Some(&format!("nonce={}", "zz".repeat(32)))), Some(Err(())));
        assert_eq!(nonce_from_query(Some(&format!("nonce={good}00"))), Some(Err(())));
    }

    #[test]
    fn message_layout() {
        let m = nonce_message(&[1; 32], &[2; 32]);
        assert_eq!(&m[..19], b"SVC-ATTEST-NONCE-v1");
        assert_eq!(m.len(), 19 + 64);
    }
}
