//! The verifier's negative corpus (feature `corpus`): dev-PKI quotes and collateral, mutated
//! one check at a time, each with the verdict and named reason it must get; and the real DCAP
//! samples of `../shared/test-vectors/dcap-qvl-samples/` at the verification times
//! `shared/tests/attest_samples.rs` uses.
//!
//! Its users: `shared/tests/attest_corpus.rs`, which requires every verdict of
//! `shared::attest::verify`, and the `attest-corpus` binary, which prints every case with the
//! verdict `shared::attest::verify` gives it so that another verifier (the web page's,
//! `relay/web/src/attest/`) can be held to the same answers.

use ed25519_dalek::{Signer, SigningKey};
use shared::attest::measurements::{ImageMeasurement, Measurements, Rtmr0Entry};
use shared::attest::{
    Binding, Collateral, Evidence, NonceProof, Policy, TrustRoot, Verdict, VerificationDocument, verify,
};
use shared::keys::{EnclaveKey, TeeKey};

use super::{CollateralOptions, DevPki, PkiOptions, QuoteVersion, TcbStatus, TdReport};

pub const SEED: [u8; 32] = [7; 32];
/// The verification time of every dev case.
pub const NOW: u64 = 1_800_000_000;
pub const TEE: [u8; 32] = [0x11; 32];
pub const NONCE: [u8; 32] = [0x22; 32];

/// The real DCAP samples, relative to the repository (they are never copied into it).
pub const SAMPLES: &str = "../shared/test-vectors/dcap-qvl-samples";

pub fn enclave_key() -> SigningKey {
    SigningKey::from_bytes(&[0x33; 32])
}

pub fn binding() -> Binding {
    Binding::Keys { tee: TeeKey(TEE), enclave: EnclaveKey(enclave_key().verifying_key().to_bytes()) }
}

pub fn measurements() -> Measurements {
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

pub fn report() -> TdReport {
    TdReport {
        mr_td: [0xa0; 48],
        rtmr: [[0xa1; 48], [0xa2; 48], [0xa3; 48], [0; 48]],
        report_data: binding().report_data(),
        ..TdReport::default()
    }
}

pub fn proof() -> NonceProof {
    let msg = shared::freshness::nonce_message(&NONCE, &TEE);
    NonceProof { nonce: NONCE, signature: enclave_key().sign(&msg).to_bytes() }
}

/// One case: everything a verification needs, each part mutable.
#[derive(Clone)]
pub struct Case {
    pub pki_options: PkiOptions,
    pub report: TdReport,
    pub version: QuoteVersion,
    pub collateral: CollateralOptions,
    /// `None`: the case's own dev root.
    pub policy_root: Option<TrustRoot>,
    pub measurements: Measurements,
    /// `None`: offline inspection of a bare quote.
    pub binding: Option<Binding>,
    pub nonce: Option<NonceProof>,
    pub allowed: Vec<String>,
}

impl Case {
    pub fn good() -> Self {
        Case {
            pki_options: PkiOptions::default(),
            report: report(),
            version: QuoteVersion::V4,
            collateral: CollateralOptions::default(),
            policy_root: None,
            measurements: measurements(),
            binding: Some(binding()),
            nonce: Some(proof()),
            allowed: vec!["UpToDate".into()],
        }
    }

    /// The PKI, the quote and the collateral JSON this case describes.
    pub fn materials(&self) -> (DevPki, Vec<u8>, String) {
        let pki = DevPki::with_options(&SEED, self.pki_options);
        let quote = pki.quote(&self.report, self.version);
        // Collateral is JSON, which is UTF-8.
        let collateral = String::from_utf8(pki.collateral(&self.collateral)).unwrap_or_default();
        (pki, quote, collateral)
    }

    /// This case's policy and evidence around `quote` and `collateral` as given.
    pub fn input(&self, quote: &[u8], collateral: &str, pki: &DevPki) -> Input {
        Input {
            quote: quote.to_vec(),
            collateral: collateral.to_string(),
            root: self.policy_root.clone().unwrap_or_else(|| TrustRoot::Dev(pki.root_cert_der())),
            allowed: self.allowed.clone(),
            measurements: self.measurements.clone(),
            binding: self.binding,
            nonce: self.nonce,
            now: NOW,
        }
    }

    /// The case as it stands, ready to verify.
    pub fn prepare(&self) -> Input {
        let (pki, quote, collateral) = self.materials();
        self.input(&quote, &collateral, &pki)
    }

    pub fn run_with(&self, quote: &[u8], collateral: &str, pki: &DevPki) -> VerificationDocument {
        self.input(quote, collateral, pki).verify()
    }

    pub fn run(&self) -> VerificationDocument {
        self.prepare().verify()
    }
}

/// Everything one verification takes, as plain values (a verifier in another language reads
/// the same inputs from the `attest-corpus` output).
#[derive(Clone)]
pub struct Input {
    pub quote: Vec<u8>,
    /// dcap-qvl's `QuoteCollateralV3` JSON, as the verifier receives it.
    pub collateral: String,
    pub root: TrustRoot,
    pub allowed: Vec<String>,
    pub measurements: Measurements,
    pub binding: Option<Binding>,
    pub nonce: Option<NonceProof>,
    pub now: u64,
}

impl Input {
    /// What every caller of the verifier does: parse the collateral (refusing the evidence if
    /// it cannot), then `shared::attest::verify`.
    pub fn verify(&self) -> VerificationDocument {
        let collateral = match Collateral::from_json(&self.collateral) {
            Ok(c) => c,
            Err(e) => {
                return VerificationDocument::refused(
                    Verdict::Malformed,
                    e.reason(),
                    e.to_string(),
                    String::new(),
                    self.now,
                );
            }
        };
        let policy = Policy {
            root: self.root.clone(),
            allowed_tcb_statuses: self.allowed.clone(),
            measurements: self.measurements.clone(),
        };
        let evidence =
            Evidence { quote: &self.quote, collateral: &collateral, binding: self.binding, nonce: self.nonce };
        verify(&evidence, &policy, self.now)
    }
}

/// The corpus groups, one per test of `shared/tests/attest_corpus.rs` (and the samples).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Group {
    Baseline,
    Truncation,
    BitFlip,
    Chain,
    Collateral,
    TdPolicy,
    Binding,
    SgxOversize,
    /// Cases beyond the original corpus, for the parity of other verifiers: each names a
    /// check that a verifier can get wrong while all of the above still pass.
    Parity,
    /// The real DCAP samples.
    Samples,
    /// Differential cases: bytes flipped across the whole quote (its PCK chain included) and
    /// across the collateral's certificates, CRLs and signatures. What they must get is what
    /// `shared::attest::verify` gives them; other verifiers are held to it.
    Mutation,
}

