//! The policy verifier on real DCAP quotes at their fixed verification times
//! (`../shared/test-vectors/dcap-qvl-samples/README.md`).
#![cfg(feature = "verify")]

use dcap_qvl::quote::Quote;
use dev_quote::corpus::measurements_of;
use shared::attest::measurements::Measurements;
use shared::attest::{Binding, Collateral, CollateralError, Evidence, Policy, TrustRoot, Verdict, verify};

const SAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/test-vectors/dcap-qvl-samples");

fn read(name: &str) -> Vec<u8> {
    std::fs::read(format!("{SAMPLES}/{name}")).unwrap()
}

fn check(quote_file: &str, collateral_file: &str, now: u64) -> shared::attest::VerificationDocument {
    check_with_minimum(quote_file, collateral_file, now, None)
}

fn check_with_minimum(
    quote_file: &str,
    collateral_file: &str,
    now: u64,
    min_tcb_evaluation: Option<u32>,
) -> shared::attest::VerificationDocument {
    let quote = read(quote_file);
    let collateral = Collateral::from_json(&String::from_utf8(read(collateral_file)).unwrap()).unwrap();
    let mut measurements = measurements_of(&quote);
    measurements.min_tcb_evaluation_data_number = min_tcb_evaluation;
    let policy = Policy::new(TrustRoot::Intel, measurements);
    // The samples bind keys we do not have: the binding check must be the only failure.
    let evidence = Evidence {
        quote: &quote,
        collateral: &collateral,
        binding: Some(Binding::PublicKey(shared::keys::TeeKey([0; 32]))),
        nonce: None,
    };
    verify(&evidence, &policy, now)
}

#[test]
fn v4_sample_is_up_to_date_under_intel_root() {
    let doc = check("tdx_quote", "tdx_quote_collateral.json", 1_750_377_600);
    assert!(doc.check("dcap").unwrap().ok, "{doc:#?}");
    assert_eq!(doc.tcb_status.as_deref(), Some("UpToDate"));
    assert_eq!(doc.trust_root, "intel");
    for name in ["tee_type", "debug_off", "mrtd", "rtmr1", "rtmr2", "rtmr0", "mr_config_id", "tcb_status"] {
        assert!(doc.check(name).unwrap().ok, "{name}: {doc:#?}");
    }
    assert_eq!((doc.verdict, doc.reason.as_deref()), (Verdict::Reject, Some("binding_mismatch")));
    assert!(doc.check("mrtd").unwrap().actual.as_deref().unwrap().starts_with("91eb2b44"));
    assert!(doc.valid_until.unwrap() > 1_750_377_600);
}

/// Published reference values may name the oldest TCB evaluation accepted: the sample's
/// collateral is of evaluation 17, valid and signed by Intel, and still refused under 18.
#[test]
fn collateral_below_the_published_tcb_evaluation_is_refused() {
    let doc = check_with_minimum("tdx_quote", "tdx_quote_collateral.json", 1_750_377_600, Some(18));
    assert_eq!((doc.verdict, doc.reason.as_deref()), (Verdict::Reject, Some("tcb_evaluation_below_minimum")));
    let row = doc.check("tcb_evaluation").unwrap();
    assert_eq!((row.ok, row.actual.as_deref()), (false, Some("17")));
    assert!(doc.check("dcap").unwrap().ok, "Intel's signature is fine; only the evaluation is too old");
    let doc = check_with_minimum("tdx_quote", "tdx_quote_collateral.json", 1_750_377_600, Some(17));
    assert!(doc.check("tcb_evaluation").unwrap().ok);
    assert_eq!(doc.reason.as_deref(), Some("binding_mismatch"));
    assert!(check("tdx_quote", "tdx_quote_collateral.json", 1_750_377_600).check("tcb_evaluation").is_none());
}

#[test]
fn v4_sample_later_has_expired_collateral() {
    let doc = check("tdx_quote", "tdx_quote_collateral.json", 1_771_459_200);
    assert_eq!((doc.verdict, doc.reason.as_deref()), (Verdict::Reject, Some("collateral_expired")));
}

#[test]
fn v5_td15ex_sample_is_up_to_date() {
    let doc = check("tdx_quote_td15ex", "tdx_quote_td15ex_collateral.json", 1_791_504_000);
    assert!(doc.check("dcap").unwrap().ok, "{doc:#?}");
    assert_eq!(doc.tcb_status.as_deref(), Some("UpToDate"));
    // Its MRCONFIGID is non-zero: accepted only because the measurements pin it.
    assert!(doc.check("mr_config_id").unwrap().ok);
    assert_eq!(doc.reason.as_deref(), Some("binding_mismatch"));
}

