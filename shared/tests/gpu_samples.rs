//! The GPU evidence verifier on real NVIDIA evidence (`../shared/test-vectors/nvidia-gpu-samples`,
//! README there): the H100 golden path of go-nvattest-tools (report, chain, the driver and VBIOS
//! RIMs' golden values, NVIDIA's stapled OCSP answers) accepted at its verification time, and
//! refused for each thing that can be wrong; NVIDIA's own positive and negative samples.
#![cfg(feature = "gpu")]

#[cfg(feature = "gpu-ppcie")]
use crate::common::pickled;
use crate::common::read;

use std::collections::BTreeMap;

use shared::gpu::{DeviceRoot, Evidence, Firmware, GpuError, GpuPolicy, Verified, authenticate, verify};

/// The requester nonce of the NVIDIA samples (README: `931d8dd0…64dfcb`).
const SAMPLE_NONCE: &str = "931d8dd0add203ac3d8b4fbde75e115278eefcdceac5b87671a748f32364dfcb";
/// 2025-08-21T12:00:00Z: inside the device OCSP answers' day (README "Times to verify at").
const OCSP_DAY: u64 = 1_755_777_600;

fn nonce(text: &str) -> [u8; 32] {
    hex::decode(text).unwrap().try_into().unwrap()
}

/// The golden values of a RIM: every active measurement's `Hash0..HashN-1`, by index (read with
/// a plain scan; the RIM tool checks the signature and schema, this only needs the payload).
fn rim_measurements(path: &str) -> BTreeMap<u8, Vec<String>> {
    let xml = String::from_utf8(read(path)).unwrap();
    let attribute = |element: &str, name: &str| {
        let at = element.find(&format!(" {name}=\""))? + name.len() + 3;
        Some(element[at..at + element[at..].find('"')?].to_string())
    };
    let mut out = BTreeMap::new();
    for element in xml.split("<ns0:Resource ").skip(1).map(|e| &e[..e.find("/>").unwrap()]) {
        if attribute(element, "active").as_deref() != Some("True") {
            continue;
        }
        let index: u8 = attribute(element, "index").unwrap().parse().unwrap();
        let n: usize = attribute(element, "alternatives").unwrap().parse().unwrap();
        let hashes = (0..n).map(|i| attribute(element, &format!("ns2:Hash{i}")).unwrap()).collect();
        assert!(out.insert(index, hashes).is_none(), "index {index} twice");
    }
    out
}

struct GoldenPath {
    report: Vec<u8>,
    chain: Vec<u8>,
    ocsp: Vec<Vec<u8>>,
    policy: GpuPolicy,
}

fn golden_path() -> GoldenPath {
    let dir = "go-nvattest-tools";
    let mut measurements = rim_measurements(&format!("{dir}/rim/NV_GPU_DRIVER_GH100_550.90.07.xml"));
    for (index, values) in rim_measurements(&format!("{dir}/rim/NV_GPU_VBIOS_1010_0200_882_96009F0001.xml")) {
        assert!(measurements.insert(index, values).is_none(), "the RIMs share index {index}");
    }
    assert_eq!(measurements.len(), 33, "21 driver and 12 VBIOS measurements are active");
    let firmware = Firmware {
        driver: "550.90.07".into(),
        vbios: "96.00.9F.00.01".into(),
        project: "1010".into(),
        project_sku: "0200".into(),
        chip_sku: "882".into(),
        measurements,
        rims: vec![],
    };
    let ocsp = ["l2", "l3", "l4"]
        .map(|level| {
            let text = read(&format!("{dir}/ocsp/test_gpu_certificate_{level}_base64encoded_ocsp_response.dat"));
            shared::b64::decode(String::from_utf8(text).unwrap().trim()).unwrap()
        })
        .to_vec();
    GoldenPath {
        report: read(&format!("{dir}/test_raw_gpu_attestation_report.dat")),
        chain: read(&format!("{dir}/test_gpu_attestation_certificate_chain.dat")),
        ocsp,
        policy: GpuPolicy { firmware: vec![firmware], max_ocsp_age_secs: 24 * 3600, device_root: DeviceRoot::Nvidia },
    }
}

