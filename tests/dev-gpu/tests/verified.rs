//! The dev GPU's evidence through the project's real verifier (`shared::gpu`): a report for a
//! fresh nonce, its chain and its OCSP answers pass under the dev root and the H100 sample's
//! golden values, and are refused for each thing a test needs to make wrong.

use std::collections::BTreeMap;

use dev_gpu::{DevGpu, ReportChanges};
use shared::gpu::{DeviceRoot, Evidence, Firmware, GpuError, GpuPolicy, GpuVerdict, Report, Verified, verify};

/// A genuine H100 report (driver 550.90.07, VBIOS 96.00.9F.00.01), from the shared test vectors.
const TEMPLATE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/test-vectors/nvidia-gpu-samples/go-nvattest-tools/test_raw_gpu_attestation_report.dat"
);
/// 2026-01-01T00:00:00Z.
const PRODUCED_AT: u64 = 1_767_225_600;
const NOW: u64 = PRODUCED_AT + 60;

fn template() -> Vec<u8> {
    std::fs::read(TEMPLATE).unwrap()
}

/// A nonce the template never answered.
fn fresh_nonce() -> [u8; 32] {
    let nonce = [0x5a; 32];
    assert_ne!(Report::parse(&template()).unwrap().nonce, nonce);
    nonce
}

/// The H100 sample's firmware with every measurement of the template pinned (RIM index =
/// SPDM block index − 1), under `root`.
fn policy(root: DeviceRoot) -> GpuPolicy {
    let template = template();
    let parsed = Report::parse(&template).unwrap();
    let measurements: BTreeMap<u8, Vec<String>> =
        parsed.measurements.iter().map(|m| (m.index - 1, vec![hex::encode(&m.value)])).collect();
    let firmware = Firmware {
        driver: "550.90.07".into(),
        vbios: "96.00.9F.00.01".into(),
        project: "1010".into(),
        project_sku: "0200".into(),
        chip_sku: "882".into(),
        measurements,
        rims: vec![],
    };
    GpuPolicy { firmware: vec![firmware], max_ocsp_age_secs: 86_400, device_root: root }
}

struct Case {
    report: Vec<u8>,
    chain: String,
    ocsp: Vec<Vec<u8>>,
}

impl Case {
    fn new(dev: &DevGpu, changes: &ReportChanges) -> Self {
        Case {
            report: dev.report(&template(), &fresh_nonce(), changes).unwrap(),
            chain: dev.certificate_chain_pem(),
            ocsp: dev.ocsp(PRODUCED_AT),
        }
    }

    fn verify(&self, nonce: &[u8; 32], policy: &GpuPolicy, now: u64) -> Result<GpuVerdict, GpuError> {
        let evidence = Evidence { report: &self.report, certificate_chain: self.chain.as_bytes(), ocsp: &self.ocsp };
        verify(&evidence, nonce, policy, now, &Verified::default())
    }
}

fn dev() -> DevGpu {
    DevGpu::from_seed(&[7; 32])
}

#[test]
fn a_report_for_a_fresh_nonce_passes_under_the_dev_root() {
    let dev = dev();
    let case = Case::new(&dev, &ReportChanges::default());
    let verdict = case.verify(&fresh_nonce(), &policy(DeviceRoot::Dev(dev.root_spki_sha256())), NOW).unwrap();
    assert_eq!((verdict.driver.as_str(), verdict.vbios.as_str()), ("550.90.07", "96.00.9F.00.01"));
    assert_eq!(verdict.board, "1010-0200-882");
    assert_eq!(verdict.fwid, hex::encode(dev.fwid()));
    assert_eq!(verdict.measurements_matched, 64, "every block of the template, pinned");
    assert_eq!(verdict.ocsp_produced_at, PRODUCED_AT);
    // Only the nonce, the firmware id and the signature differ from the template.
    let (template, report) = (template(), &case.report);
    assert_eq!(template.len(), report.len());
    let differ = template.iter().zip(report).filter(|(a, b)| a != b).count();
    assert!(differ <= 32 + 48 + 96, "{differ} bytes differ");
    assert_eq!(template[..4], report[..4]);
    assert_eq!(template[36..1000], report[36..1000], "request tail and measurements are kept");
}

#[test]
fn the_dev_evidence_is_refused_under_nvidias_root() {
    let case = Case::new(&dev(), &ReportChanges::default());
    assert_eq!(
        case.verify(&fresh_nonce(), &policy(DeviceRoot::Nvidia), NOW),
        Err(GpuError::Chain("the chain does not end at the pinned root"))
    );
    // Nor under another seed's dev root.
    let other = DevGpu::from_seed(&[8; 32]);
    assert_ne!(other.root_spki_sha256(), dev().root_spki_sha256());
    assert!(matches!(
        case.verify(&fresh_nonce(), &policy(DeviceRoot::Dev(other.root_spki_sha256())), NOW),
        Err(GpuError::Chain(_))
    ));
}