#[test]
fn outdated_v5_sample_is_rejected_for_its_tcb_level() {
    let doc = check("tdx_quote_outdated", "tdx_quote_outdated_collateral.json", 1_771_459_200);
    assert_eq!((doc.verdict, doc.reason.as_deref()), (Verdict::Reject, Some("tcb_level_unmatched")), "{doc:#?}");
    assert!(doc.check("dcap").unwrap().detail.as_deref().unwrap().contains("No matching TCB level"));
}

#[test]
fn sgx_sample_is_rejected_as_not_tdx() {
    let doc = check_sgx();
    assert_eq!((doc.verdict, doc.reason.as_deref()), (Verdict::Reject, Some("not_tdx")), "{doc:#?}");
}

fn check_sgx() -> shared::attest::VerificationDocument {
    let quote = read("sgx_quote");
    let collateral = Collateral::from_json(&String::from_utf8(read("sgx_quote_collateral.json")).unwrap()).unwrap();
    let m = Measurements::pinning_nothing();
    let evidence = Evidence {
        quote: &quote,
        collateral: &collateral,
        binding: Some(Binding::PublicKey(shared::keys::TeeKey([0; 32]))),
        nonce: None,
    };
    verify(&evidence, &Policy::new(TrustRoot::Intel, m), 1_750_377_600)
}

#[test]
fn hex_samples_parse() {
    for name in ["tdx-quote.hex", "quote-from-tappd.hex"] {
        let text = String::from_utf8(read(name)).unwrap();
        let bytes = hex::decode(text.trim().trim_start_matches("0x")).unwrap();
        let q = Quote::parse(&bytes).unwrap();
        assert_eq!(q.header.tee_type, 0x81, "{name}");
        let td = q.report.as_td10().unwrap();
        // The tappd quote carries dstack's app events in RTMR3.
        if name == "quote-from-tappd.hex" {
            assert_ne!(td.rt_mr3, [0; 48]);
        }
        assert_eq!(shared::quote::report_data(&bytes).unwrap(), td.report_data);
    }
}

#[test]
fn malformed_and_oversize_inputs() {
    let collateral = Collateral::from_json(&String::from_utf8(read("tdx_quote_collateral.json")).unwrap()).unwrap();
    let m = measurements_of(&read("tdx_quote"));
    let policy = Policy::new(TrustRoot::Intel, m);
    let quote = read("tdx_quote");
    let mut v9 = quote.clone();
    v9[0] = 9;
    let mut p384 = quote.clone();
    p384[2] = 3; // attestation key type 3 (ECDSA-P384)
    // Text is not a quote of an unknown version: it is malformed.
    let text = b"# not a quote, just some text that is long enough to have a header".repeat(2);
    let cases: [(&[u8], Verdict, &str); 5] = [
        (&[0u8; 20_000], Verdict::Malformed, "oversize"),
        (&quote[..100], Verdict::Malformed, "malformed_quote"),
        (&v9, Verdict::Unsupported, "unsupported_quote_version"),
        (&p384, Verdict::Unsupported, "unsupported_attestation_key"),
        (&text, Verdict::Malformed, "malformed_quote"),
    ];
    for (input, verdict, reason) in cases {
        let binding = Some(Binding::PublicKey(shared::keys::TeeKey([0; 32])));
        let doc =
            verify(&Evidence { quote: input, collateral: &collateral, binding, nonce: None }, &policy, 1_750_377_600);
        assert_eq!((doc.verdict, doc.reason.as_deref()), (verdict, Some(reason)), "{doc:#?}");
    }
    assert_eq!(Collateral::from_json("{").unwrap_err().reason(), "malformed_collateral");
    assert_eq!(Collateral::from_json(&" ".repeat((1 << 20) + 1)).unwrap_err(), CollateralError::Oversize);
}

/// The TCB evaluation each real collateral carries, read from its signed TCB info: the
/// client's rollback check compares these numbers per platform.
#[test]
fn collateral_names_its_tcb_evaluation() {
    let evaluation = |file: &str| {
        let collateral = Collateral::from_json(&String::from_utf8(read(file)).unwrap()).unwrap();
        let e = collateral.tcb_evaluation.expect("real TCB info has fmspc and tcbEvaluationDataNumber");
        (e.fmspc, e.number)
    };
    assert_eq!(evaluation("tdx_quote_collateral.json").1, 17);
    assert_eq!(evaluation("tdx_quote_outdated_collateral.json").1, 18);
    assert_eq!(evaluation("tdx_quote_td15ex_collateral.json").1, 20);
    // Two evaluations of one platform (lowercased), and another platform.
    assert_eq!(evaluation("tdx_quote_collateral.json").0, "b0c06f000000");
    assert_eq!(evaluation("tdx_quote_td15ex_collateral.json").0, "b0c06f000000");
    assert_eq!(evaluation("tdx_quote_outdated_collateral.json").0, "90c06f000000");
}
