//! The negative corpus: mutations of dev-PKI quotes and collateral, each run through the
//! full verifier (dcap-qvl + policy) and each required to fail for its own named reason.
#![cfg(feature = "verify")]

use dev_quote::{CollateralOptions, DevPki, PkiOptions, QuoteVersion, TcbStatus, TdReport};
use ed25519_dalek::{Signer, SigningKey};
use shared::attest::measurements::{ImageMeasurement, Measurements, Rtmr0Entry};
use shared::attest::verify::NonceProof;
use shared::attest::{Binding, Collateral, Evidence, Policy, TrustRoot, Verdict, VerificationDocument, verify};
use shared::keys::{EnclaveKey, TeeKey};

const SEED: [u8; 32] = [7; 32];
const NOW: u64 = 1_800_000_000;
const TEE: [u8; 32] = [0x11; 32];
const NONCE: [u8; 32] = [0x22; 32];

fn enclave_key() -> SigningKey {
    SigningKey::from_bytes(&[0x33; 32])
}

fn binding() -> Binding {
    Binding::Keys { tee: TeeKey(TEE), enclave: EnclaveKey(enclave_key().verifying_key().to_bytes()) }
}

fn measurements() -> Measurements {
    Measurements {
        schema_version: 1,
        images: vec![ImageMeasurement { name: "test".into(), mrtd: [0xa0; 48], rtmr1: [0xa2; 48], rtmr2: [0xa3; 48] }],
        rtmr0: vec![Rtmr0Entry { platform: "test".into(), value: [0xa1; 48] }],
        mr_config_id: None,
        mr_owner: None,
        mr_owner_config: None,
        min_tcb_evaluation_data_number: None,
    }
}

fn report() -> TdReport {
    TdReport {
        mr_td: [0xa0; 48],
        rtmr: [[0xa1; 48], [0xa2; 48], [0xa3; 48], [0; 48]],
        report_data: binding().report_data(),
        ..TdReport::default()
    }
}

fn proof() -> NonceProof {
    let msg = shared::freshness::nonce_message(&NONCE, &TEE);
    NonceProof { nonce: NONCE, signature: enclave_key().sign(&msg).to_bytes() }
}

/// One case: everything a verification needs, each part mutable.
#[derive(Clone)]
struct Case {
    pki_options: PkiOptions,
    report: TdReport,
    version: QuoteVersion,
    collateral: CollateralOptions,
    policy_root: Option<TrustRoot>,
    measurements: Measurements,
    binding: Binding,
    nonce: Option<NonceProof>,
    allowed: Vec<String>,
}

impl Case {
    fn good() -> Self {
        Case {
            pki_options: PkiOptions::default(),
            report: report(),
            version: QuoteVersion::V4,
            collateral: CollateralOptions::default(),
            policy_root: None,
            measurements: measurements(),
            binding: binding(),
            nonce: Some(proof()),
            allowed: vec!["UpToDate".into()],
        }
    }

    fn materials(&self) -> (DevPki, Vec<u8>, String) {
        let pki = DevPki::with_options(&SEED, self.pki_options);
        let quote = pki.quote(&self.report, self.version);
        let collateral = String::from_utf8(pki.collateral(&self.collateral)).unwrap();
        (pki, quote, collateral)
    }

    fn run_with(&self, quote: &[u8], collateral: &str, pki: &DevPki) -> VerificationDocument {
        let collateral = match Collateral::from_json(collateral) {
            Ok(c) => c,
            Err(e) => {
                return VerificationDocument::refused(
                    Verdict::Malformed,
                    e.reason(),
                    e.to_string(),
                    String::new(),
                    NOW,
                );
            }
        };
        let collateral = &collateral;
        let root = self.policy_root.clone().unwrap_or_else(|| TrustRoot::Dev(pki.root_cert_der()));
        let policy =
            Policy { root, allowed_tcb_statuses: self.allowed.clone(), measurements: self.measurements.clone() };
        let evidence = Evidence { quote, collateral, binding: Some(self.binding), nonce: self.nonce };
        verify(&evidence, &policy, NOW)
    }

    fn run(&self) -> VerificationDocument {
        let (pki, quote, collateral) = self.materials();
        self.run_with(&quote, &collateral, &pki)
    }
}

fn expect(name: &str, doc: &VerificationDocument, verdict: Verdict, reason: &str) {
    assert_eq!((doc.verdict, doc.reason.as_deref()), (verdict, Some(reason)), "case `{name}`: {doc:#?}");
}

