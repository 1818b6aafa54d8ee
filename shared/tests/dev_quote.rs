//! Dev quotes through dcap-qvl's real verification path, at a fixed time.
#![cfg(feature = "verify")]

use dcap_qvl::QuoteCollateralV3;
use dcap_qvl::quote::{Quote, Report};
use dcap_qvl::verify::{QuoteVerifier, VerifiedReport};
use dev_quote::{CollateralOptions, DevPki, PkiOptions, QuoteVersion, TcbStatus, TdReport};

const NOW: u64 = 1_800_000_000; // 2027-01-15
const SEED: [u8; 32] = [7; 32];

fn chosen_report() -> TdReport {
    let mut report = TdReport { mr_td: [0x11; 48], ..TdReport::default() };
    for (i, rtmr) in report.rtmr.iter_mut().enumerate() {
        *rtmr = [0x20 + i as u8; 48];
    }
    report.report_data = std::array::from_fn(|i| i as u8);
    report
}

fn collateral(pki: &DevPki, options: &CollateralOptions) -> QuoteCollateralV3 {
    serde_json::from_slice(&pki.collateral(options)).expect("collateral JSON")
}

/// Verifies under the dev root; an error as dcap-qvl's whole context chain.
fn verify(pki: &DevPki, quote: &[u8], collateral: &QuoteCollateralV3) -> Result<VerifiedReport, String> {
    QuoteVerifier::new(pki.root_cert_der()).verify(quote, collateral, NOW).map_err(|e| format!("{e:#}"))
}

#[track_caller]
fn assert_rejected(result: Result<VerifiedReport, String>, expected: &str) {
    match result {
        Ok(report) => panic!("accepted (status {}), expected {expected:?}", report.status),
        Err(message) => {
            eprintln!("rejected: {message}");
            assert!(message.contains(expected), "rejected for {message:?}, expected {expected:?}");
        }
    }
}

fn default_quote(pki: &DevPki) -> Vec<u8> {
    pki.quote(&chosen_report(), QuoteVersion::V4)
}

#[test]
fn v4_and_v5_verify_up_to_date_with_the_chosen_values() {
    let pki = DevPki::from_seed(&SEED);
    let coll = collateral(&pki, &CollateralOptions::default());
    let chosen = chosen_report();
    for version in [QuoteVersion::V4, QuoteVersion::V5, QuoteVersion::V5Td10] {
        let verified = verify(&pki, &pki.quote(&chosen, version), &coll).expect("verifies");
        assert_eq!(verified.status, "UpToDate", "{version:?}");
        assert!(verified.advisory_ids.is_empty());
        match (version, &verified.report) {
            (QuoteVersion::V4 | QuoteVersion::V5Td10, Report::TD10(_)) => {}
            (QuoteVersion::V5, Report::TD15(td15)) => {
                assert_eq!(td15.tee_tcb_svn2, chosen.tee_tcb_svn);
                assert_eq!(td15.mr_service_td, [0; 48]);
            }
            (version, report) => panic!("{version:?} gave {report:?}"),
        }
        let td = verified.report.as_td10().expect("TD report");
        assert_eq!(td.mr_td, chosen.mr_td);
        assert_eq!([td.rt_mr0, td.rt_mr1, td.rt_mr2, td.rt_mr3], chosen.rtmr);
        assert_eq!(td.report_data, chosen.report_data);
        assert_eq!(td.td_attributes, chosen.td_attributes);
    }
}

#[test]
fn strict_policy_accepts_a_dev_quote() {
    let pki = DevPki::from_seed(&SEED);
    let coll = collateral(&pki, &CollateralOptions::default());
    let claims = QuoteVerifier::new(pki.root_cert_der())
        .verify_with_policy(&default_quote(&pki), &coll, NOW, &dcap_qvl::QuotePolicy::strict(NOW))
        .expect("strict policy");
    assert_eq!(claims.tcb.status, dcap_qvl::TcbStatus::UpToDate);
}

#[test]
fn intel_root_rejects_a_dev_quote() {
    let pki = DevPki::from_seed(&SEED);
    let coll = collateral(&pki, &CollateralOptions::default());
    let quote = default_quote(&pki);
    let expected = "Failed to parse root CA CRL: InvalidCrlSignatureForPublicKey";
    let prod = dcap_qvl::verify::verify(&quote, &coll, NOW).map_err(|e| format!("{e:#}"));
    assert_rejected(prod, expected);
    let prod = QuoteVerifier::new_prod().verify(&quote, &coll, NOW).map_err(|e| format!("{e:#}"));
    assert_rejected(prod, expected);
}