impl GoldenPath {
    fn verify_at(&self, now: u64) -> Result<shared::gpu::GpuVerdict, GpuError> {
        let evidence = Evidence { report: &self.report, certificate_chain: &self.chain, ocsp: &self.ocsp };
        verify(&evidence, &nonce(SAMPLE_NONCE), &self.policy, now, &Verified::default())
    }

    fn verify(&self) -> Result<shared::gpu::GpuVerdict, GpuError> {
        self.verify_at(OCSP_DAY)
    }
}

#[test]
fn the_h100_golden_path_is_accepted() {
    let verdict = golden_path().verify().unwrap();
    assert_eq!((verdict.driver.as_str(), verdict.vbios.as_str()), ("550.90.07", "96.00.9F.00.01"));
    assert_eq!(verdict.board, "1010-0200-882");
    // 33 golden values, all equal (NVDEC0 is disabled, and its measurement matches anyway).
    assert_eq!(verdict.measurements_matched, 33);
    assert!(verdict.fwid.starts_with("f5c384aebb579217a2c66b17ed0f28e6"), "{}", verdict.fwid);
    // 2025-08-21T06:47:07Z, the oldest of the three answers.
    assert_eq!(verdict.ocsp_produced_at, 1_755_758_827);
}

/// Signatures verified once are remembered, and only for exactly those bytes: after a good run
/// with one cache, every altered input is still refused.
#[test]
fn the_cache_remembers_exactly_what_verified() {
    let g = golden_path();
    let cache = Verified::default();
    let check = |g: &GoldenPath| {
        let evidence = Evidence { report: &g.report, certificate_chain: &g.chain, ocsp: &g.ocsp };
        verify(&evidence, &nonce(SAMPLE_NONCE), &g.policy, OCSP_DAY, &cache)
    };
    let first = check(&g).unwrap();
    assert_eq!(check(&g), Ok(first));
    let mut altered = golden_path();
    let at = altered.ocsp[0].len() / 3;
    altered.ocsp[0][at] ^= 1;
    assert!(matches!(check(&altered), Err(GpuError::Ocsp(_))));
    let mut altered = golden_path();
    let last = altered.report.len() - 1;
    altered.report[last] ^= 1;
    assert_eq!(check(&altered), Err(GpuError::Signature));
}