impl Group {
    pub const ALL: [Group; 11] = [
        Group::Baseline,
        Group::Truncation,
        Group::BitFlip,
        Group::Chain,
        Group::Collateral,
        Group::TdPolicy,
        Group::Binding,
        Group::SgxOversize,
        Group::Parity,
        Group::Samples,
        Group::Mutation,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Group::Baseline => "baseline",
            Group::Truncation => "truncation",
            Group::BitFlip => "bit_flip",
            Group::Chain => "chain",
            Group::Collateral => "collateral",
            Group::TdPolicy => "td_policy",
            Group::Binding => "binding",
            Group::SgxOversize => "sgx_oversize",
            Group::Parity => "parity",
            Group::Samples => "samples",
            Group::Mutation => "mutation",
        }
    }
}

/// One named case and the verdict the corpus requires of it (`reason` is `None` on accept).
pub struct Entry {
    pub group: Group,
    pub name: String,
    pub verdict: Verdict,
    pub reason: Option<&'static str>,
    pub input: Input,
    /// The sample files the quote and the collateral are, byte for byte, relative to the
    /// repository (`None` for generated or altered inputs).
    pub quote_file: Option<String>,
    pub collateral_file: Option<String>,
    /// A differential case (group `Mutation`): `verdict` and `reason` are not set; what it must
    /// get is what `shared::attest::verify` gives it.
    pub differential: bool,
}

impl Entry {
    fn new(
        group: Group,
        name: impl Into<String>,
        verdict: Verdict,
        reason: Option<&'static str>,
        input: Input,
    ) -> Self {
        Entry {
            group,
            name: name.into(),
            verdict,
            reason,
            input,
            quote_file: None,
            collateral_file: None,
            differential: false,
        }
    }

    fn reject(group: Group, name: impl Into<String>, reason: &'static str, input: Input) -> Self {
        Self::new(group, name, Verdict::Reject, Some(reason), input)
    }

