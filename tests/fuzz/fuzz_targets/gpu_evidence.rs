//! NVIDIA GPU evidence (`shared::gpu`), which a GPU node hands the enclave: the SPDM report
//! parser is exact (what it signs is the input less the signature) and never panics; nor do the
//! certificate chain and OCSP readers on whatever they are given, nor a whole node's answer to
//! `/attest` (`shared::gpu::node`: JSON, hex, base64, collateral, quote, then every GPU).
#![no_main]

use libfuzzer_sys::fuzz_target;
use shared::attest::{Measurements, Policy, TrustRoot};
use shared::gpu::chain::{NVIDIA_DEVICE_ROOT_SPKI_SHA256, verify};
use shared::gpu::node::{self, NodeEvidence, NodePolicy};
use shared::gpu::{DeviceRoot, Evidence, GpuPolicy, Report, Verified, authenticate};

/// 2025-08-21T12:00:00Z, the samples' verification day.
const NOW: u64 = 1_755_777_600;

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else { return };
    match mode % 4 {
        // The report alone.
        0 => {
            if let Ok(report) = Report::parse(rest) {
                assert_eq!(report.signed.len() + 96, rest.len());
                assert_eq!(report.signed, &rest[..report.signed.len()]);
                let mut seen = std::collections::BTreeSet::new();
                assert!(report.measurements.iter().all(|m| seen.insert(m.index)));
            }
        }
        // A certificate chain.
        1 => {
            let _ = verify(rest, &NVIDIA_DEVICE_ROOT_SPKI_SHA256, NOW, &Verified::default());
        }
        // A node's answer, JSON.
        3 => {
            if let Ok(evidence) = serde_json::from_slice::<NodeEvidence>(rest) {
                let image = Measurements::pinning_nothing();
                let policy = NodePolicy {
                    tdx: Policy::new(TrustRoot::Intel, image),
                    gpu: GpuPolicy { firmware: vec![], max_ocsp_age_secs: 86_400, device_root: DeviceRoot::Nvidia },
                    gpus: 1,
                };
                let _ = node::verify(&evidence, &[0; 32], &[0; 32], &policy, NOW, &Verified::default());
            }
        }
        // `report length u16 LE ‖ report ‖ chain length u16 LE ‖ chain ‖ one OCSP answer`: the
        // whole report check, and the OCSP answer against the chain when the chain verifies.
        _ => {
            let split = |bytes: &[u8]| -> Option<(Vec<u8>, Vec<u8>)> {
                let (len, rest) = bytes.split_at_checked(2)?;
                let (part, rest) = rest.split_at_checked(usize::from(u16::from_le_bytes([len[0], len[1]])))?;
                Some((part.to_vec(), rest.to_vec()))
            };
            let Some((report, rest)) = split(rest) else { return };
            let Some((chain, ocsp)) = split(&rest) else { return };
            let ocsp = [ocsp];
            let evidence = Evidence { report: &report, certificate_chain: &chain, ocsp: &ocsp };
            let cache = Verified::default();
            let _ = authenticate(&evidence, &DeviceRoot::Nvidia, &[0; 32], NOW, &cache);
            if let Ok(verified) = verify(&chain, &NVIDIA_DEVICE_ROOT_SPKI_SHA256, NOW, &cache) {
                let _ = shared::gpu::ocsp::check_chain(&verified.certificates, &ocsp, NOW, u64::MAX, &cache);
            }
        }
    }
});
