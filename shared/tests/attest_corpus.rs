//! The negative corpus: mutations of dev-PKI quotes and collateral, each run through the
//! full verifier (dcap-qvl + policy) and each required to fail for its own named reason.
//!
//! The cases are built in `dev_quote::corpus` (feature `corpus`), which the `attest-corpus`
//! exporter also prints for the web verifier's parity test; each test here takes one group.
#![cfg(feature = "verify")]

use dev_quote::corpus::{Entry, Group, group};
use shared::attest::{Verdict, VerificationDocument};

fn expect(name: &str, doc: &VerificationDocument, verdict: Verdict, reason: &str) {
    assert_eq!((doc.verdict, doc.reason.as_deref()), (verdict, Some(reason)), "case `{name}`: {doc:#?}");
}

/// Runs every case of `g`, requires its verdict and reason, and returns the documents.
fn run(g: Group) -> Vec<(Entry, VerificationDocument)> {
    let cases = group(g);
    assert!(!cases.is_empty(), "{g:?} has no cases");
    cases
        .into_iter()
        .map(|e| {
            let doc = e.input.verify();
            match e.reason {
                Some(reason) => expect(&e.name, &doc, e.verdict, reason),
                None => assert!(doc.accepted(), "case `{}`: {doc:#?}", e.name),
            }
            (e, doc)
        })
        .collect()
}

#[test]
fn baseline_v4_and_v5_are_accepted() {
    // V4, V5, V5Td10, and OutOfDate where the policy allows it.
    let docs = run(Group::Baseline);
    assert_eq!(docs.len(), 4);
    for (e, doc) in docs {
        assert!(doc.accepted(), "{}: {doc:#?}", e.name);
        assert!(doc.checks.iter().all(|c| c.ok), "{}: {doc:#?}", e.name);
    }
}

#[test]
fn truncations_at_every_structure_boundary_are_malformed() {
    let docs = run(Group::Truncation);
    for (e, doc) in &docs {
        assert_eq!(doc.verdict, Verdict::Malformed, "{}: {doc:#?}", e.name);
        assert_eq!(doc.reason.as_deref(), Some("malformed_quote"), "{}", e.name);
    }
    assert!(docs.len() >= 25);
}

#[test]
fn bit_flips_in_each_signed_region() {
    let docs = run(Group::BitFlip);
    assert_eq!(docs.len(), 12);
    assert!(docs.iter().all(|(_, doc)| doc.verdict == Verdict::Reject));
}

#[test]
fn chain_collateral_and_tcb_failures() {
    let docs = run(Group::Chain);
    assert_eq!(docs.len(), 9);
    for (e, doc) in docs {
        assert_eq!(doc.verdict, Verdict::Reject, "{}", e.name);
        // Values after a failed DCAP check are flagged as unauthenticated.
        if doc.check("dcap").is_some_and(|c| !c.ok) {
            let mrtd = doc.check("mrtd").unwrap();
            assert!(mrtd.detail.as_deref().unwrap_or("").contains("unauthenticated"), "{}: {mrtd:?}", e.name);
        }
    }
}

#[test]
fn tampered_collateral_is_refused() {
    let docs = run(Group::Collateral);
    let names: Vec<&str> = docs.iter().map(|(e, _)| e.name.as_str()).collect();
    assert_eq!(
        names,
        ["tcb_info edited", "qe_identity edited", "missing root CRL", "collateral not JSON", "tcb_info not JSON"]
    );
    // The edits applied: each case's collateral differs from the intact one.
    let (_, _, intact) = dev_quote::corpus::Case::good().materials();
    assert!(docs.iter().all(|(e, _)| e.input.collateral != intact));
}

#[test]
fn td_policy_failures() {
    let docs = run(Group::TdPolicy);
    assert_eq!(docs.len(), 13);
    // A pinned MRCONFIGID that matches is accepted; every other case is rejected.
    let (accepted, rejected): (Vec<_>, Vec<_>) = docs.iter().partition(|(_, doc)| doc.accepted());
    assert_eq!(accepted.len(), 1);
    assert_eq!(accepted[0].0.name, "MRCONFIGID pinned and matching");
    assert!(rejected.iter().all(|(_, doc)| doc.verdict == Verdict::Reject));
}

#[test]
fn binding_and_freshness_failures() {
    let docs = run(Group::Binding);
    assert_eq!(docs.len(), 7);
    assert!(docs.iter().all(|(_, doc)| doc.verdict == Verdict::Reject));
}

#[test]
fn sgx_and_oversize() {
    let docs = run(Group::SgxOversize);
    let got: Vec<(&str, Verdict)> = docs.iter().map(|(e, doc)| (e.name.as_str(), doc.verdict)).collect();
    assert_eq!(
        got,
        [
            ("SGX quote", Verdict::Reject),
            ("oversize quote", Verdict::Malformed),
            ("oversize collateral", Verdict::Malformed)
        ]
    );
}

/// The cases added for other verifiers' parity (the web page's) hold here too.
#[test]
fn parity_cases() {
    run(Group::Parity);
}

/// The real samples as the exporter prints them agree with `attest_samples.rs`.
#[test]
fn samples_as_exported() {
    run(Group::Samples);
}
