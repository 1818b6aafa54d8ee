//! Platforms whose DCAP chain verified, so that the next quote from one costs one signature.
//!
//! Two quotes from the same TD under the same collateral and root differ only in
//! `report_data` and the attestation key's signature over the header and report: the PCK chain,
//! the QE report and its signature, the TCB values and the attributes are the same bytes. So a
//! quote whose every other byte equals a quote that verified gets the same DCAP result, once
//! its own signature verifies under the attestation key, which is itself among those bytes.
//! Results are kept from the moment they verified until the earliest `nextUpdate` or `notAfter`
//! of the collateral and certificates (dcap-qvl's collateral time window), at most
//! [`MAX_ENTRIES`] of them (then forgotten all at once). Failures are never kept.
//!
//! Feature `remember-platforms`: for clients that check the same enclaves again. The enclave
//! attests a GPU node rarely and keeps its trusted code small, so it checks each quote in full.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use dcap_qvl::QuotePolicy;
use dcap_qvl::quote::{AuthData, Quote};
use dcap_qvl::verify::QuoteVerifier;
use p256::ecdsa::signature::Verifier;
use p256::ecdsa::{Signature, VerifyingKey};
use sha2::{Digest, Sha256};

use super::collateral::Collateral;
use super::document::VerificationDocument;
use super::evidence::Evidence;
use super::policy::tcb::{self, DcapResult};
use super::policy::{Policy, TrustRoot};
use super::verify::verify_with;

/// Far more platforms than one client or enclave talks to.
const MAX_ENTRIES: usize = 256;

/// Offset of `report_data` in a TD 1.0 or 1.5 report body (TDX module ABI, `TDREPORT_STRUCT`).
const REPORT_DATA_OFFSET: usize = 520;
const REPORT_DATA_LEN: usize = 64;
/// The auth data opens with its length (u32), then the signature (r ‖ s).
const SIGNATURE_OFFSET: usize = 4;
const SIGNATURE_LEN: usize = 64;

/// Checks `evidence` as [`super::verify`] does, taking the DCAP result for a platform that
/// verified before from `platforms` (and leaving it there when it verifies now). The document
/// is the one `verify` gives.
pub fn verify_remembering(
    evidence: &Evidence<'_>,
    policy: &Policy,
    platforms: &VerifiedPlatforms,
    now: u64,
) -> VerificationDocument {
    verify_with(evidence, policy, now, &|| platforms.dcap(evidence, policy, now))
}

#[derive(Debug, Default)]
pub struct VerifiedPlatforms {
    known: Mutex<HashMap<[u8; 32], Platform>>,
    recalled: AtomicU64,
}

/// dcap-qvl's result for a platform, and the times it holds between.
#[derive(Debug, Clone)]
struct Platform {
    status: String,
    advisory_ids: Vec<String>,
    verified_at: u64,
    expires: u64,
}

/// Where a quote's platform is remembered.
struct QuoteIdentity {
    key: [u8; 32],
}

impl VerifiedPlatforms {
    /// How many checks took their DCAP result from here.
    pub fn recalled(&self) -> u64 {
        self.recalled.load(Ordering::Relaxed)
    }

    /// The DCAP result for `e`: remembered, or checked now (and remembered if it verified).
    fn dcap(&self, e: &Evidence<'_>, policy: &Policy, now: u64) -> DcapResult {
        let full = || tcb::dcap(e.quote, &e.collateral.inner, policy, now);
        let Ok(quote) = Quote::parse(e.quote) else { return full() };
        let Some(id) = QuoteIdentity::of(e.quote, &quote, e.collateral, &policy.root) else { return full() };
        if let Some(known) = self.recall(&id, e.quote, &quote, now) {
            return Ok((known.status, known.advisory_ids));
        }
        let verifier = match &policy.root {
            TrustRoot::Intel => QuoteVerifier::new_prod(),
            TrustRoot::Dev(der) => QuoteVerifier::new(der.clone()),
        };
        // The claims carry the time window; dcap-qvl's own policy is left open, as the TCB
        // status is judged against ours (`tcb::rows`). A failure gets dcap-qvl's plain answer.
        match verifier.verify_with_policy(e.quote, &e.collateral.inner, now, &QuotePolicy::claims_only(now)) {
            Ok(claims) => {
                let (status, advisory_ids) = (claims.tcb.status.to_string(), claims.tcb.advisory_ids);
                let expires = claims.earliest_expiration_date;
                self.remember(
                    id,
                    Platform { status: status.clone(), advisory_ids: advisory_ids.clone(), verified_at: now, expires },
                );
                Ok((status, advisory_ids))
            }
            Err(_) => full(),
        }
    }

