//! A GPU node's whole attestation (`shared::gpu::node::verify`) on development evidence built
//! the way an honest node agent builds it (`dev_gpu::node`): a dev TDX quote of the
//! dev image binding the node's TLS key, the enclave's nonce and the GPU evidence digest, and
//! the real H100 sample's report re-issued by a dev GPU for the derived GPU nonce. It proves
//! that such evidence is accepted with the right verdict, and that each way a node can lie
//! (another key, another nonce, replayed or swapped GPU reports, devtools mode, missing GPUs,
//! another image, untrusted roots, malformed input) is refused for its own exact reason.
#![cfg(feature = "gpu-node")]

use dev_gpu::DevGpu;
use dev_gpu::node::{Answer, DevNode};
use shared::attest::{Measurements, Policy, TrustRoot};
use shared::gpu::node::{
    MAX_GPUS, NodeError, NodeEvidence, NodePolicy, NodeVerdict, evidence_digest, gpu_nonce, verify,
};
use shared::gpu::{DeviceRoot, GpuError, GpuPolicy, Verified};

const TEMPLATE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../shared/test-vectors/nvidia-gpu-samples/go-nvattest-tools/test_raw_gpu_attestation_report.dat"
);
const DEV_MEASUREMENTS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../measurements/dev.json");
/// 2027-01-15: inside the dev collateral's and both dev PKIs' validity.
const NOW: u64 = 1_800_000_000;
const OCSP_PRODUCED_AT: u64 = NOW - 60;
/// SHA-256 of the node's TLS SPKI (what the enclave pins), and the enclave's nonce.
const PIN: [u8; 32] = [0x9a; 32];
const NONCE: [u8; 32] = [0x4e; 32];
const OTHER: [u8; 32] = [0x5b; 32];

/// What the protocol says a node answers, with `gpus` GPUs.
fn honest(gpus: usize) -> Answer {
    Answer::honest(&PIN, &NONCE, gpus, OCSP_PRODUCED_AT)
}

/// Eight devices under one development GPU root, as on one board, and the node's quote PKI.
fn board() -> DevNode {
    DevNode::new(&[0x4e; 32], &[0x47; 32], 8, read(TEMPLATE))
}

/// The dev image under the dev TDX root, the H100 sample's firmware with every measurement
/// of the template pinned (RIM index = SPDM block index − 1) under the dev GPU root.
fn policy(node: &DevNode, gpus: usize) -> NodePolicy {
    // The H100 sample's firmware (550.90.07, 96.00.9F.00.01, 1010-0200-882) with every
    // measurement of the template pinned.
    let firmware = node.firmware();
    NodePolicy {
        tdx: Policy::new(TrustRoot::Dev(node.tdx.root_cert_der()), self::measurements()),
        gpu: GpuPolicy {
            firmware: vec![firmware],
            max_ocsp_age_secs: 86_400,
            device_root: DeviceRoot::Dev(node.gpus[0].root_spki_sha256()),
        },
        gpus,
    }
}

fn read(path: &str) -> Vec<u8> {
    std::fs::read(path).unwrap()
}

fn measurements() -> Measurements {
    Measurements::from_json(&String::from_utf8(read(DEV_MEASUREMENTS)).unwrap()).unwrap()
}

/// Verifies as the enclave does for the node pinned at [`PIN`], asked with [`NONCE`].
fn check(evidence: &NodeEvidence, policy: &NodePolicy) -> Result<NodeVerdict, NodeError> {
    verify(evidence, &PIN, &NONCE, policy, NOW, &Verified::default())
}

fn quote_refused(reason: &str) -> Result<NodeVerdict, NodeError> {
    Err(NodeError::Quote(reason.into()))
}

