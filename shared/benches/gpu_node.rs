//! A GPU node's whole attestation, as the enclave checks it before the first prompt and then
//! every `gpuReattestSecs`: the node's TDX quote (dcap-qvl and our policy, binding included)
//! and every GPU's evidence, for a one-GPU node and an eight-GPU board. Development evidence
//! (`dev_gpu::node`: the real H100 report re-issued by development devices, a development
//! quote). Cold: a new signature cache; warm: the cache of the previous run, so each GPU costs
//! its report's signature and each node its quote.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use dev_gpu::node::{Answer, DevNode};
use shared::attest::{Measurements, Policy, TrustRoot};
use shared::gpu::node::{NodePolicy, verify};
use shared::gpu::{DeviceRoot, GpuPolicy, Verified};

const TEMPLATE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../shared/test-vectors/nvidia-gpu-samples/go-nvattest-tools/test_raw_gpu_attestation_report.dat"
);
const DEV_MEASUREMENTS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../measurements/dev.json");
const NOW: u64 = 1_800_000_000;
const PIN: [u8; 32] = [0x9a; 32];
const NONCE: [u8; 32] = [0x4e; 32];

fn policy(board: &DevNode, image: &Measurements, gpus: usize) -> NodePolicy {
    let firmware = board.firmware();
    let (tdx_root, gpu_root) = board.dev_roots();
    NodePolicy {
        tdx: Policy::new(TrustRoot::Dev(tdx_root), image.clone()),
        gpu: GpuPolicy { firmware: vec![firmware], max_ocsp_age_secs: 86_400, device_root: DeviceRoot::Dev(gpu_root) },
        gpus,
    }
}

fn bench(c: &mut Criterion) {
    let template = std::fs::read(TEMPLATE).unwrap();
    let image = Measurements::from_json(&std::fs::read_to_string(DEV_MEASUREMENTS).unwrap()).unwrap();
    let board = DevNode::new(&[0x4e; 32], &[0x47; 32], 8, template);
    for gpus in [1, 8] {
        let evidence = board.evidence(&image, &Answer::honest(&PIN, &NONCE, gpus, NOW - 60));
        let policy = policy(&board, &image, gpus);
        c.bench_function(&format!("gpu node: quote + {gpus} GPU(s), cold"), |b| {
            b.iter(|| verify(black_box(&evidence), &PIN, &NONCE, &policy, NOW, &Verified::default()).is_ok())
        });
        let cache = Verified::default();
        assert!(verify(&evidence, &PIN, &NONCE, &policy, NOW, &cache).is_ok());
        c.bench_function(&format!("gpu node: quote + {gpus} GPU(s), warm"), |b| {
            b.iter(|| verify(black_box(&evidence), &PIN, &NONCE, &policy, NOW, &cache).is_ok())
        });
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = bench
}
criterion_main!(benches);