    fn accept(group: Group, name: impl Into<String>, input: Input) -> Self {
        Self::new(group, name, Verdict::Accept, None, input)
    }
}

/// The whole corpus, group by group.
pub fn corpus() -> Vec<Entry> {
    Group::ALL.into_iter().flat_map(group).collect()
}

/// The cases of one group.
pub fn group(group: Group) -> Vec<Entry> {
    match group {
        Group::Baseline => baseline(),
        Group::Truncation => truncations(),
        Group::BitFlip => bit_flips(),
        Group::Chain => chain(),
        Group::Collateral => tampered_collateral(),
        Group::TdPolicy => td_policy(),
        Group::Binding => binding_and_freshness(),
        Group::SgxOversize => sgx_and_oversize(),
        Group::Parity => parity(),
        Group::Samples => samples(),
        Group::Mutation => mutations(),
    }
}

fn baseline() -> Vec<Entry> {
    let mut out: Vec<Entry> = [QuoteVersion::V4, QuoteVersion::V5, QuoteVersion::V5Td10]
        .into_iter()
        .map(|version| {
            Entry::accept(Group::Baseline, format!("{version:?}"), Case { version, ..Case::good() }.prepare())
        })
        .collect();
    // OutOfDate is accepted only where the policy allows it.
    let mut c = Case::good();
    c.collateral.tcb_status = TcbStatus::OutOfDate;
    c.allowed = vec!["UpToDate".into(), "OutOfDate".into()];
    out.push(Entry::accept(Group::Baseline, "OutOfDate where allowed", c.prepare()));
    out
}

