//! Evidence against policy: parse the evidence, run each policy on what the ones before it
//! established, and assemble the verification document from their results in order.

use super::document::{Outcome, Verdict, VerificationDocument};
// Also reachable at their former paths here, which callers use.
pub use super::evidence::{Evidence, MAX_QUOTE_LEN, NonceProof};
use super::policy::{Policy, binding, measurements, nonce, tcb, td_attributes};

pub fn verify(evidence: &Evidence<'_>, policy: &Policy, now: u64) -> VerificationDocument {
    verify_with(evidence, policy, now, &|| tcb::dcap(evidence.quote, &evidence.collateral.inner, policy, now))
}

/// [`verify`], with the DCAP result from `dcap` (`platforms` may have it from before).
pub(crate) fn verify_with(e: &Evidence<'_>, policy: &Policy, now: u64, dcap: &tcb::Dcap<'_>) -> VerificationDocument {
    let mut results = Outcome::default();
    let tcb_status = run(e, policy, dcap, &mut results);
    let mut checks = results.checks;
    // After a failed DCAP check the later rows still show the quote's values, to help
    // diagnosis; say plainly that nothing vouches for them.
    if let Some(at) = checks.iter().position(|c| c.name == "dcap" && !c.ok) {
        for c in &mut checks[at + 1..] {
            c.detail = Some(match c.detail.take() {
                Some(d) => format!("{d}; unauthenticated: the DCAP check failed"),
                None => "unauthenticated: the DCAP check failed".into(),
            });
        }
    }
    let (verdict, reason) = match results.failure {
        None => (Verdict::Accept, None),
        Some((v, r)) => (v, Some(r.to_string())),
    };
    VerificationDocument {
        verdict,
        reason,
        trust_root: policy.root.label(),
        verified_at: now,
        tcb_status,
        valid_until: e.collateral.valid_until,
        checks,
    }
}

/// The policies in order; returns dcap-qvl's TCB status when the chain verified.
fn run(e: &Evidence<'_>, policy: &Policy, dcap: &tcb::Dcap<'_>, results: &mut Outcome) -> Option<String> {
    // 1. Shape, before any cryptography.
    let (parsed, quote) = super::evidence::parse(e.quote);
    results.extend(parsed);
    let td = quote.as_ref()?.report.as_td10()?;

    // 2. The DCAP chain: PCK certificates and CRLs, TCB info, QE identity, signatures.
    let crls = tcb::crls_present(&e.collateral.inner);
    let missing = crls.failure.is_some();
    results.extend(crls);
    if missing {
        return None;
    }
    let (dcap, tcb_status) = tcb::rows(dcap(), policy);
    results.extend(dcap);
    results.extend(tcb::evaluation_floor(e.collateral, policy.measurements.min_tcb_evaluation_data_number));

    // 3. Our policy on the TD report (values from the parsed quote; if the DCAP check failed
    //    they are unauthenticated, and the verdict already says reject).
    results.extend(td_attributes::check(td));
    results.extend(measurements::check(&policy.measurements, td));

    // 4. The key binding, and freshness.
    results.extend(binding::check(e.binding, td));
    results.extend(nonce::check(e.nonce.as_ref(), e.binding));
    tcb_status
}
