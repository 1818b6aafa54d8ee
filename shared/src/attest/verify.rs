//! Evidence against policy: dcap-qvl for the DCAP chain, then our checks, each recorded.

use dcap_qvl::quote::Quote;
use dcap_qvl::verify::QuoteVerifier;
use ed25519_dalek::{Signature, VerifyingKey};

use super::collateral::Collateral;
use super::document::{Check, Verdict, VerificationDocument};
use super::measurements::Mr;
use super::policy::{Binding, Policy, TrustRoot};

/// Quotes above this are not DCAP quotes (tdx.md §2.2).
pub const MAX_QUOTE_LEN: usize = 16 * 1024;
const DEBUG_BIT: u8 = 0x01;

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

struct Doc {
    checks: Vec<Check>,
    first_failure: Option<(Verdict, String)>,
}

impl Doc {
    fn record(
        &mut self,
        name: &'static str,
        ok: bool,
        expected: Option<String>,
        actual: Option<String>,
        detail: Option<String>,
    ) {
        self.checks.push(Check { name, ok, expected, actual, detail });
    }

    fn fail(&mut self, verdict: Verdict, reason: &str) {
        if self.first_failure.is_none() {
            self.first_failure = Some((verdict, reason.to_string()));
        }
    }

    /// Records an equality check; on mismatch the verdict is Reject with `reason`.
    fn compare(&mut self, name: &'static str, reason: &str, expected: String, actual: String) {
        let ok = expected == actual;
        self.record(name, ok, Some(expected), Some(actual), None);
        if !ok {
            self.fail(Verdict::Reject, reason);
        }
    }
}

pub fn verify(evidence: &Evidence<'_>, policy: &Policy, now: u64) -> VerificationDocument {
    let mut doc = Doc { checks: Vec::new(), first_failure: None };
    let mut tcb_status = None;
    let valid_until = evidence.collateral.valid_until;
    run(evidence, policy, now, &mut doc, &mut tcb_status);
    // After a failed DCAP check the later rows still show the quote's values, to help
    // diagnosis; say plainly that nothing vouches for them.
    if let Some(at) = doc.checks.iter().position(|c| c.name == "dcap" && !c.ok) {
        for c in &mut doc.checks[at + 1..] {
            c.detail = Some(match c.detail.take() {
                Some(d) => format!("{d}; unauthenticated: the DCAP check failed"),
                None => "unauthenticated: the DCAP check failed".into(),
            });
        }
    }
    let (verdict, reason) = match doc.first_failure {
        None => (Verdict::Accept, None),
        Some((v, r)) => (v, Some(r)),
    };
    VerificationDocument {
        verdict,
        reason,
        trust_root: policy.root.label(),
        verified_at: now,
        tcb_status,
        valid_until,
        checks: doc.checks,
    }
}