#[test]
fn every_certificate_is_labelled_dev() {
    let pki = DevPki::from_seed(&SEED);
    let quote = Quote::parse(&default_quote(&pki)).expect("parses");
    let chain = dcap_qvl::intel::extract_cert_chain(&quote).expect("PCK chain");
    assert_eq!(chain.len(), 3);
    assert_eq!(chain[2], pki.root_cert_der());
    for cert in &chain {
        assert!(cert.windows(7).any(|w| w == b"SVC DEV"));
    }
    assert!(pki.root_cert_pem().starts_with("-----BEGIN CERTIFICATE-----\n"));
    // The made-up platform, with the flags strict policies reject turned off.
    let ext = dcap_qvl::intel::parse_pck_extension(&chain[0]).expect("SGX extension");
    assert_eq!(ext.fmspc, [0xDE, 0x70, 0, 0, 0, 0]);
    assert_eq!((ext.pce_svn, ext.sgx_type), (13, 1));
    assert_eq!([ext.dynamic_platform, ext.cached_keys, ext.smt_enabled], [Some(false); 3]);
}

#[test]
fn same_seed_same_bytes() {
    let (a, b) = (DevPki::from_seed(&SEED), DevPki::from_seed(&SEED));
    let options = CollateralOptions::default();
    assert_eq!(a.root_cert_der(), b.root_cert_der());
    assert_eq!(a.collateral(&options), b.collateral(&options));
    assert_eq!(default_quote(&a), default_quote(&b));
    assert_ne!(a.root_cert_der(), DevPki::from_seed(&[8; 32]).root_cert_der());
}

#[test]
fn out_of_date_collateral_gives_out_of_date() {
    let pki = DevPki::from_seed(&SEED);
    let options = CollateralOptions { tcb_status: TcbStatus::OutOfDate, ..Default::default() };
    let verified = verify(&pki, &default_quote(&pki), &collateral(&pki, &options)).expect("verifies");
    assert_eq!(verified.status, "OutOfDate");
}

#[test]
fn collateral_outside_its_window_is_rejected() {
    let pki = DevPki::from_seed(&SEED);
    let quote = default_quote(&pki);
    let expired = CollateralOptions { next_update: NOW - 1, ..Default::default() };
    // The CRLs share the collateral's nextUpdate and are checked first.
    assert_rejected(verify(&pki, &quote, &collateral(&pki, &expired)), "CrlExpired");
    let not_yet = CollateralOptions { issue_date: NOW + 1, ..Default::default() };
    assert_rejected(verify(&pki, &quote, &collateral(&pki, &not_yet)), "TCBInfo issue date is in the future");
}

#[test]
fn revoked_pck_is_rejected() {
    let pki = DevPki::with_options(&SEED, PkiOptions { revoke_pck: true, ..Default::default() });
    let coll = collateral(&pki, &CollateralOptions::default());
    assert_rejected(verify(&pki, &default_quote(&pki), &coll), "Failed to verify certificate chain: CertRevoked");
}

#[test]
fn expired_pck_is_rejected() {
    let pki = DevPki::with_options(&SEED, PkiOptions { pck_not_after: NOW - 1, ..Default::default() });
    let coll = collateral(&pki, &CollateralOptions::default());
    assert_rejected(verify(&pki, &default_quote(&pki), &coll), "Failed to verify certificate chain: CertExpired");
}

#[test]
fn missing_pck_crl_is_rejected() {
    let pki = DevPki::from_seed(&SEED);
    let quote = default_quote(&pki);
    let omitted = CollateralOptions { omit_pck_crl: true, ..Default::default() };
    assert_rejected(verify(&pki, &quote, &collateral(&pki, &omitted)), "Failed to parse PCK CRL");
    // A well-formed CRL from the wrong issuer leaves the PCK leaf's status unknown.
    let mut wrong = collateral(&pki, &CollateralOptions::default());
    wrong.pck_crl = wrong.root_ca_crl.clone();
    assert_rejected(verify(&pki, &quote, &wrong), "Failed to verify certificate chain: UnknownRevocationStatus");
}

#[test]
fn flipped_bits_are_rejected() {
    let pki = DevPki::from_seed(&SEED);
    let coll = collateral(&pki, &CollateralOptions::default());
    let quote = default_quote(&pki);
    let flipped = |offset: usize| {
        let mut quote = quote.clone();
        quote[offset] ^= 0x01;
        verify(&pki, &quote, &coll)
    };
    // v4: header 48, body 584, auth length 4, ISV signature 64, attestation key 64,
    // certification data type and size 6, then the QE report (384) and its signature (64).
    let qe_report = 48 + 584 + 4 + 64 + 64 + 6;
    assert_rejected(flipped(48 + 136), "ISV enclave report signature is invalid"); // MRTD
    assert_rejected(flipped(qe_report + 258), "Signature is invalid for qe_report in quote"); // ISVSVN
    assert_rejected(flipped(qe_report + 384 + 10), "Signature is invalid for qe_report in quote");
}

#[test]
fn debug_td_is_rejected() {
    let pki = DevPki::from_seed(&SEED);
    let coll = collateral(&pki, &CollateralOptions::default());
    let mut report = chosen_report();
    report.td_attributes[0] |= 0x01;
    assert_rejected(verify(&pki, &pki.quote(&report, QuoteVersion::V5), &coll), "Debug mode is enabled");
}