    /// The result for `raw`'s platform if one is held for `now` and `raw`'s own signature
    /// verifies; `None` sends the caller to the full check.
    fn recall(&self, id: &QuoteIdentity, raw: &[u8], quote: &Quote, now: u64) -> Option<Platform> {
        let known = self.known.lock().ok()?.get(&id.key).cloned()?;
        let fresh = known.verified_at <= now && now < known.expires;
        let recalled = fresh && quote_signature_verifies(raw, quote);
        if recalled {
            self.recalled.fetch_add(1, Ordering::Relaxed);
        }
        recalled.then_some(known)
    }

    fn remember(&self, id: QuoteIdentity, platform: Platform) {
        if let Ok(mut known) = self.known.lock() {
            if known.len() >= MAX_ENTRIES {
                known.clear();
            }
            known.insert(id.key, platform);
        }
    }
}

impl QuoteIdentity {
    /// SHA-256 over the root, the collateral and every byte of the quote except `report_data`
    /// and the signature. `None` when the quote's layout is not the one described above, and
    /// then it is always checked in full.
    fn of(raw: &[u8], quote: &Quote, collateral: &Collateral, root: &TrustRoot) -> Option<Self> {
        let signed = quote.signed_length();
        // The report follows the 48-byte header; a v5 quote puts a 6-byte body header between.
        let report = if quote.header.version == 5 { 48 + 6 } else { 48 };
        let report_data = report + REPORT_DATA_OFFSET;
        if raw.get(report_data..report_data + REPORT_DATA_LEN)? != quote.report.as_td10()?.report_data {
            return None;
        }
        let signature = signed + SIGNATURE_OFFSET;
        if raw.get(signature..signature + SIGNATURE_LEN)? != ecdsa_signature(quote) {
            return None;
        }
        let root_id = match root {
            TrustRoot::Intel => [0; 32],
            TrustRoot::Dev(der) => crate::sha256(der),
        };
        let mut h = Sha256::new();
        h.update(b"svc attest platform v1");
        h.update(root_id);
        for part in collateral_parts(collateral) {
            h.update((part.len() as u64).to_le_bytes());
            h.update(part);
        }
        h.update((raw.len() as u64).to_le_bytes());
        h.update(&raw[..report_data]);
        h.update(&raw[report_data + REPORT_DATA_LEN..signature]);
        h.update(&raw[signature + SIGNATURE_LEN..]);
        Some(QuoteIdentity { key: h.finalize().into() })
    }
}

/// Every field of the collateral, so the key names the collateral the result is under.
fn collateral_parts(c: &Collateral) -> [&[u8]; 10] {
    let c = &c.inner;
    [
        c.pck_crl_issuer_chain.as_bytes(),
        &c.root_ca_crl,
        &c.pck_crl,
        c.tcb_info_issuer_chain.as_bytes(),
        c.tcb_info.as_bytes(),
        &c.tcb_info_signature,
        c.qe_identity_issuer_chain.as_bytes(),
        c.qe_identity.as_bytes(),
        &c.qe_identity_signature,
        c.pck_certificate_chain.as_deref().unwrap_or_default().as_bytes(),
    ]
}

fn ecdsa_signature(quote: &Quote) -> &[u8; SIGNATURE_LEN] {
    match &quote.auth_data {
        AuthData::V3(a) => &a.ecdsa_signature,
        AuthData::V4(a) => &a.ecdsa_signature,
    }
}

/// The attestation key's P-256 signature over the header and report (dcap-qvl's step 7).
fn quote_signature_verifies(raw: &[u8], quote: &Quote) -> bool {
    let key = match &quote.auth_data {
        AuthData::V3(a) => &a.ecdsa_attestation_key,
        AuthData::V4(a) => &a.ecdsa_attestation_key,
    };
    let mut sec1 = [0x04; 65];
    sec1[1..].copy_from_slice(key);
    let (Ok(key), Ok(signature), Some(signed)) = (
        VerifyingKey::from_sec1_bytes(&sec1),
        Signature::from_slice(ecdsa_signature(quote)),
        raw.get(..quote.signed_length()),
    ) else {
        return false;
    };
    key.verify(signed, &signature).is_ok()
}