#[test]
fn honest_evidence_with_one_and_eight_gpus_is_accepted() {
    let node = board();
    for gpus in [1, 8] {
        let evidence = node.evidence(&measurements(), &honest(gpus));
        let verdict = check(&evidence, &policy(&node, gpus)).unwrap();
        let reports: Vec<Vec<u8>> = evidence.gpus.iter().map(|g| shared::b64::decode(&g.report).unwrap()).collect();
        let chains: Vec<&str> = evidence.gpus.iter().map(|g| g.certificate_chain.as_str()).collect();
        let digest = evidence_digest(reports.iter().zip(&chains).map(|(r, c)| (r.as_slice(), c.as_bytes())));
        assert_eq!(verdict.tls_spki_sha256, hex::encode(PIN));
        assert_eq!(verdict.evidence_digest, hex::encode(digest));
        assert_eq!(verdict.quote_sha256, hex::encode(shared::sha256(&hex::decode(&evidence.quote).unwrap())));
        assert_eq!(verdict.trust_root, TrustRoot::Dev(node.tdx.root_cert_der()).label());
        assert!(verdict.trust_root.starts_with("dev:"));
        assert_eq!(verdict.tcb_status.as_deref(), Some("UpToDate"));
        assert_eq!(verdict.device_root, format!("dev:{}", hex::encode(node.gpus[0].root_spki_sha256())));
        assert_eq!(verdict.verified_at, NOW);
        assert_eq!(verdict.gpus.len(), gpus);
        for (i, gpu) in verdict.gpus.iter().enumerate() {
            assert!(verdict.gpus[..i].iter().all(|other| other.device != gpu.device), "eight devices");
            assert_eq!((gpu.driver.as_str(), gpu.vbios.as_str()), ("550.90.07", "96.00.9F.00.01"));
            assert_eq!(gpu.board, "1010-0200-882");
            assert_eq!(gpu.fwid, hex::encode(node.gpus[0].fwid()));
            assert_eq!(gpu.measurements_matched, 64, "every block of the template, pinned");
            assert_eq!(gpu.ocsp_produced_at, OCSP_PRODUCED_AT);
        }
    }
}

#[test]
fn one_gpu_shown_twice_does_not_count_as_two() {
    // One genuine GPU's evidence repeated, correctly bound, would otherwise stand for GPUs in
    // devtools mode that never answered.
    let node = board();
    let mut copied = board();
    copied.gpus = vec![DevGpu::device(&[0x47; 32], 0), DevGpu::device(&[0x47; 32], 1), DevGpu::device(&[0x47; 32], 0)];
    assert!(check(&node.evidence(&measurements(), &honest(3)), &policy(&node, 3)).is_ok());
    assert_eq!(
        check(&copied.evidence(&measurements(), &honest(3)), &policy(&node, 3)),
        Err(NodeError::SameDevice { index: 2 })
    );
}

#[test]
fn a_quote_binding_another_tls_key_is_refused() {
    let node = board();
    // The quote is another node's; the GPU reports answer this node's nonce.
    let evidence = node.evidence(&measurements(), &Answer { quote_pin: OTHER, ..honest(1) });
    assert_eq!(check(&evidence, &policy(&node, 1)), quote_refused("binding_mismatch"));
    // All of it made for another node: the pinned key is not the one it binds.
    let other =
        node.evidence(&measurements(), &Answer { quote_pin: OTHER, gpu_nonce: gpu_nonce(&OTHER, &NONCE), ..honest(1) });
    assert_eq!(check(&other, &policy(&node, 1)), quote_refused("binding_mismatch"));
}

#[test]
fn evidence_answering_another_nonce_is_refused() {
    let node = board();
    let earlier = Answer { quote_nonce: OTHER, gpu_nonce: gpu_nonce(&PIN, &OTHER), ..honest(1) };
    assert_eq!(check(&node.evidence(&measurements(), &earlier), &policy(&node, 1)), quote_refused("binding_mismatch"));
}

#[test]
fn gpu_reports_replayed_inside_a_fresh_quote_are_refused() {
    let node = board();
    for stale in [gpu_nonce(&PIN, &OTHER), gpu_nonce(&OTHER, &NONCE), NONCE] {
        let evidence = node.evidence(&measurements(), &Answer { gpu_nonce: stale, ..honest(1) });
        assert_eq!(check(&evidence, &policy(&node, 1)), Err(NodeError::Gpu { index: 0, error: GpuError::Nonce }));
    }
}

#[test]
fn a_gpu_report_swapped_after_the_quote_was_made_is_refused() {
    let node = board();
    let policy = policy(&node, 8);
    // Another genuine, fresh report, the same reports reordered, one dropped: the digest differs.
    let mut swapped = node.evidence(&measurements(), &honest(8));
    swapped.gpus[5].report = shared::b64::encode(node.report(5, &gpu_nonce(&PIN, &NONCE), Some(5)));
    assert_eq!(check(&swapped, &policy), quote_refused("binding_mismatch"));
    let mut reordered = node.evidence(&measurements(), &Answer { devtools: Some(0), ..honest(8) });
    reordered.gpus.swap(0, 7);
    assert_eq!(check(&reordered, &policy), quote_refused("binding_mismatch"));
    let mut dropped = node.evidence(&measurements(), &honest(8));
    dropped.gpus.pop();
    assert_eq!(check(&dropped, &policy), quote_refused("binding_mismatch"));
}