fn run(e: &Evidence<'_>, policy: &Policy, now: u64, doc: &mut Doc, tcb_status: &mut Option<String>) {
    // 1. Shape, before any cryptography.
    if e.quote.len() > MAX_QUOTE_LEN {
        doc.record(
            "size",
            false,
            Some(format!("quote ≤ {MAX_QUOTE_LEN} B")),
            Some(format!("{} B", e.quote.len())),
            None,
        );
        doc.fail(Verdict::Malformed, "oversize");
        return;
    }
    let quote = match Quote::parse(e.quote) {
        Ok(q) => q,
        Err(err) => {
            let unsupported = header_unsupported(e.quote);
            doc.record("quote_parse", false, None, None, Some(format!("{err:#}")));
            match unsupported {
                Some(reason) => doc.fail(Verdict::Unsupported, reason),
                None => doc.fail(Verdict::Malformed, "malformed_quote"),
            }
            return;
        }
    };
    doc.record("quote_parse", true, None, Some(format!("version {}", quote.header.version)), None);
    let is_tdx = quote.header.tee_type == crate::quote::TEE_TYPE_TDX;
    doc.compare(
        "tee_type",
        "not_tdx",
        "TDX (0x81)".into(),
        if is_tdx { "TDX (0x81)".into() } else { format!("{:#x}", quote.header.tee_type) },
    );
    let Some(td) = quote.report.as_td10() else {
        return;
    };
    let collateral = &e.collateral.inner;

    // Both CRLs must be present: an empty one would otherwise surface as a parse error.
    let crls_present = !collateral.pck_crl.is_empty() && !collateral.root_ca_crl.is_empty();
    doc.record("crls_present", crls_present, None, None, None);
    if !crls_present {
        doc.fail(Verdict::Reject, "crl_missing");
        return;
    }

    // 2. The DCAP chain: PCK certificates and CRLs, TCB info, QE identity, signatures.
    let verifier = match &policy.root {
        TrustRoot::Intel => QuoteVerifier::new_prod(),
        TrustRoot::Dev(der) => QuoteVerifier::new(der.clone()),
    };
    match verifier.verify(e.quote, collateral, now) {
        Ok(report) => {
            doc.record("dcap", true, None, Some(report.status.clone()), None);
            let allowed = policy.allowed_tcb_statuses.contains(&report.status);
            doc.record(
                "tcb_status",
                allowed,
                Some(policy.allowed_tcb_statuses.join(" | ")),
                Some(report.status.clone()),
                (!report.advisory_ids.is_empty()).then(|| report.advisory_ids.join(", ")),
            );
            if !allowed {
                doc.fail(Verdict::Reject, "tcb_status_not_allowed");
            }
            *tcb_status = Some(report.status);
        }
        Err(err) => {
            let chain = format!("{err:#}");
            let (verdict, reason) = classify(&chain);
            doc.record("dcap", false, None, None, Some(chain));
            doc.fail(verdict, reason);
        }
    }

    // 3. Our policy on the TD report (values from the parsed quote; if the DCAP check failed
    //    they are unauthenticated, and the verdict already says reject).
    let debug = td.td_attributes[0] & DEBUG_BIT != 0;
    doc.compare("debug_off", "debug_enabled", "DEBUG = 0".into(), format!("DEBUG = {}", u8::from(debug)));

    let m = &policy.measurements;
    let image = m.images.iter().find(|i| i.mrtd == td.mr_td);
    match image {
        None => {
            doc.record("mrtd", false, Some(list(m.images.iter().map(|i| &i.mrtd))), Some(hex::encode(td.mr_td)), None);
            doc.fail(Verdict::Reject, "mrtd_unknown");
        }
        Some(img) => {
            doc.record(
                "mrtd",
                true,
                Some(hex::encode(img.mrtd)),
                Some(hex::encode(td.mr_td)),
                Some(format!("image {}", img.name)),
            );
            doc.compare("rtmr1", "rtmr1_mismatch", hex::encode(img.rtmr1), hex::encode(td.rt_mr1));
            doc.compare("rtmr2", "rtmr2_mismatch", hex::encode(img.rtmr2), hex::encode(td.rt_mr2));
        }
    }
    let rtmr0_ok = m.rtmr0.iter().any(|r| r.value == td.rt_mr0);
    doc.record("rtmr0", rtmr0_ok, Some(list(m.rtmr0.iter().map(|r| &r.value))), Some(hex::encode(td.rt_mr0)), None);
    if !rtmr0_ok {
        doc.fail(Verdict::Reject, "rtmr0_unknown");
    }
    for (name, reason, pinned, actual) in [
        ("mr_config_id", "mrconfigid_not_allowed", &m.mr_config_id, &td.mr_config_id),
        ("mr_owner", "mrowner_not_allowed", &m.mr_owner, &td.mr_owner),
        ("mr_owner_config", "mrownerconfig_not_allowed", &m.mr_owner_config, &td.mr_owner_config),
    ] {
        doc.compare(name, reason, hex::encode(pinned.unwrap_or([0; 48])), hex::encode(actual));
    }

    // 4. The key binding, and freshness.
    match e.binding {
        Some(binding) => doc.compare(
            "report_data",
            "binding_mismatch",
            hex::encode(binding.report_data()),
            hex::encode(td.report_data),
        ),
        None => doc.record(
            "report_data",
            true,
            None,
            Some(hex::encode(td.report_data)),
            Some("binding not requested".into()),
        ),
    }
    if let Some(proof) = e.nonce {
        let ok = match e.binding {
            Some(Binding::Keys { tee, enclave }) => verify_nonce(&proof, &tee, &enclave),
            _ => false,
        };
        doc.record(
            "nonce_signature",
            ok,
            Some(hex::encode(proof.nonce)),
            None,
            (!ok).then(|| "not signed by the bound enclave key".to_string()),
        );
        if !ok {
            doc.fail(Verdict::Reject, "nonce_signature_invalid");
        }
    }
}

fn verify_nonce(proof: &NonceProof, tee: &[u8; 32], enclave: &[u8; 32]) -> bool {
    let Ok(key) = VerifyingKey::from_bytes(enclave) else {
        return false;
    };
    key.verify_strict(&super::nonce_message(&proof.nonce, tee), &Signature::from_bytes(&proof.signature)).is_ok()
}

fn list<'a>(values: impl Iterator<Item = &'a Mr>) -> String {
    let all: Vec<String> = values.map(hex::encode).collect();
    if all.is_empty() { "(none published)".into() } else { all.join(" | ") }
}