#[test]
fn another_nonce_is_refused() {
    let dev = dev();
    let case = Case::new(&dev, &ReportChanges::default());
    let policy = policy(DeviceRoot::Dev(dev.root_spki_sha256()));
    assert_eq!(case.verify(&[0x5b; 32], &policy, NOW), Err(GpuError::Nonce));
    let template_nonce = Report::parse(&template()).unwrap().nonce;
    assert_eq!(case.verify(&template_nonce, &policy, NOW), Err(GpuError::Nonce));
}

#[test]
fn a_flipped_measurement_is_a_mismatch_at_its_rim_index() {
    let dev = dev();
    let policy = policy(DeviceRoot::Dev(dev.root_spki_sha256()));
    for block in [1, 10, 64] {
        let case = Case::new(&dev, &ReportChanges { flip_measurement: Some(block) });
        assert_eq!(
            case.verify(&fresh_nonce(), &policy, NOW),
            Err(GpuError::MeasurementMismatch { index: block - 1 }),
            "block {block}"
        );
    }
    // Block 36 is NVDEC0's, which the sample reports disabled: its value is not compared.
    let case = Case::new(&dev, &ReportChanges { flip_measurement: Some(36) });
    assert_eq!(case.verify(&fresh_nonce(), &policy, NOW).map(|v| v.measurements_matched), Ok(63));
    // A block the template does not have.
    assert!(dev.report(&template(), &fresh_nonce(), &ReportChanges { flip_measurement: Some(65) }).is_err());
}

#[test]
fn the_same_seed_gives_the_same_bytes() {
    let (a, b) = (DevGpu::from_seed(&[7; 32]), DevGpu::from_seed(&[7; 32]));
    let (a, b) = (Case::new(&a, &ReportChanges::default()), Case::new(&b, &ReportChanges::default()));
    assert_eq!(a.chain, b.chain);
    assert_eq!(a.report, b.report);
    assert_eq!(a.ocsp, b.ocsp);
    let other = Case::new(&DevGpu::from_seed(&[8; 32]), &ReportChanges::default());
    assert_ne!(a.chain, other.chain);
    assert_ne!(a.report, other.report);
}

#[test]
fn ocsp_answers_older_than_the_policy_allows_or_expired_are_refused() {
    let dev = dev();
    let case = Case::new(&dev, &ReportChanges::default());
    let mut policy = policy(DeviceRoot::Dev(dev.root_spki_sha256()));
    policy.max_ocsp_age_secs = 3_600;
    assert!(case.verify(&fresh_nonce(), &policy, PRODUCED_AT + 3_600).is_ok());
    assert_eq!(
        case.verify(&fresh_nonce(), &policy, PRODUCED_AT + 3_601),
        Err(GpuError::Ocsp("a response is older than the policy allows"))
    );
    policy.max_ocsp_age_secs = 7 * 86_400;
    assert_eq!(
        case.verify(&fresh_nonce(), &policy, PRODUCED_AT + 86_401),
        Err(GpuError::Ocsp("a response is not current"))
    );
    assert_eq!(
        case.verify(&fresh_nonce(), &policy, PRODUCED_AT - 1),
        Err(GpuError::Ocsp("a response is not current")),
        "before thisUpdate"
    );
    // Each of the two answers is needed.
    for missing in 0..2 {
        let mut short = Case::new(&dev, &ReportChanges::default());
        short.ocsp.remove(missing);
        assert_eq!(
            short.verify(&fresh_nonce(), &policy, NOW),
            Err(GpuError::Ocsp("no valid response for a certificate of the chain"))
        );
    }
}

#[test]
fn a_template_that_does_not_parse_is_an_error() {
    let dev = dev();
    let template = template();
    let none = ReportChanges::default();
    for cut in [0, 36, 37, 200, template.len() - 1] {
        assert!(dev.report(&template[..cut], &fresh_nonce(), &none).is_err(), "cut at {cut}");
    }
    let mut trailing = template.clone();
    trailing.push(0);
    assert_eq!(dev.report(&trailing, &fresh_nonce(), &none), Err("template: bytes after the signature"));
    let mut not_spdm = template;
    not_spdm[0] = 0x10;
    assert!(dev.report(&not_spdm, &fresh_nonce(), &none).is_err());
}