#[test]
fn a_gpu_in_devtools_mode_is_refused_at_its_index() {
    let node = board();
    let mismatch = GpuError::MeasurementMismatch { index: 4 };
    let one = node.evidence(&measurements(), &Answer { devtools: Some(0), ..honest(1) });
    assert_eq!(check(&one, &policy(&node, 1)), Err(NodeError::Gpu { index: 0, error: mismatch.clone() }));
    let eight = node.evidence(&measurements(), &Answer { devtools: Some(3), ..honest(8) });
    assert_eq!(check(&eight, &policy(&node, 8)), Err(NodeError::Gpu { index: 3, error: mismatch }));
}

#[test]
fn fewer_or_more_gpus_than_the_policy_wants_are_refused() {
    let node = board();
    let count = |expected, got| Err(NodeError::GpuCount { expected, got });
    assert_eq!(check(&node.evidence(&measurements(), &honest(1)), &policy(&node, 8)), count(8, 1));
    assert_eq!(check(&node.evidence(&measurements(), &honest(0)), &policy(&node, 1)), count(1, 0));
    assert_eq!(check(&node.evidence(&measurements(), &honest(8)), &policy(&node, 1)), count(1, 8), "nor more");
}

#[test]
fn another_node_image_is_refused() {
    let node = board();
    let evidence = node.evidence(&measurements(), &Answer { mrtd: Some([0xee; 48]), ..honest(1) });
    assert_eq!(check(&evidence, &policy(&node, 1)), quote_refused("mrtd_unknown"));
}

#[test]
fn untrusted_dev_roots_are_refused() {
    let node = board();
    let evidence = node.evidence(&measurements(), &honest(1));
    let mut intel = policy(&node, 1);
    intel.tdx.root = TrustRoot::Intel;
    assert_eq!(check(&evidence, &intel), quote_refused("untrusted_root"));
    let mut nvidia = policy(&node, 1);
    nvidia.gpu.device_root = DeviceRoot::Nvidia;
    assert_eq!(
        check(&evidence, &nvidia),
        Err(NodeError::Gpu { index: 0, error: GpuError::Chain("the chain does not end at the pinned root") })
    );
}

#[test]
fn malformed_evidence_is_refused() {
    let node = board();
    let policy = policy(&node, 1);
    let honest = node.evidence(&measurements(), &honest(1));
    let malformed = |reason| Err(NodeError::Malformed(reason));
    let mut e = honest.clone();
    e.quote.replace_range(..2, "zz");
    assert_eq!(check(&e, &policy), malformed("quote is not hex"));
    let mut e = honest.clone();
    e.collateral = "not json".into();
    assert_eq!(check(&e, &policy), malformed("collateral"));
    let mut e = honest.clone();
    e.gpus[0].report = "not base64!".into();
    assert_eq!(check(&e, &policy), malformed("report is not base64"));
    let mut e = honest.clone();
    e.gpus[0].ocsp[1] = "not base64!".into();
    assert_eq!(check(&e, &policy), malformed("OCSP response is not base64"));
    let mut e = honest.clone();
    e.gpus = vec![honest.gpus[0].clone(); MAX_GPUS + 1];
    assert_eq!(check(&e, &policy), malformed("too many GPUs"));
}

#[test]
fn node_evidence_json_refuses_unknown_fields() {
    let honest = board().evidence(&measurements(), &honest(1));
    let json = serde_json::to_value(&honest).unwrap();
    assert_eq!(serde_json::from_value::<NodeEvidence>(json.clone()).unwrap(), honest);
    let mut extra = json.clone();
    extra["debug"] = true.into();
    assert!(serde_json::from_str::<NodeEvidence>(&extra.to_string()).is_err());
    let mut extra_gpu = json;
    extra_gpu["gpus"][0]["nonce"] = "00".into();
    assert!(serde_json::from_str::<NodeEvidence>(&extra_gpu.to_string()).is_err());
    // `ocsp` may be left out (a node that staples nothing; the GPU check then refuses it).
    let bare = r#"{"quote":"","collateral":"","gpus":[{"report":"","certificateChain":""}]}"#;
    assert!(serde_json::from_str::<NodeEvidence>(bare).unwrap().gpus[0].ocsp.is_empty());
}
