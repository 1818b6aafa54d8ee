//! GPU evidence verification on the real H100 golden path (go-nvattest-tools): the whole check
//! (report, five-certificate chain, signature, FWID, nonce, 33 golden measurements, three OCSP
//! answers), the authentication alone, and the eight GPUs of the B200 set authenticated one by
//! one; cold (a new cache each time) and warm (the same GPUs again, the signatures of their
//! certificates and OCSP answers remembered). Target (issue 28): ≤ 2 ms per GPU warm.

use std::collections::BTreeMap;
use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use shared::gpu::{DeviceRoot, Evidence, Firmware, GpuPolicy, Verified, authenticate, verify};

const SAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/test-vectors/nvidia-gpu-samples");
const NOW: u64 = 1_755_777_600;

fn read(path: &str) -> Vec<u8> {
    std::fs::read(format!("{SAMPLES}/{path}")).unwrap()
}

fn bench(c: &mut Criterion) {
    let dir = "go-nvattest-tools";
    let report = read(&format!("{dir}/test_raw_gpu_attestation_report.dat"));
    let chain = read(&format!("{dir}/test_gpu_attestation_certificate_chain.dat"));
    let ocsp: Vec<Vec<u8>> = ["l2", "l3", "l4"]
        .iter()
        .map(|l| {
            let text = read(&format!("{dir}/ocsp/test_gpu_certificate_{l}_base64encoded_ocsp_response.dat"));
            shared::b64::decode(String::from_utf8(text).unwrap().trim()).unwrap()
        })
        .collect();
    let nonce: [u8; 32] = report[4..36].try_into().unwrap();
    // The report's own measurements as the golden values (the bench times the comparison, not
    // the RIMs; shared/tests/gpu_samples.rs checks them against the RIMs).
    let parsed = shared::gpu::Report::parse(&report).unwrap();
    let measurements: BTreeMap<u8, Vec<String>> =
        parsed.measurements.iter().map(|m| (m.index - 1, vec![hex::encode(&m.value)])).collect();
    let o = &parsed.opaque;
    let policy = GpuPolicy {
        firmware: vec![Firmware {
            driver: o.driver.clone(),
            vbios: o.vbios.clone(),
            project: o.project.clone(),
            project_sku: o.project_sku.clone(),
            chip_sku: o.chip_sku.clone(),
            measurements,
            rims: vec![],
        }],
        max_ocsp_age_secs: 86_400,
        device_root: DeviceRoot::Nvidia,
    };
    let evidence = Evidence { report: &report, certificate_chain: &chain, ocsp: &ocsp };
    let warm = Verified::default();
    assert!(verify(&evidence, &nonce, &policy, NOW, &warm).is_ok());
    c.bench_function("gpu verify, one H100, cold (chain, signature, 64 measurements, 3 OCSP)", |b| {
        b.iter(|| verify(black_box(&evidence), &nonce, &policy, NOW, &Verified::default()).unwrap())
    });
    c.bench_function(
        "gpu verify, one H100, warm (the same GPU again: its certificates and OCSP answers remembered)",
        |b| b.iter(|| verify(black_box(&evidence), &nonce, &policy, NOW, &warm).unwrap()),
    );
    c.bench_function("gpu authenticate, one H100, cold (chain, signature, FWID, nonce)", |b| {
        b.iter(|| authenticate(black_box(&evidence), &DeviceRoot::Nvidia, &nonce, NOW, &Verified::default()).is_ok())
    });

    let json: serde_json::Value = serde_json::from_slice(&read("go-nvattest-tools/test_mpt_data.json")).unwrap();
    let gpus: Vec<(Vec<u8>, Vec<u8>)> = json["gpus"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            let text = g.to_string();
            let b64 = |key: &str| -> Vec<Vec<u8>> {
                text.match_indices(key)
                    .map(|(at, _)| {
                        let rest = text[at + key.len()..].trim_start_matches(['"', '\'', ':', ' ', '\\']);
                        let end = rest.find(|c: char| !(c.is_ascii_alphanumeric() || "+/=".contains(c))).unwrap();
                        shared::b64::decode(&rest[..end]).unwrap()
                    })
                    .collect()
            };
            (b64("py/b64").remove(0), b64("pem").concat())
        })
        .collect();
    let mpt_nonce: [u8; 32] = gpus[0].0[4..36].try_into().unwrap();
    let eight = |cache: &Verified| {
        gpus.iter().all(|(report, chain)| {
            let evidence = Evidence { report, certificate_chain: chain, ocsp: &[] };
            authenticate(&evidence, &DeviceRoot::Nvidia, &mpt_nonce, NOW, cache).is_ok()
        })
    };
    c.bench_function("gpu authenticate, eight B200s, cold", |b| b.iter(|| eight(&Verified::default())));
    let warm = Verified::default();
    assert!(eight(&warm));
    c.bench_function("gpu authenticate, eight B200s, warm", |b| b.iter(|| eight(&warm)));
}

criterion_group!(benches, bench);
criterion_main!(benches);