#[test]
fn each_broken_part_of_the_golden_path_is_refused_by_name() {
    // The report: a signature byte, a signed byte (the nonce), bytes after the signature, cut short.
    let mut g = golden_path();
    let last = g.report.len() - 1;
    g.report[last] ^= 1;
    assert_eq!(g.verify(), Err(GpuError::Signature));
    let mut g = golden_path();
    g.report[10] ^= 1;
    assert_eq!(g.verify(), Err(GpuError::Signature), "the request's nonce is signed");
    let mut g = golden_path();
    g.report.push(0);
    assert_eq!(g.verify(), Err(GpuError::Malformed("bytes after the signature")));
    let mut g = golden_path();
    g.report.truncate(1000);
    assert!(matches!(g.verify(), Err(GpuError::Malformed(_))));
    // Another nonce.
    let g = golden_path();
    let evidence = Evidence { report: &g.report, certificate_chain: &g.chain, ocsp: &g.ocsp };
    assert_eq!(verify(&evidence, &[7; 32], &g.policy, OCSP_DAY, &Verified::default()), Err(GpuError::Nonce));
    // The chain: the root left out, a chain of another GPU (its key did not sign this report).
    let mut g = golden_path();
    let pem = String::from_utf8(g.chain.clone()).unwrap();
    let cut = pem.rfind("-----BEGIN CERTIFICATE-----").unwrap();
    g.chain = pem.as_bytes()[..cut].to_vec();
    assert_eq!(g.verify(), Err(GpuError::Chain("the chain does not end at the pinned root")));
    // A link left out (the BROM certificate): the leaf's issuer is not the next certificate.
    let mut g = golden_path();
    let starts: Vec<usize> = pem.match_indices("-----BEGIN CERTIFICATE-----").map(|(i, _)| i).collect();
    g.chain = [&pem.as_bytes()[..starts[1]], &pem.as_bytes()[starts[2]..]].concat();
    assert_eq!(g.verify(), Err(GpuError::Chain("a certificate's issuer is not the next certificate")));
    // Other H100s' chains (their leaves name other firmware), and the root replaced by
    // NVIDIA's RIM root.
    let mut g = golden_path();
    g.chain = read("attestation-sdk/hopperCertChain.txt");
    assert_eq!(g.verify(), Err(GpuError::FwidMismatch));
    let mut g = golden_path();
    let other: serde_json::Value = serde_json::from_slice(&read("attestation-sdk/hopper_evidence.json")).unwrap();
    g.chain = shared::b64::decode(other[0]["certificate"].as_str().unwrap()).unwrap();
    assert_eq!(g.verify(), Err(GpuError::FwidMismatch));
    let mut g = golden_path();
    g.chain = [&pem.as_bytes()[..cut], &read("attestation-sdk/rim_root.crt")[..]].concat();
    assert!(matches!(g.verify(), Err(GpuError::Chain(_))));
    // Reference values: a firmware not pinned, a golden value that differs (as a GPU in
    // devtools mode would show), a golden index the report lacks.
    let mut g = golden_path();
    g.policy.firmware[0].driver = "550.90.08".into();
    assert!(matches!(g.verify(), Err(GpuError::NoReference { firmware }) if firmware.contains("550.90.07")));
    let mut g = golden_path();
    g.policy.firmware[0].measurements.insert(9, vec!["00".repeat(48)]);
    assert_eq!(g.verify(), Err(GpuError::MeasurementMismatch { index: 9 }));
    let mut g = golden_path();
    g.policy.firmware[0].measurements.insert(64, vec!["00".repeat(48)]);
    assert_eq!(g.verify(), Err(GpuError::MeasurementMissing { index: 64 }), "64 blocks: RIM indexes 0 to 63");
    // NVDEC0 disabled: its golden value may differ.
    let mut g = golden_path();
    g.policy.firmware[0].measurements.insert(35, vec!["00".repeat(48)]);
    assert_eq!(g.verify().map(|v| v.measurements_matched), Ok(32));
    // An answer for another certificate in place of one of the chain's.
    let mut g = golden_path();
    g.ocsp[1] = g.ocsp[0].clone();
    assert_eq!(g.verify(), Err(GpuError::Ocsp("no valid response for a certificate of the chain")));
    // OCSP: an answer missing, answers from the day after they expire, older than allowed.
    let mut g = golden_path();
    g.ocsp.remove(1);
    assert_eq!(g.verify(), Err(GpuError::Ocsp("no valid response for a certificate of the chain")));
    let g = golden_path();
    assert_eq!(g.verify_at(OCSP_DAY + 86_400), Err(GpuError::Ocsp("a response is not current")));
    let mut g = golden_path();
    g.policy.max_ocsp_age_secs = 3_600;
    assert_eq!(g.verify(), Err(GpuError::Ocsp("a response is older than the policy allows")));
    // An answer with a byte of its signed data changed.
    let mut g = golden_path();
    let at = g.ocsp[0].len() / 3;
    g.ocsp[0][at] ^= 1;
    assert!(matches!(g.verify(), Err(GpuError::Ocsp(_))));
}