/// Intel's QE vendor ID, at header offset 12.
const INTEL_QE_VENDOR: [u8; 16] =
    [0x93, 0x9a, 0x72, 0x33, 0xf7, 0x9c, 0x4c, 0xa9, 0x94, 0x0a, 0x0d, 0xb3, 0x95, 0x7f, 0x06, 0x07];

/// Why a quote that did not parse did not: a recognisable Intel quote header of a version or
/// key type we do not handle is unsupported; anything else is malformed input.
fn header_unsupported(quote: &[u8]) -> Option<&'static str> {
    if quote.get(12..28)? != INTEL_QE_VENDOR {
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

/// Names the reason behind a dcap-qvl error chain.
fn classify(chain: &str) -> (Verdict, &'static str) {
    const TABLE: &[(&str, Verdict, &str)] = &[
        ("Unsupported DCAP quote version", Verdict::Unsupported, "unsupported_quote_version"),
        ("Unsupported DCAP attestation key type", Verdict::Unsupported, "unsupported_attestation_key"),
        ("Unsupported cert type", Verdict::Unsupported, "unsupported_cert_type"),
        ("Unsupported DCAP PCK cert format", Verdict::Unsupported, "unsupported_cert_type"),
        ("Unsupported TEE type", Verdict::Reject, "not_tdx"),
        ("Failed to decode TcbInfo", Verdict::Malformed, "malformed_collateral"),
        ("Failed to decode QeIdentity", Verdict::Malformed, "malformed_collateral"),
        ("Failed to decode", Verdict::Malformed, "malformed_quote"),
        // The root CRL is signed by the trusted root: failing that, the evidence is under another root.
        ("root CA CRL: InvalidCrlSignatureForPublicKey", Verdict::Reject, "untrusted_root"),
        ("CRLs required", Verdict::Reject, "crl_missing"),
        ("Failed to parse PCK CRL", Verdict::Reject, "crl_invalid"),
        ("Failed to parse root CA CRL", Verdict::Reject, "crl_invalid"),
        ("Revoked", Verdict::Reject, "pck_revoked"),
        ("CertExpired", Verdict::Reject, "certificate_expired"),
        ("CertNotValidYet", Verdict::Reject, "certificate_not_yet_valid"),
        ("CrlExpired", Verdict::Reject, "collateral_expired"),
        ("UnknownIssuer", Verdict::Reject, "untrusted_root"),
        ("Failed to verify certificate chain", Verdict::Reject, "certificate_chain_invalid"),
        ("TCBInfo expired", Verdict::Reject, "collateral_expired"),
        ("QE Identity expired", Verdict::Reject, "collateral_expired"),
        ("issue date is in the future", Verdict::Reject, "collateral_not_yet_valid"),
        ("Signature is invalid for tcb_info", Verdict::Reject, "collateral_signature_invalid"),
        ("Signature is invalid for qe_identity", Verdict::Reject, "collateral_signature_invalid"),
        ("Signature is invalid for qe_report", Verdict::Reject, "qe_report_signature_invalid"),
        ("QE report hash mismatch", Verdict::Reject, "qe_report_binding_invalid"),
        ("ISV enclave report signature is invalid", Verdict::Reject, "quote_signature_invalid"),
        ("Debug mode is enabled", Verdict::Reject, "debug_enabled"),
        ("No matching TCB level found", Verdict::Reject, "tcb_level_unmatched"),
        ("TCB status is invalid", Verdict::Reject, "tcb_revoked"),
        ("SEPT_VE_DISABLE", Verdict::Reject, "td_attributes_not_allowed"),
        ("Reserved bits in TD attributes", Verdict::Reject, "td_attributes_not_allowed"),
        ("TD migration is enabled", Verdict::Reject, "td_attributes_not_allowed"),
        ("TD profiling is enabled", Verdict::Reject, "td_attributes_not_allowed"),
        ("SGX", Verdict::Reject, "not_tdx"),
        ("non-TDX TCB info", Verdict::Reject, "collateral_not_tdx"),
        ("Fmspc mismatch", Verdict::Reject, "collateral_wrong_platform"),
        ("QE ISVSVN", Verdict::Reject, "qe_identity_unmatched"),
        ("QE report validation failed", Verdict::Reject, "qe_identity_unmatched"),
        ("Failed to load root ca", Verdict::Reject, "untrusted_root"),
    ];
    TABLE
        .iter()
        .find(|(needle, _, _)| chain.contains(needle))
        .map_or((Verdict::Reject, "dcap_rejected"), |(_, v, r)| (*v, *r))
}
