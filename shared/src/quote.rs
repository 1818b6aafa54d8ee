//! The few TDX quote header facts the enclave needs without a verifier: version, TEE type
//! and where `report_data` sits. Full verification is the client's job (dcap-qvl + policy).

pub const TEE_TYPE_TDX: u32 = 0x81;
/// Intel's QE vendor ID, at header offset 12.
pub const INTEL_QE_VENDOR_ID: [u8; 16] =
    [0x93, 0x9a, 0x72, 0x33, 0xf7, 0x9c, 0x4c, 0xa9, 0x94, 0x0a, 0x0d, 0xb3, 0x95, 0x7f, 0x06, 0x07];
const HEADER_LEN: usize = 48;
const TD_REPORT_DATA_OFFSET: usize = 520;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum QuoteError {
    #[error("quote is truncated")]
    Truncated,
    #[error("quote version {0} is not 4 or 5")]
    UnsupportedVersion(u16),
    #[error("quote TEE type {0:#x} is not TDX")]
    NotTdx(u32),
    #[error("quote body type {0} is not a TD report")]
    NotTdBody(u16),
}

fn u16_at(b: &[u8], at: usize) -> Result<u16, QuoteError> {
    Ok(u16::from_le_bytes(b.get(at..at + 2).ok_or(QuoteError::Truncated)?.try_into().expect("2 bytes")))
}

fn u32_at(b: &[u8], at: usize) -> Result<u32, QuoteError> {
    Ok(u32::from_le_bytes(b.get(at..at + 4).ok_or(QuoteError::Truncated)?.try_into().expect("4 bytes")))
}

/// The 64-byte `report_data` of a TDX v4 or v5 quote.
pub fn report_data(quote: &[u8]) -> Result<[u8; 64], QuoteError> {
    let version = u16_at(quote, 0)?;
    let tee_type = u32_at(quote, 4)?;
    if tee_type != TEE_TYPE_TDX {
        return Err(QuoteError::NotTdx(tee_type));
    }
    let body = match version {
        4 => HEADER_LEN,
        5 => {
            let body_type = u16_at(quote, HEADER_LEN)?;
            if !(2..=4).contains(&body_type) {
                return Err(QuoteError::NotTdBody(body_type));
            }
            HEADER_LEN + 6
        }
        v => return Err(QuoteError::UnsupportedVersion(v)),
    };
    let at = body + TD_REPORT_DATA_OFFSET;
    Ok(quote.get(at..at + 64).ok_or(QuoteError::Truncated)?.try_into().expect("64 bytes"))
}

/// `report_data` as the contract binds keys: sha256(`parts` concatenated), zero-padded to 64.
pub fn binding_report_data(parts: &[&[u8]]) -> [u8; 64] {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    for p in parts {
        h.update(p);
    }
    let mut out = [0u8; 64];
    out[..32].copy_from_slice(&h.finalize());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/test-vectors/dcap-qvl-samples");

    fn sample(name: &str) -> Vec<u8> {
        std::fs::read(format!("{SAMPLES}/{name}")).unwrap_or_else(|e| panic!("{name}: {e}"))
    }

    #[test]
    fn real_quotes() {
        // v4 sample: report_data starts 9a9d48e7 (tdx.md §3.4).
        let rd = report_data(&sample("tdx_quote")).unwrap();
        assert_eq!(hex::encode(&rd[..4]), "9a9d48e7");
        // v5 samples parse (body types 3 and 4).
        assert!(report_data(&sample("tdx_quote_outdated")).is_ok());
        assert!(report_data(&sample("tdx_quote_td15ex")).is_ok());
        // SGX is refused for its TEE type.
        assert_eq!(report_data(&sample("sgx_quote")), Err(QuoteError::NotTdx(0)));
    }

    #[test]
    fn truncation_and_versions() {
        let q = sample("tdx_quote");
        assert_eq!(report_data(&q[..600]), Err(QuoteError::Truncated));
        assert_eq!(report_data(&q[..3]), Err(QuoteError::Truncated));
        let mut v3 = q.clone();
        v3[0] = 3;
        assert_eq!(report_data(&v3), Err(QuoteError::UnsupportedVersion(3)));
    }

    #[test]
    fn binding_is_sha256_zero_padded() {
        let rd = binding_report_data(&[b"ab", b"c"]);
        assert_eq!(hex::encode(&rd[..32]), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        assert_eq!(rd[32..], [0u8; 32]);
    }
}