/// Offsets of a v4 quote's structure boundaries (tdx.md §3.1).
pub fn v4_boundaries(len: usize) -> Vec<usize> {
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

fn truncations() -> Vec<Entry> {
    let c = Case::good();
    let (pki, quote, collateral) = c.materials();
    v4_boundaries(quote.len())
        .into_iter()
        .map(|at| {
            let input = c.input(&quote[..at], &collateral, &pki);
            Entry::new(
                Group::Truncation,
                format!("truncated at {at}"),
                Verdict::Malformed,
                Some("malformed_quote"),
                input,
            )
        })
        .collect()
}

fn bit_flips() -> Vec<Entry> {
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
    cases
        .into_iter()
        .map(|(name, at, reason)| {
            let mut q = quote.clone();
            q[at] ^= 0x01;
            Entry::reject(Group::BitFlip, name, reason, c.input(&q, &collateral, &pki))
        })
        .collect()
}

fn chain() -> Vec<Entry> {
    let other_root = DevPki::from_seed(&[9; 32]).root_cert_der();
    let mut cases: Vec<(&str, Case, &'static str)> = Vec::new();

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

    cases.into_iter().map(|(name, case, reason)| Entry::reject(Group::Chain, name, reason, case.prepare())).collect()
}

/// Edits `field` of the collateral JSON (a JSON string) with `edit`.
fn edit_field(collateral: &str, field: &str, edit: impl FnOnce(&str) -> String) -> String {
    let mut v: serde_json::Value = serde_json::from_str(collateral).unwrap_or_default();
    let edited = edit(v[field].as_str().unwrap_or_default());
    v[field] = edited.into();
    v.to_string()
}

fn tampered_collateral() -> Vec<Entry> {
    let c = Case::good();
    let (pki, quote, collateral) = c.materials();
    let entry = |name: &str, verdict, reason, collateral: &str| {
        Entry::new(Group::Collateral, name, verdict, Some(reason), c.input(&quote, collateral, &pki))
    };
    let tcb = edit_field(&collateral, "tcb_info", |t| {
        t.replacen("\"tcbEvaluationDataNumber\":1", "\"tcbEvaluationDataNumber\":2", 1)
    });
    let qe = edit_field(&collateral, "qe_identity", |t| t.replacen("\"version\":2", "\"version\": 2", 1));
    let no_root_crl = edit_field(&collateral, "root_ca_crl", |_| String::new());
    let tcb_not_json = edit_field(&collateral, "tcb_info", |_| "not json".into());
    vec![
        entry("tcb_info edited", Verdict::Reject, "collateral_signature_invalid", &tcb),
        entry("qe_identity edited", Verdict::Reject, "collateral_signature_invalid", &qe),
        entry("missing root CRL", Verdict::Reject, "crl_missing", &no_root_crl),
        entry("collateral not JSON", Verdict::Malformed, "malformed_collateral", "{"),
        entry("tcb_info not JSON", Verdict::Malformed, "malformed_collateral", &tcb_not_json),
    ]
}

fn td_policy() -> Vec<Entry> {
    let mut cases: Vec<(&str, Case, &'static str)> = Vec::new();
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
    let mut out: Vec<Entry> = cases
        .into_iter()
        .map(|(name, case, reason)| Entry::reject(Group::TdPolicy, name, reason, case.prepare()))
        .collect();
    // A pinned MRCONFIGID that matches is accepted.
    let mut c = Case::good();
    c.report.mr_config_id = [5; 48];
    c.measurements.mr_config_id = Some([5; 48]);
    out.push(Entry::accept(Group::TdPolicy, "MRCONFIGID pinned and matching", c.prepare()));
    out
}

fn binding_and_freshness() -> Vec<Entry> {
    let mut cases: Vec<(&str, Case, &'static str)> = Vec::new();
    let mut c = Case::good();
    c.binding =
        Some(Binding::Keys { tee: TeeKey([0x12; 32]), enclave: EnclaveKey(enclave_key().verifying_key().to_bytes()) });
    cases.push(("other tee key", c, "binding_mismatch"));
    let mut c = Case::good();
    c.binding = Some(Binding::Keys {
        tee: TeeKey(TEE),
        enclave: EnclaveKey(SigningKey::from_bytes(&[0x44; 32]).verifying_key().to_bytes()),
    });
    cases.push(("other enclave key", c, "binding_mismatch"));
    let mut c = Case::good();
    c.binding = Some(Binding::PublicKey(TeeKey(TEE)));
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
    cases.into_iter().map(|(name, case, reason)| Entry::reject(Group::Binding, name, reason, case.prepare())).collect()
}

/// A sample file's bytes (the samples are outside the repository: `SAMPLES`).
pub fn read_sample(name: &str) -> Vec<u8> {
    let path = format!("{}/../../{SAMPLES}/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn sgx_and_oversize() -> Vec<Entry> {
    let c = Case::good();
    let (pki, quote, collateral) = c.materials();
    let mut sgx = Entry::reject(
        Group::SgxOversize,
        "SGX quote",
        "not_tdx",
        c.input(&read_sample("sgx_quote"), &collateral, &pki),
    );
    sgx.quote_file = Some(format!("{SAMPLES}/sgx_quote"));
    let big = vec![0u8; 16 * 1024 + 1];
    let huge = " ".repeat((1 << 20) + 1);
    vec![
        sgx,
        Entry::new(
            Group::SgxOversize,
            "oversize quote",
            Verdict::Malformed,
            Some("oversize"),
            c.input(&big, &collateral, &pki),
        ),
        Entry::new(
            Group::SgxOversize,
            "oversize collateral",
            Verdict::Malformed,
            Some("oversize"),
            c.input(&quote, &huge, &pki),
        ),
    ]
}

/// Beyond the original corpus: the quote's header, the TD attributes dcap-qvl refuses beyond
/// DEBUG, the TDX module identity, CRLs that do not vouch for the chain, certificates not yet
/// valid, and the binding and measurement knobs the original cases leave at their defaults.
fn parity() -> Vec<Entry> {
    let other = DevPki::from_seed(&[9; 32]);
    let other_collateral = String::from_utf8(other.collateral(&CollateralOptions::default())).unwrap_or_default();
    let other_field = |field: &str| {
        let v: serde_json::Value = serde_json::from_str(&other_collateral).unwrap_or_default();
        v[field].as_str().unwrap_or_default().to_string()
    };
    let mut out = Vec::new();
    let mut push = |name: &str, verdict: Verdict, reason: Option<&'static str>, input: Input| {
        out.push(Entry::new(Group::Parity, name, verdict, reason, input));
    };

    // The quote's header.
    let c = Case::good();
    let (pki, quote, collateral) = c.materials();
    let header = |at: usize, value: u8| {
        let mut q = quote.clone();
        q[at] = value;
        c.input(&q, &collateral, &pki)
    };
    push("quote version 6", Verdict::Unsupported, Some("unsupported_quote_version"), header(0, 6));
    push("quote version 3 with a TD report", Verdict::Malformed, Some("malformed_quote"), header(0, 3));
    push("attestation key type 3 (P-384)", Verdict::Unsupported, Some("unsupported_attestation_key"), header(2, 3));
    push("another QE vendor", Verdict::Reject, Some("dcap_rejected"), header(12, 0x94));

    // TD attributes beyond DEBUG, and the TDX module.
    let td = |edit: &dyn Fn(&mut TdReport)| {
        let mut c = Case::good();
        edit(&mut c.report);
        c.prepare()
    };
    push(
        "TD profiling (TUD bit 4)",
        Verdict::Reject,
        Some("td_attributes_not_allowed"),
        td(&|r| r.td_attributes[0] |= 0x10),
    );
    push(
        "reserved TD attribute bit 1",
        Verdict::Reject,
        Some("td_attributes_not_allowed"),
        td(&|r| r.td_attributes[0] |= 0x02),
    );
    push(
        "reserved TD attribute bit 40",
        Verdict::Reject,
        Some("td_attributes_not_allowed"),
        td(&|r| r.td_attributes[5] |= 0x01),
    );
    push("SERVTD_EXT (bit 17)", Verdict::Reject, Some("dcap_rejected"), td(&|r| r.td_attributes[2] |= 0x02));
    push("PERFMON (bit 63) is allowed", Verdict::Accept, None, td(&|r| r.td_attributes[7] |= 0x80));
    push("TDX module signer", Verdict::Reject, Some("dcap_rejected"), td(&|r| r.mr_signer_seam[0] = 1));
    push("SEAM attributes", Verdict::Reject, Some("dcap_rejected"), td(&|r| r.seam_attributes[0] = 1));
    push("TDX module version without identity", Verdict::Reject, Some("dcap_rejected"), td(&|r| r.tee_tcb_svn[1] = 2));
    push("TDX module below its TCB levels", Verdict::Reject, Some("dcap_rejected"), td(&|r| r.tee_tcb_svn[0] = 4));
    push(
        "TDX component below the TCB level",
        Verdict::Reject,
        Some("tcb_level_unmatched"),
        td(&|r| r.tee_tcb_svn[2] = 2),
    );
    push("TDX components above the TCB level", Verdict::Accept, None, td(&|r| r.tee_tcb_svn[3] = 9));
    let mut c = Case::good();
    c.version = QuoteVersion::V5;
    c.report.td_attributes[3] |= 0x20;
    push("MIGRATABLE (v5)", Verdict::Reject, Some("td_attributes_not_allowed"), c.prepare());

    // CRLs and certificates.
    let with = |field: &str, value: String| c_input_with(&Case::good(), field, value);
    push(
        "root CRL of another PKI",
        Verdict::Reject,
        Some("untrusted_root"),
        with("root_ca_crl", other_field("root_ca_crl")),
    );
    push(
        "PCK CRL of another PKI",
        Verdict::Reject,
        Some("certificate_chain_invalid"),
        with("pck_crl", other_field("pck_crl")),
    );
    let (_, _, good_collateral) = Case::good().materials();
    let root_crl = serde_json::from_str::<serde_json::Value>(&good_collateral).unwrap_or_default()["root_ca_crl"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    push(
        "root CRL in place of the PCK CRL",
        Verdict::Reject,
        Some("certificate_chain_invalid"),
        with("pck_crl", root_crl),
    );
    push("PCK CRL not DER", Verdict::Reject, Some("crl_invalid"), with("pck_crl", "3000".into()));
    push("root CRL not DER", Verdict::Reject, Some("crl_invalid"), with("root_ca_crl", "3000".into()));
    push(
        "TCB signer chain of another PKI",
        Verdict::Reject,
        Some("certificate_chain_invalid"),
        with("tcb_info_issuer_chain", other_field("tcb_info_issuer_chain")),
    );
    push(
        "QE identity signer chain of another PKI",
        Verdict::Reject,
        Some("certificate_chain_invalid"),
        with("qe_identity_issuer_chain", other_field("qe_identity_issuer_chain")),
    );
    push("no TCB signer chain", Verdict::Reject, Some("dcap_rejected"), with("tcb_info_issuer_chain", String::new()));
    push(
        "collateral signature not hex",
        Verdict::Malformed,
        Some("malformed_collateral"),
        with("tcb_info_signature", "zz".into()),
    );
    let mut c = Case::good();
    c.pki_options.not_before = NOW + 3600;
    push("certificates not yet valid", Verdict::Reject, Some("certificate_not_yet_valid"), c.prepare());
    let mut c = Case::good();
    c.pki_options.pck_not_after = NOW - 1;
    c.collateral.next_update = NOW - 1;
    push("expired PCK and collateral", Verdict::Reject, Some("collateral_expired"), c.prepare());
    let mut c = Case::good();
    c.pki_options.revoke_pck = true;
    c.report.mr_td[0] ^= 1;
    push("revoked PCK and wrong MRTD", Verdict::Reject, Some("pck_revoked"), c.prepare());

    // Knobs: the binding, the published TCB evaluation, the allowed statuses.
    let mut c = Case::good();
    c.report.report_data = Binding::PublicKey(TeeKey(TEE)).report_data();
    c.binding = Some(Binding::PublicKey(TeeKey(TEE)));
    c.nonce = None;
    push("public quote checked as the public quote", Verdict::Accept, None, c.prepare());
    let mut c = Case::good();
    c.binding = None;
    c.nonce = None;
    push("offline: binding not requested", Verdict::Accept, None, c.prepare());
    let mut c = Case::good();
    c.report.report_data = Binding::PublicKey(TeeKey(TEE)).report_data();
    c.binding = Some(Binding::PublicKey(TeeKey(TEE)));
    push("nonce proof without the enclave key", Verdict::Reject, Some("nonce_signature_invalid"), c.prepare());
    let mut c = Case::good();
    c.measurements.min_tcb_evaluation_data_number = Some(2);
    push(
        "published TCB evaluation above the collateral's",
        Verdict::Reject,
        Some("tcb_evaluation_below_minimum"),
        c.prepare(),
    );
    let mut c = Case::good();
    c.measurements.min_tcb_evaluation_data_number = Some(1);
    push("published TCB evaluation met", Verdict::Accept, None, c.prepare());
    let mut c = Case::good();
    c.allowed = vec![];
    push("no TCB status allowed", Verdict::Reject, Some("tcb_status_not_allowed"), c.prepare());
    let mut c = Case::good();
    c.measurements.images.clear();
    c.measurements.rtmr0.clear();
    push("no image published", Verdict::Reject, Some("mrtd_unknown"), c.prepare());
    out
}

/// `case` with one collateral field (a JSON string) replaced.
fn c_input_with(case: &Case, field: &str, value: String) -> Input {
    let (pki, quote, collateral) = case.materials();
    case.input(&quote, &edit_field(&collateral, field, |_| value), &pki)
}

/// Reference values equal to a TD quote's own (the verifier's tests and bench use them), so only the
/// DCAP result and the binding decide. The TD 1.0 fields are at the same offsets in every TD
/// report, after the 48-byte header (and the 6-byte body descriptor of quote v5).
pub fn measurements_of(quote: &[u8]) -> Measurements {
    let base = if quote.get(0..2) == Some(&[5, 0]) { 54 } else { 48 };
    let mr = |offset: usize| -> [u8; 48] {
        quote.get(base + offset..base + offset + 48).and_then(|s| s.try_into().ok()).unwrap_or([0; 48])
    };
    let pin = |v: [u8; 48]| (v != [0; 48]).then_some(v);
    Measurements {
        schema_version: 1,
        images: vec![ImageMeasurement { name: "sample".into(), mrtd: mr(136), rtmr1: mr(376), rtmr2: mr(424) }],
        rtmr0: vec![Rtmr0Entry { platform: "sample".into(), value: mr(328) }],
        mr_config_id: pin(mr(184)),
        mr_owner: pin(mr(232)),
        mr_owner_config: pin(mr(280)),
        min_tcb_evaluation_data_number: None,
    }
}

/// The real samples under Intel's root, as `shared/tests/attest_samples.rs` checks them: the
/// binding is to a key the samples do not bind, so an intact sample fails `binding_mismatch`
/// (and is accepted offline, with no binding requested).
fn samples() -> Vec<Entry> {
    let empty = Measurements::pinning_nothing();
    let sample = |name: &str,
                  quote: &str,
                  collateral: &str,
                  now: u64,
                  measurements: Option<Measurements>,
                  binding: Option<Binding>,
                  (verdict, reason): (Verdict, Option<&'static str>)| {
        let quote_bytes = read_sample(quote);
        let input = Input {
            measurements: measurements.unwrap_or_else(|| measurements_of(&quote_bytes)),
            quote: quote_bytes,
            collateral: String::from_utf8(read_sample(collateral)).unwrap_or_default(),
            root: TrustRoot::Intel,
            allowed: vec!["UpToDate".into()],
            binding,
            nonce: None,
            now,
        };
        let mut e = Entry::new(Group::Samples, name, verdict, reason, input);
        e.quote_file = Some(format!("{SAMPLES}/{quote}"));
        e.collateral_file = Some(format!("{SAMPLES}/{collateral}"));
        e
    };
    let zero_key = Some(Binding::PublicKey(TeeKey([0; 32])));
    let reject = |reason| (Verdict::Reject, Some(reason));
    const V4_TIME: u64 = 1_750_377_600;
    const LATER: u64 = 1_771_459_200;
    const TD15EX_TIME: u64 = 1_791_504_000;
    let v4 = |name: &str, now, expected| {
        sample(name, "tdx_quote", "tdx_quote_collateral.json", now, None, zero_key, expected)
    };
    let mut out = vec![
        v4("v4 sample", V4_TIME, reject("binding_mismatch")),
        sample(
            "v4 sample offline",
            "tdx_quote",
            "tdx_quote_collateral.json",
            V4_TIME,
            None,
            None,
            (Verdict::Accept, None),
        ),
        v4("v4 sample later: expired collateral", LATER, reject("collateral_expired")),
        sample(
            "v5 td15ex sample",
            "tdx_quote_td15ex",
            "tdx_quote_td15ex_collateral.json",
            TD15EX_TIME,
            None,
            zero_key,
            reject("binding_mismatch"),
        ),
        sample(
            "v5 td15ex sample offline",
            "tdx_quote_td15ex",
            "tdx_quote_td15ex_collateral.json",
            TD15EX_TIME,
            None,
            None,
            (Verdict::Accept, None),
        ),
        sample(
            "outdated v5 sample",
            "tdx_quote_outdated",
            "tdx_quote_outdated_collateral.json",
            LATER,
            None,
            zero_key,
            reject("tcb_level_unmatched"),
        ),
        sample(
            "SGX sample",
            "sgx_quote",
            "sgx_quote_collateral.json",
            V4_TIME,
            Some(empty),
            zero_key,
            reject("not_tdx"),
        ),
    ];
    // The published TCB evaluation: the v4 sample's collateral is of evaluation 17.
    let mut below =
        v4("v4 sample under a published TCB evaluation of 18", V4_TIME, reject("tcb_evaluation_below_minimum"));
    below.input.measurements.min_tcb_evaluation_data_number = Some(18);
    out.push(below);
    let mut met = v4("v4 sample under a published TCB evaluation of 17", V4_TIME, reject("binding_mismatch"));
    met.input.measurements.min_tcb_evaluation_data_number = Some(17);
    out.push(met);
    // Malformed and altered versions of the v4 sample.
    let altered = |name: &str, edit: &dyn Fn(&mut Vec<u8>), binding, expected: (Verdict, Option<&'static str>)| {
        let mut e = v4(name, V4_TIME, expected);
        edit(&mut e.input.quote);
        e.input.binding = binding;
        e.quote_file = None;
        e
    };
    out.push(altered(
        "oversize (20000 bytes)",
        &|q| *q = vec![0; 20_000],
        zero_key,
        (Verdict::Malformed, Some("oversize")),
    ));
    out.push(altered(
        "v4 sample truncated to 100 bytes",
        &|q| q.truncate(100),
        zero_key,
        (Verdict::Malformed, Some("malformed_quote")),
    ));
    out.push(altered(
        "v4 sample as version 9",
        &|q| q[0] = 9,
        zero_key,
        (Verdict::Unsupported, Some("unsupported_quote_version")),
    ));
    out.push(altered(
        "v4 sample with attestation key type 3",
        &|q| q[2] = 3,
        zero_key,
        (Verdict::Unsupported, Some("unsupported_attestation_key")),
    ));
    out.push(altered(
        "text",
        &|q| *q = b"# not a quote, just some text that is long enough to have a header".repeat(2),
        None,
        (Verdict::Malformed, Some("malformed_quote")),
    ));
    out
}

/// A differential entry: what it must get is whatever `shared::attest::verify` gives it.
fn differential(name: String, input: Input) -> Entry {
    Entry { differential: true, ..Entry::new(Group::Mutation, name, Verdict::Reject, None, input) }
}

/// `text` with the character at `at` replaced by a neighbour of its own class (base64 and hex
/// stay well-formed, so the decoded bytes change); `None` for other characters.
fn swap_char(text: &str, at: usize) -> Option<String> {
    let ch = *text.as_bytes().get(at)?;
    let swapped = match ch {
        b'A'..=b'E' | b'a'..=b'e' | b'0'..=b'8' | b'G'..=b'Y' | b'g'..=b'y' => ch + 1,
        b'F' | b'f' | b'9' | b'Z' | b'z' => ch - 1,
        b'+' => b'/',
        b'/' => b'+',
        _ => return None,
    };
    let mut edited = text.as_bytes().to_vec();
    edited[at] = swapped;
    String::from_utf8(edited).ok()
}

/// Each of `fields` of `collateral` (a JSON string field, with a step) edited at spread offsets.
fn collateral_mutations(
    prefix: &str,
    collateral: &str,
    fields: &[(&str, usize)],
    input: impl Fn(&str) -> Input,
) -> Vec<Entry> {
    let v: serde_json::Value = serde_json::from_str(collateral).unwrap_or_default();
    let mut out = Vec::new();
    for &(field, step) in fields {
        let text = v[field].as_str().unwrap_or_default().to_string();
        for at in (0..text.len()).step_by(step) {
            if let Some(edited) = swap_char(&text, at) {
                let collateral = edit_field(collateral, field, |_| edited.clone());
                out.push(differential(format!("{prefix}{field} char {at}"), input(&collateral)));
            }
        }
    }
    out
}

fn mutations() -> Vec<Entry> {
    let c = Case::good();
    let (pki, quote, collateral) = c.materials();
    let mut out = Vec::new();
    // The dev quote, every 31st byte, two ways: a low bit (mostly a signature or a DER byte)
    // and the high bit (mostly a length or a tag).
    for at in (0..quote.len()).step_by(31) {
        for mask in [0x01u8, 0x80] {
            let mut q = quote.clone();
            q[at] ^= mask;
            out.push(differential(format!("quote byte {at} ^ {mask:#04x}"), c.input(&q, &collateral, &pki)));
        }
    }
    // The dev collateral's certificate chains (base64 of the PEM), CRLs and signatures (hex).
    let fields = [
        ("tcb_info_issuer_chain", 40),
        ("qe_identity_issuer_chain", 61),
        ("pck_crl_issuer_chain", 53),
        ("root_ca_crl", 17),
        ("pck_crl", 19),
        ("tcb_info_signature", 31),
        ("qe_identity_signature", 29),
    ];
    out.extend(collateral_mutations("", &collateral, &fields, |col| c.input(&quote, col, &pki)));
    // Intel's own structures: the v4 sample's PCK chain in the quote (no signature covers it),
    // and its collateral's chains and CRLs (a PCK CRL with revoked entries and reason codes).
    let sample = samples().into_iter().find(|e| e.name == "v4 sample offline");
    if let Some(sample) = sample {
        let base = sample.input;
        let start = base.quote.windows(11).position(|w| w == b"-----BEGIN ").unwrap_or(base.quote.len());
        for at in (start..base.quote.len()).step_by(47) {
            let mut input = base.clone();
            input.quote[at] ^= if at % 2 == 0 { 0x01 } else { 0x80 };
            out.push(differential(format!("v4 sample quote byte {at}"), input));
        }
        let fields =
            [("tcb_info_issuer_chain", 71), ("root_ca_crl", 37), ("pck_crl", 211), ("pck_crl_issuer_chain", 97)];
        let mutated = collateral_mutations("v4 sample ", &base.collateral, &fields, |col| Input {
            collateral: col.to_string(),
            ..base.clone()
        });
        out.extend(mutated);
        // The hex samples (real quotes from other platforms), under the v4 sample's collateral.
        for name in ["tdx-quote.hex", "quote-from-tappd.hex"] {
            let text = String::from_utf8(read_sample(name)).unwrap_or_default();
            let quote = hex::decode(text.trim().trim_start_matches("0x")).unwrap_or_default();
            let input = Input { measurements: measurements_of(&quote), quote, ..base.clone() };
            out.push(differential(format!("{name} under the v4 sample's collateral"), input));
        }
    }
    out
}