#[test]
fn baseline_v4_and_v5_are_accepted() {
    for version in [QuoteVersion::V4, QuoteVersion::V5, QuoteVersion::V5Td10] {
        let doc = Case { version, ..Case::good() }.run();
        assert!(doc.accepted(), "{version:?}: {doc:#?}");
        assert!(doc.checks.iter().all(|c| c.ok));
    }
    // OutOfDate is accepted only where the policy allows it.
    let mut c = Case::good();
    c.collateral.tcb_status = TcbStatus::OutOfDate;
    c.allowed = vec!["UpToDate".into(), "OutOfDate".into()];
    assert!(c.run().accepted());
}

/// Offsets of a v4 quote's structure boundaries (tdx.md §3.1).
fn v4_boundaries(len: usize) -> Vec<usize> {
    let body_end = 48 + 584;
    let sig_data = body_end + 4;
    let qe_cert = sig_data + 64 + 64;
    let qe_report = qe_cert + 2 + 4;
    let qe_sig = qe_report + 384;
    let auth = qe_sig + 64;
    let auth_data = auth + 2;
    let cert = auth_data + 32;
    vec![
        0,
        1,
        20,
        47,
        48,
        200,
        body_end - 1,
        body_end,
        body_end + 2,
        sig_data,
        sig_data + 63,
        sig_data + 64,
        qe_cert - 1,
        qe_cert,
        qe_cert + 2,
        qe_report,
        qe_report + 100,
        qe_sig,
        qe_sig + 10,
        auth,
        auth_data,
        auth_data + 16,
        cert,
        cert + 2,
        cert + 6,
        cert + 500,
        len - 1,
    ]
}

#[test]
fn truncations_at_every_structure_boundary_are_malformed() {
    let c = Case::good();
    let (pki, quote, collateral) = c.materials();
    let mut cases = 0;
    for at in v4_boundaries(quote.len()) {
        let doc = c.run_with(&quote[..at], &collateral, &pki);
        assert_eq!(doc.verdict, Verdict::Malformed, "truncated at {at}: {doc:#?}");
        assert_eq!(doc.reason.as_deref(), Some("malformed_quote"), "truncated at {at}");
        cases += 1;
    }
    assert!(cases >= 25);
}

#[test]
fn bit_flips_in_each_signed_region() {
    let c = Case::good();
    let (pki, quote, collateral) = c.materials();
    let body_end = 48 + 584;
    let att_key = body_end + 4 + 64;
    let qe_report = att_key + 64 + 6;
    let qe_sig = qe_report + 384;
    let auth_data = qe_sig + 64 + 2;
    let cases = [
        ("header: qe_svn", 8, "quote_signature_invalid"),
        ("header: user data", 40, "quote_signature_invalid"),
        ("body: tee_tcb_svn", 48 + 2, "quote_signature_invalid"),
        ("body: MRTD", 48 + 136, "quote_signature_invalid"),
        ("body: RTMR1", 48 + 376, "quote_signature_invalid"),
        ("body: report_data", 48 + 520, "quote_signature_invalid"),
        ("ISV signature", body_end + 4 + 10, "quote_signature_invalid"),
        // The QE report binds the attestation key: that check fails first.
        ("attestation key", att_key + 5, "qe_report_binding_invalid"),
        ("QE report: cpusvn", qe_report, "qe_report_signature_invalid"),
        ("QE report: report_data", qe_report + 320, "qe_report_signature_invalid"),
        ("QE report signature", qe_sig + 7, "qe_report_signature_invalid"),
        ("QE auth data", auth_data + 3, "qe_report_binding_invalid"),
    ];
    for (name, at, reason) in cases {
        let mut q = quote.clone();
        q[at] ^= 0x01;
        expect(name, &c.run_with(&q, &collateral, &pki), Verdict::Reject, reason);
    }
}

