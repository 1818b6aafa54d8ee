//! Evidence: what the enclave presents (the quote, and the nonce proof and binding it claims),
//! with the collateral that vouches for it. Parsing here is shape only: nothing is trusted
//! until the DCAP policy (`policy::tcb`) has checked the chain.

use dcap_qvl::quote::Quote;

use super::collateral::Collateral;
use super::document::{Outcome, Verdict};
use super::policy::Binding;
use crate::quote::{INTEL_QE_VENDOR_ID, TEE_TYPE_TDX};

/// Quotes above this are not DCAP quotes (tdx.md §2.2).
pub const MAX_QUOTE_LEN: usize = 16 * 1024;

/// A liveness proof: the enclave's ed25519 signature over a client nonce.
#[derive(Debug, Clone, Copy)]
pub struct NonceProof {
    pub nonce: [u8; 32],
    pub signature: [u8; 64],
}

pub struct Evidence<'a> {
    pub quote: &'a [u8],
    pub collateral: &'a Collateral,
    /// What `report_data` must bind; `None` only for offline inspection of a bare quote, and
    /// then the document says the binding was not checked.
    pub binding: Option<Binding>,
    /// Only with [`Binding::Keys`]: the nonce signed by the bound enclave key.
    pub nonce: Option<NonceProof>,
}

/// The quote's shape, before any cryptography: rows `size`, `quote_parse` and `tee_type`, and
/// the parsed quote when there is one to check further.
pub(crate) fn parse(quote: &[u8]) -> (Outcome, Option<Quote>) {
    let mut out = Outcome::default();
    if quote.len() > MAX_QUOTE_LEN {
        out.record("size", false, Some(format!("quote ≤ {MAX_QUOTE_LEN} B")), Some(format!("{} B", quote.len())), None);
        out.fail(Verdict::Malformed, "oversize");
        return (out, None);
    }
    let parsed = match Quote::parse(quote) {
        Ok(q) => q,
        Err(err) => {
            out.record("quote_parse", false, None, None, Some(format!("{err:#}")));
            match header_unsupported(quote) {
                Some(reason) => out.fail(Verdict::Unsupported, reason),
                None => out.fail(Verdict::Malformed, "malformed_quote"),
            }
            return (out, None);
        }
    };
    out.record("quote_parse", true, None, Some(format!("version {}", parsed.header.version)), None);
    let is_tdx = parsed.header.tee_type == TEE_TYPE_TDX;
    out.compare(
        "tee_type",
        "not_tdx",
        "TDX (0x81)".into(),
        if is_tdx { "TDX (0x81)".into() } else { format!("{:#x}", parsed.header.tee_type) },
    );
    (out, Some(parsed))
}

/// Why a quote that did not parse did not: a recognisable Intel quote header of a version or
/// key type we do not handle is unsupported; anything else is malformed input.
fn header_unsupported(quote: &[u8]) -> Option<&'static str> {
    if quote.get(12..28)? != INTEL_QE_VENDOR_ID {
        return None;
    }
    let version = u16::from_le_bytes(quote.get(0..2)?.try_into().ok()?);
    let key_type = u16::from_le_bytes(quote.get(2..4)?.try_into().ok()?);
    if !(3..=5).contains(&version) {
        return Some("unsupported_quote_version");
    }
    if key_type != 2 {
        return Some("unsupported_attestation_key");
    }
    None
}
