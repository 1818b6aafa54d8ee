//! The DCAP policy: dcap-qvl checks the PCK chain and CRLs, TCB info, QE identity and the
//! signatures under the policy's trust root; we allow only the policy's TCB statuses and name
//! each dcap-qvl failure.

use dcap_qvl::QuoteCollateralV3;
use dcap_qvl::verify::QuoteVerifier;

use super::{Policy, TrustRoot};
use crate::attest::collateral::Collateral;
use crate::attest::document::{Outcome, Verdict};

/// Both CRLs must be present: an empty one would otherwise surface as a parse error.
pub(crate) fn crls_present(collateral: &QuoteCollateralV3) -> Outcome {
    let mut out = Outcome::default();
    let present = !collateral.pck_crl.is_empty() && !collateral.root_ca_crl.is_empty();
    out.record("crls_present", present, None, None, None);
    if !present {
        out.fail(Verdict::Reject, "crl_missing");
    }
    out
}

/// Row `tcb_evaluation`, when the reference values publish a minimum: the collateral's TCB
/// info must be of that evaluation or a later one. Intel keeps signing TCB info from before a
/// TCB recovery until it expires, and that info still rates unpatched platforms `UpToDate`.
pub(crate) fn evaluation_floor(collateral: &Collateral, minimum: Option<u32>) -> Outcome {
    let mut out = Outcome::default();
    let Some(minimum) = minimum else { return out };
    let number = collateral.tcb_evaluation.as_ref().map(|e| e.number);
    let ok = number.is_some_and(|n| n >= minimum);
    out.record("tcb_evaluation", ok, Some(format!(">= {minimum}")), number.map(|n| n.to_string()), None);
    if !ok {
        out.fail(Verdict::Reject, "tcb_evaluation_below_minimum");
    }
    out
}

/// What dcap-qvl says of a quote: its TCB status and advisories, or its error chain.
pub(crate) type DcapResult = Result<(String, Vec<String>), String>;
/// Where `verify::verify_with` gets a quote's DCAP result.
pub(crate) type Dcap<'a> = dyn Fn() -> DcapResult + 'a;

/// dcap-qvl's check of `quote` under the policy's trust root.
pub(crate) fn dcap(quote: &[u8], collateral: &QuoteCollateralV3, policy: &Policy, now: u64) -> DcapResult {
    let verifier = match &policy.root {
        TrustRoot::Intel => QuoteVerifier::new_prod(),
        TrustRoot::Dev(der) => QuoteVerifier::new(der.clone()),
    };
    verifier.verify(quote, collateral, now).map(|r| (r.status, r.advisory_ids)).map_err(|e| format!("{e:#}"))
}

/// Rows `dcap` and, when the chain verified, `tcb_status`; with the TCB status dcap-qvl gave.
pub(crate) fn rows(result: DcapResult, policy: &Policy) -> (Outcome, Option<String>) {
    let mut out = Outcome::default();
    match result {
        Ok((status, advisory_ids)) => {
            out.record("dcap", true, None, Some(status.clone()), None);
            let allowed = policy.allowed_tcb_statuses.contains(&status);
            out.record(
                "tcb_status",
                allowed,
                Some(policy.allowed_tcb_statuses.join(" | ")),
                Some(status.clone()),
                (!advisory_ids.is_empty()).then(|| advisory_ids.join(", ")),
            );
            if !allowed {
                out.fail(Verdict::Reject, "tcb_status_not_allowed");
            }
            (out, Some(status))
        }
        Err(chain) => {
            let (verdict, reason) = classify(&chain);
            out.record("dcap", false, None, None, Some(chain));
            out.fail(verdict, reason);
            (out, None)
        }
    }
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
