//! The agent's answer verifies under the enclave's own check (`shared::gpu::node::verify`), for
//! the nonce and key it was made for and no other. Development GPUs and quotes (feature `dev`).
#![cfg(feature = "dev")]

use std::sync::Arc;
use std::time::Duration;

use dev_gpu::node::DevNode;
use gpu_node::attest::{Attester, Collateral};
use gpu_node::dev::DevBoard;
use gpu_node::ocsp::Stapler;
use shared::attest::{Measurements, Policy, TrustRoot};
use shared::gpu::node::{NodeError, NodePolicy, verify};
use shared::gpu::{DeviceRoot, GpuPolicy, Verified};

const TDX_SEED: [u8; 32] = [0x21; 32];
const GPU_SEED: [u8; 32] = [0x22; 32];
const TEMPLATE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/test-vectors/nvidia-gpu-samples/go-nvattest-tools/test_raw_gpu_attestation_report.dat"
);
const MEASUREMENTS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../measurements/dev.json");

fn image() -> Measurements {
    Measurements::from_json(&std::fs::read_to_string(MEASUREMENTS).unwrap()).unwrap()
}

/// What the enclave's configuration would hold for this node: an independent copy of the
/// development PKIs, from the same seeds.
fn policy(gpus: usize) -> NodePolicy {
    let node = DevNode::new(&TDX_SEED, &GPU_SEED, 1, std::fs::read(TEMPLATE).unwrap());
    let (tdx_root, gpu_root) = node.dev_roots();
    NodePolicy {
        tdx: Policy::new(TrustRoot::Dev(tdx_root), image()),
        gpu: GpuPolicy {
            firmware: vec![node.firmware()],
            max_ocsp_age_secs: 86_400,
            device_root: DeviceRoot::Dev(gpu_root),
        },
        gpus,
    }
}

async fn attester(gpus: u8) -> (Attester, standins::Running, standins::nvidia_ocsp::Recorder) {
    let board = Arc::new(DevBoard::new(&TDX_SEED, &GPU_SEED, gpus, std::fs::read(TEMPLATE).unwrap(), image()));
    let (responder, recorder) = standins::nvidia_ocsp::start(board.ocsp_answers(shared::time::unix_now() - 60)).await;
    let ocsp = Stapler::new(&format!("{}/", responder.base_url), Duration::from_secs(3600));
    let attester = Attester::new(board.clone(), board.clone(), Collateral::Fixed(board.collateral()), ocsp);
    (attester, responder, recorder)
}

#[tokio::test]
async fn the_answer_verifies_for_its_nonce_and_key_only() {
    let (attester, _responder, recorder) = attester(2).await;
    let (pin, nonce) = ([0x5a; 32], [0x07; 32]);
    let evidence = attester.evidence(&pin, &nonce).await.unwrap();
    let now = shared::time::unix_now();
    let verdict = verify(&evidence, &pin, &nonce, &policy(2), now, &Verified::default()).unwrap();
    assert_eq!(verdict.gpus.len(), 2);
    // Every block of the template is pinned by the development policy.
    assert!(verdict.gpus.iter().all(|g| g.measurements_matched == 64), "{verdict:?}");
    assert_eq!(verdict.tls_spki_sha256, hex::encode(pin));
    // Stapled (the development chain is leaf, BROM, ICA, root): each GPU's BROM, and once the
    // ICA they share.
    assert_eq!(recorder.requests().len(), 3);
    assert!(evidence.gpus.iter().all(|g| g.ocsp.len() == 2));

    // Another nonce, another key, another GPU count: refused, each for its own reason.
    let cache = Verified::default();
    let other = verify(&evidence, &pin, &[0x08; 32], &policy(2), now, &cache).unwrap_err();
    assert!(matches!(other, NodeError::Quote(_)), "{other}");
    let other = verify(&evidence, &[0x5b; 32], &nonce, &policy(2), now, &cache).unwrap_err();
    assert!(matches!(other, NodeError::Quote(_)), "{other}");
    let other = verify(&evidence, &pin, &nonce, &policy(3), now, &cache).unwrap_err();
    assert!(matches!(other, NodeError::GpuCount { expected: 3, got: 2 }), "{other}");

    // A second answer is fresh (new reports for the new nonce) and reuses the stapled answers.
    let again = attester.evidence(&pin, &[0x09; 32]).await.unwrap();
    assert_ne!(again.gpus[0].report, evidence.gpus[0].report);
    assert_eq!(again.gpus[0].ocsp, evidence.gpus[0].ocsp);
    assert_eq!(recorder.requests().len(), 3);
    verify(&again, &pin, &[0x09; 32], &policy(2), now, &cache).unwrap();
}

#[tokio::test]
async fn without_ocsp_answers_the_enclave_refuses_the_gpus() {
    let (attester, _responder, recorder) = attester(1).await;
    recorder.fail_with(Some(standins::nvidia_ocsp::Failure::Status(503)));
    let (pin, nonce) = ([0x5a; 32], [0x07; 32]);
    let evidence = attester.evidence(&pin, &nonce).await.unwrap();
    assert!(evidence.gpus[0].ocsp.is_empty());
    let refused = verify(&evidence, &pin, &nonce, &policy(1), shared::time::unix_now(), &Verified::default());
    assert!(matches!(refused, Err(NodeError::Gpu { index: 0, .. })), "{refused:?}");
}