#[test]
fn chain_collateral_and_tcb_failures() {
    let other_root = DevPki::from_seed(&[9; 32]).root_cert_der();
    let mut cases: Vec<(&str, Case, &str)> = Vec::new();

    let mut c = Case::good();
    c.policy_root = Some(TrustRoot::Dev(other_root));
    cases.push(("another dev root", c, "untrusted_root"));
    let mut c = Case::good();
    c.policy_root = Some(TrustRoot::Intel);
    cases.push(("Intel's root", c, "untrusted_root"));
    let mut c = Case::good();
    c.pki_options.pck_not_after = NOW - 1;
    cases.push(("expired PCK", c, "certificate_expired"));
    let mut c = Case::good();
    c.pki_options.revoke_pck = true;
    cases.push(("revoked PCK", c, "pck_revoked"));
    let mut c = Case::good();
    c.collateral.omit_pck_crl = true;
    cases.push(("missing PCK CRL", c, "crl_missing"));
    let mut c = Case::good();
    c.collateral.next_update = NOW - 1;
    cases.push(("expired collateral", c, "collateral_expired"));
    let mut c = Case::good();
    c.collateral.issue_date = NOW + 3600;
    c.collateral.next_update = NOW + 7200;
    cases.push(("collateral from the future", c, "collateral_not_yet_valid"));
    let mut c = Case::good();
    c.collateral.tcb_status = TcbStatus::OutOfDate;
    cases.push(("outdated TCB", c, "tcb_status_not_allowed"));
    let mut c = Case::good();
    c.pki_options.not_after = NOW - 1;
    c.pki_options.pck_not_after = NOW - 1;
    cases.push(("expired root and CAs", c, "certificate_expired"));

    for (name, case, reason) in cases {
        let doc = case.run();
        expect(name, &doc, Verdict::Reject, reason);
        // Values after a failed DCAP check are flagged as unauthenticated.
        if doc.check("dcap").is_some_and(|c| !c.ok) {
            let mrtd = doc.check("mrtd").unwrap();
            assert!(mrtd.detail.as_deref().unwrap_or("").contains("unauthenticated"), "{name}: {mrtd:?}");
        }
    }
}

#[test]
fn tampered_collateral_is_refused() {
    let c = Case::good();
    let (pki, quote, collateral) = c.materials();
    let mut v: serde_json::Value = serde_json::from_str(&collateral).unwrap();
    let tcb =
        v["tcb_info"].as_str().unwrap().replacen("\"tcbEvaluationDataNumber\":1", "\"tcbEvaluationDataNumber\":2", 1);
    assert_ne!(tcb, v["tcb_info"].as_str().unwrap(), "edit did not apply");
    v["tcb_info"] = tcb.into();
    expect(
        "tcb_info edited",
        &c.run_with(&quote, &v.to_string(), &pki),
        Verdict::Reject,
        "collateral_signature_invalid",
    );
    let mut v: serde_json::Value = serde_json::from_str(&collateral).unwrap();
    let qe = v["qe_identity"].as_str().unwrap().replacen("\"version\":2", "\"version\": 2", 1);
    assert_ne!(qe, v["qe_identity"].as_str().unwrap(), "edit did not apply");
    v["qe_identity"] = qe.into();
    expect(
        "qe_identity edited",
        &c.run_with(&quote, &v.to_string(), &pki),
        Verdict::Reject,
        "collateral_signature_invalid",
    );
    let mut v: serde_json::Value = serde_json::from_str(&collateral).unwrap();
    v["root_ca_crl"] = "".into();
    expect("missing root CRL", &c.run_with(&quote, &v.to_string(), &pki), Verdict::Reject, "crl_missing");
    expect("collateral not JSON", &c.run_with(&quote, "{", &pki), Verdict::Malformed, "malformed_collateral");
    let mut v: serde_json::Value = serde_json::from_str(&collateral).unwrap();
    v["tcb_info"] = "not json".into();
    expect("tcb_info not JSON", &c.run_with(&quote, &v.to_string(), &pki), Verdict::Malformed, "malformed_collateral");
}