/// NVIDIA's attestation-sdk samples (README table): accepted ones authenticate, the broken
/// signature and the expired chain do not.
#[test]
fn nvidias_samples_get_their_expected_verdicts() {
    let hex_file =
        |name: &str| hex::decode(String::from_utf8(read(&format!("attestation-sdk/{name}"))).unwrap().trim()).unwrap();
    let nonce_of = |report: &[u8]| -> [u8; 32] { report[4..36].try_into().unwrap() };
    let now = OCSP_DAY;
    // Blackwell: signature, chain to the pinned root, FWID under 2.23.133.5.4.1.1.
    let report = hex_file("blackwellAttestationReport.txt");
    let chain = read("attestation-sdk/blackwellCertChain.txt");
    let evidence = Evidence { report: &report, certificate_chain: &chain, ocsp: &[] };
    let ok = authenticate(&evidence, &DeviceRoot::Nvidia, &nonce(SAMPLE_NONCE), now, &Verified::default()).unwrap();
    assert_eq!(ok.report.opaque.driver, "575.32");
    assert_eq!(Some(hex::decode(&ok.fwid).unwrap()), ok.chain.leaf_fwid);
    // The H100 sample of driver 535.86.09: genuine, but it predates the firmware id, which
    // this verifier requires.
    let report = hex_file("hopperAttestationReport.txt");
    let chain = read("attestation-sdk/hopperCertChain.txt");
    let evidence = Evidence { report: &report, certificate_chain: &chain, ocsp: &[] };
    assert_eq!(
        authenticate(&evidence, &DeviceRoot::Nvidia, &nonce_of(&report), now, &Verified::default()).err(),
        Some(GpuError::FwidMissing)
    );
    // NVIDIA's measurement-mismatch RIMs against that report: refused at the first index whose
    // golden value differs.
    let parsed = shared::gpu::Report::parse(&report).unwrap();
    for rim in [
        "NV_GPU_DRIVER_GH100_535.86.09_measurement_mismatch.xml",
        "NV_GPU_VBIOS_1010_0200_882_96005E0001_measurement_mismatch.xml",
    ] {
        let firmware = Firmware {
            driver: parsed.opaque.driver.clone(),
            vbios: parsed.opaque.vbios.clone(),
            project: parsed.opaque.project.clone(),
            project_sku: parsed.opaque.project_sku.clone(),
            chip_sku: parsed.opaque.chip_sku.clone(),
            measurements: rim_measurements(&format!("attestation-sdk/{rim}")),
            rims: vec![],
        };
        assert!(matches!(firmware.check(&parsed), Err(GpuError::MeasurementMismatch { .. })), "{rim}");
    }
    // "One signature byte wrong": refused. Its firmware id (87a82912…) is in no chain of the
    // folder (its own chain was not published), so with any of them it is refused for that
    // first; the golden path's flipped signature byte above shows the signature check itself.
    let bad = hex_file("hopperAttestationReportInvalidSignature.txt");
    for chain in ["attestation-sdk/hopperCertChain.txt", "go-nvattest-tools/test_gpu_attestation_certificate_chain.dat"]
    {
        let chain = read(chain);
        let evidence = Evidence { report: &bad, certificate_chain: &chain, ocsp: &[] };
        assert_eq!(
            authenticate(&evidence, &DeviceRoot::Nvidia, &nonce_of(&bad), now, &Verified::default()).err(),
            Some(GpuError::FwidMismatch)
        );
    }
    // The "expired" chain: its certificates run to 9999-12-31T23:59:59Z, so it is refused at a
    // time after that and accepted before.
    let expired = hex_file("hopperAttestationReportExpired.txt");
    let expired_chain = read("attestation-sdk/hopperCertChainExpired.txt");
    let evidence = Evidence { report: &expired, certificate_chain: &expired_chain, ocsp: &[] };
    assert_eq!(
        authenticate(&evidence, &DeviceRoot::Nvidia, &nonce_of(&expired), 253_402_300_800, &Verified::default()).err(),
        Some(GpuError::Chain("a certificate is not valid at this time"))
    );
    assert!(
        authenticate(&evidence, &DeviceRoot::Nvidia, &nonce_of(&expired), 253_402_300_799, &Verified::default())
            .is_ok()
    );
    // Serialized evidence as nvattest writes it (one H100 of driver 590.12).
    let json: serde_json::Value = serde_json::from_slice(&read("attestation-sdk/hopper_evidence.json")).unwrap();
    let item = &json[0];
    let report = shared::b64::decode(item["evidence"].as_str().unwrap()).unwrap();
    let chain = shared::b64::decode(item["certificate"].as_str().unwrap()).unwrap();
    let evidence = Evidence { report: &report, certificate_chain: &chain, ocsp: &[] };
    let ok = authenticate(
        &evidence,
        &DeviceRoot::Nvidia,
        &nonce(item["nonce"].as_str().unwrap()),
        now,
        &Verified::default(),
    )
    .unwrap();
    assert_eq!(ok.report.opaque.driver, "590.12");
}