#[test]
fn td_policy_failures() {
    let mut cases: Vec<(&str, Case, &str)> = Vec::new();
    let mut c = Case::good();
    c.report.td_attributes[0] |= 0x01;
    cases.push(("DEBUG set", c, "debug_enabled"));
    let mut c = Case::good();
    c.version = QuoteVersion::V5;
    c.report.td_attributes[0] |= 0x01;
    cases.push(("DEBUG set (v5)", c, "debug_enabled"));
    let mut c = Case::good();
    c.report.td_attributes[3] &= !0x10; // bit 28: SEPT_VE_DISABLE
    cases.push(("SEPT_VE_DISABLE off", c, "td_attributes_not_allowed"));
    let mut c = Case::good();
    c.report.td_attributes[3] |= 0x20; // bit 29: MIGRATABLE
    cases.push(("MIGRATABLE", c, "td_attributes_not_allowed"));
    let mut c = Case::good();
    c.report.mr_td[0] ^= 1;
    cases.push(("wrong MRTD", c, "mrtd_unknown"));
    let mut c = Case::good();
    c.report.rtmr[1][47] ^= 1;
    cases.push(("wrong RTMR1", c, "rtmr1_mismatch"));
    let mut c = Case::good();
    c.report.rtmr[2][0] ^= 0x80;
    cases.push(("wrong RTMR2", c, "rtmr2_mismatch"));
    let mut c = Case::good();
    c.report.rtmr[0][3] ^= 1;
    cases.push(("unknown RTMR0", c, "rtmr0_unknown"));
    let mut c = Case::good();
    c.report.mr_config_id[0] = 1;
    cases.push(("non-zero MRCONFIGID", c, "mrconfigid_not_allowed"));
    let mut c = Case::good();
    c.report.mr_owner[10] = 1;
    cases.push(("non-zero MROWNER", c, "mrowner_not_allowed"));
    let mut c = Case::good();
    c.report.mr_owner_config[47] = 1;
    cases.push(("non-zero MROWNERCONFIG", c, "mrownerconfig_not_allowed"));
    let mut c = Case::good();
    c.measurements.mr_config_id = Some([5; 48]);
    cases.push(("MRCONFIGID pinned but zero", c, "mrconfigid_not_allowed"));
    for (name, case, reason) in cases {
        expect(name, &case.run(), Verdict::Reject, reason);
    }
    // A pinned MRCONFIGID that matches is accepted.
    let mut c = Case::good();
    c.report.mr_config_id = [5; 48];
    c.measurements.mr_config_id = Some([5; 48]);
    assert!(c.run().accepted());
}

#[test]
fn binding_and_freshness_failures() {
    let mut cases: Vec<(&str, Case, &str)> = Vec::new();
    let mut c = Case::good();
    c.binding =
        Binding::Keys { tee: TeeKey([0x12; 32]), enclave: EnclaveKey(enclave_key().verifying_key().to_bytes()) };
    cases.push(("other tee key", c, "binding_mismatch"));
    let mut c = Case::good();
    c.binding = Binding::Keys {
        tee: TeeKey(TEE),
        enclave: EnclaveKey(SigningKey::from_bytes(&[0x44; 32]).verifying_key().to_bytes()),
    };
    cases.push(("other enclave key", c, "binding_mismatch"));
    let mut c = Case::good();
    c.binding = Binding::PublicKey(TeeKey(TEE));
    c.nonce = None;
    cases.push(("binding quote checked as the public quote", c, "binding_mismatch"));
    let mut c = Case::good();
    c.report.report_data = Binding::PublicKey(TeeKey(TEE)).report_data();
    cases.push(("public quote checked as the binding quote", c, "binding_mismatch"));
    let mut c = Case::good();
    c.nonce = Some(NonceProof { nonce: [0x23; 32], ..proof() });
    cases.push(("signature over another nonce", c, "nonce_signature_invalid"));
    let mut c = Case::good();
    let msg = shared::freshness::nonce_message(&NONCE, &TEE);
    c.nonce = Some(NonceProof { nonce: NONCE, signature: SigningKey::from_bytes(&[0x55; 32]).sign(&msg).to_bytes() });
    cases.push(("nonce signed by another key", c, "nonce_signature_invalid"));
    let mut c = Case::good();
    c.nonce = Some(NonceProof { nonce: NONCE, signature: [0; 64] });
    cases.push(("no nonce signature", c, "nonce_signature_invalid"));
    for (name, case, reason) in cases {
        expect(name, &case.run(), Verdict::Reject, reason);
    }
}

#[test]
fn sgx_and_oversize() {
    let c = Case::good();
    let (pki, _, collateral) = c.materials();
    let sgx =
        std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/test-vectors/dcap-qvl-samples/sgx_quote"))
            .unwrap();
    expect("SGX quote", &c.run_with(&sgx, &collateral, &pki), Verdict::Reject, "not_tdx");
    let big = vec![0u8; 16 * 1024 + 1];
    expect("oversize quote", &c.run_with(&big, &collateral, &pki), Verdict::Malformed, "oversize");
    let (_, quote, _) = c.materials();
    let huge = " ".repeat((1 << 20) + 1);
    expect("oversize collateral", &c.run_with(&quote, &huge, &pki), Verdict::Malformed, "oversize");
}