#[test]
fn the_pinned_root_is_nvidias_device_identity_ca() {
    // The pin as NVIDIA's verifiers publish it (notes/gpu.md §1.3: `a90c4eb5acfd3e3d…dd85b06a4`),
    // and the root of every sample chain hashes to it.
    let pin = hex::encode(shared::gpu::chain::NVIDIA_DEVICE_ROOT_SPKI_SHA256);
    assert!(pin.starts_with("a90c4eb5acfd3e3d") && pin.ends_with("dd85b06a4"), "{pin}");
    use shared::gpu::chain::{NVIDIA_DEVICE_ROOT_SPKI_SHA256, verify};
    for path in
        ["go-nvattest-tools/test_gpu_attestation_certificate_chain.dat", "attestation-sdk/blackwellCertChain.txt"]
    {
        let chain = verify(&read(path), &NVIDIA_DEVICE_ROOT_SPKI_SHA256, OCSP_DAY, &Verified::default()).unwrap();
        assert_eq!(chain.certificates.len(), 5, "{path}");
        let mut other = NVIDIA_DEVICE_ROOT_SPKI_SHA256;
        other[0] ^= 1;
        assert!(verify(&read(path), &other, OCSP_DAY, &Verified::default()).is_err(), "{path}");
    }
}

/// Every GPU of the B200 multi-GPU set and the H100 protected-PCIe set authenticates:
/// signature, chain to the pinned root, firmware id, one nonce for the set. So do the
/// protected-PCIe set's four NVSwitches, whose reports carry no firmware id
/// (`authenticate_switch`); the board's topology is `gpu_topology.rs`'s.
#[cfg(feature = "gpu-ppcie")]
#[test]
fn the_multi_gpu_sets_authenticate_under_one_nonce() {
    use shared::gpu::authenticate_switch;
    for (file, group, prefix, count) in [
        ("go-nvattest-tools/test_mpt_data.json", "gpus", "cdb72201", 8),
        ("go-nvattest-tools/test_ppcie_data.json", "gpus", "1234567890123456", 8),
        ("go-nvattest-tools/test_ppcie_data.json", "nvswitches", "1234567890123456", 4),
    ] {
        let json: serde_json::Value = serde_json::from_slice(&read(file)).unwrap();
        let items = json[group].as_array().unwrap();
        assert_eq!(items.len(), count, "{file}");
        let mut nonces = std::collections::BTreeSet::new();
        for item in items {
            let report = pickled(item, "py/b64").remove(0);
            let chain: Vec<u8> = pickled(item, "pem").concat();
            let nonce: [u8; 32] = report[4..36].try_into().unwrap();
            let evidence = Evidence { report: &report, certificate_chain: &chain, ocsp: &[] };
            let cache = Verified::default();
            match group {
                "gpus" => {
                    let gpu = authenticate(&evidence, &DeviceRoot::Nvidia, &nonce, OCSP_DAY, &cache).unwrap();
                    assert_eq!(Some(hex::decode(&gpu.fwid).unwrap()), gpu.report.opaque.fwid, "{file}");
                }
                _ => {
                    let switch = authenticate_switch(&evidence, &DeviceRoot::Nvidia, &nonce, OCSP_DAY, &cache).unwrap();
                    assert_eq!((switch.fwid, switch.report.opaque.fwid), (None, None), "{file}");
                    // The GPU path still refuses a report without a firmware id.
                    assert_eq!(
                        authenticate(&evidence, &DeviceRoot::Nvidia, &nonce, OCSP_DAY, &cache).err(),
                        Some(GpuError::FwidMissing),
                        "{file}"
                    );
                }
            }
            nonces.insert(hex::encode(nonce));
        }
        assert_eq!(nonces.len(), 1, "{file}");
        assert!(nonces.first().unwrap().starts_with(prefix), "{file}: {nonces:?}");
    }
}
