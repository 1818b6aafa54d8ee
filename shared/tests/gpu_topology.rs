//! NVSwitch evidence and the protected-PCIe topology on real NVIDIA evidence
//! (`../shared/test-vectors/nvidia-gpu-samples`, README there): go-nvattest-tools' PPCIE set,
//! eight H100s and four LS10 NVSwitches of one HGX board under one nonce, authenticates device by
//! device and is one board; each thing that can be wrong with a board is refused by name. The
//! topology check reads parsed reports only, so its faults are made by changing report bytes and
//! parsing again (the changed reports would no longer verify, which is another check's job).
#![cfg(feature = "gpu-ppcie")]

use crate::common::{pickled, read};

use std::collections::BTreeMap;

use shared::gpu::chain::{self, NVIDIA_DEVICE_ROOT_SPKI_SHA256};
use shared::gpu::topology::{Gpu, Mode, PPCIE_GPUS, PPCIE_SWITCHES, mode};
use shared::gpu::{
    DeviceRoot, Evidence, GpuError, Pdi, Ppcie, Report, SwitchFirmware, SwitchPolicy, TopologyError, Verified,
    authenticate, authenticate_switch, check_ppcie, verify_switch,
};

/// 2025-08-21T12:00:00Z: a time inside every sample chain's validity.
const NOW: u64 = 1_755_777_600;

/// One device's report and PEM chain.
#[derive(Clone)]
struct Device {
    report: Vec<u8>,
    chain: Vec<u8>,
}

impl Device {
    fn evidence(&self) -> Evidence<'_> {
        Evidence { report: &self.report, certificate_chain: &self.chain, ocsp: &[] }
    }

    /// The device's PDI, from its BROM certificate.
    fn pdi(&self) -> Pdi {
        chain::verify(&self.chain, &NVIDIA_DEVICE_ROOT_SPKI_SHA256, NOW, &Verified::default())
            .unwrap()
            .device_pdi()
            .unwrap()
    }
}

fn devices(file: &str, group: &str) -> Vec<Device> {
    let json: serde_json::Value = serde_json::from_slice(&read(file)).unwrap();
    json[group]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| Device { report: pickled(item, "py/b64").remove(0), chain: pickled(item, "pem").concat() })
        .collect()
}

/// The PPCIE set: (GPUs, switches).
fn ppcie() -> (Vec<Device>, Vec<Device>) {
    let file = "go-nvattest-tools/test_ppcie_data.json";
    (devices(file, "gpus"), devices(file, "nvswitches"))
}

/// The nonce all devices of a set answered.
fn nonce_of(device: &Device) -> [u8; 32] {
    device.report[4..36].try_into().unwrap()
}

/// The topology of GPUs (their PDIs and reports) and switch reports, parsed only.
fn topology(gpus: &[GpuReport], switches: &[Vec<u8>]) -> Result<Ppcie, TopologyError> {
    let gpu_reports: Vec<Report<'_>> = gpus.iter().map(|(_, r)| Report::parse(r).unwrap()).collect();
    let switch_reports: Vec<Report<'_>> = switches.iter().map(|r| Report::parse(r).unwrap()).collect();
    let gpus: Vec<Gpu<'_>> =
        gpus.iter().zip(&gpu_reports).map(|((pdi, _), report)| Gpu { pdi: *pdi, opaque: &report.opaque }).collect();
    let switches: Vec<_> = switch_reports.iter().map(|r| &r.opaque).collect();
    check_ppcie(&gpus, &switches)
}

/// A GPU as the topology check takes it: its PDI and its report.
type GpuReport = (Pdi, Vec<u8>);

/// The PPCIE board as the topology check takes it: its GPUs, its switches' reports.
fn board() -> (Vec<GpuReport>, Vec<Vec<u8>>) {
    let (gpus, switches) = ppcie();
    (gpus.iter().map(|g| (g.pdi(), g.report.clone())).collect(), switches.into_iter().map(|s| s.report).collect())
}

/// Replaces the first of the `occurrences` of `from` in `bytes` by `to`, or all of them; the
/// count is asserted, so a change lands in the field meant and nowhere else.
fn replace(bytes: &mut [u8], from: &[u8], to: &[u8], occurrences: usize, all: bool) {
    let at: Vec<usize> = bytes.windows(from.len()).enumerate().filter(|(_, w)| *w == from).map(|(i, _)| i).collect();
    assert_eq!(at.len(), occurrences, "{} in the report", hex::encode(from));
    for i in at.into_iter().take(if all { occurrences } else { 1 }) {
        bytes[i..i + to.len()].copy_from_slice(to);
    }
}

fn replace_first(bytes: &mut [u8], from: &[u8], to: &[u8], occurrences: usize) {
    replace(bytes, from, to, occurrences, false)
}

fn reversed(pdi: Pdi) -> [u8; 8] {
    let mut b = pdi.0;
    b.reverse();
    b
}

#[test]
fn the_ppcie_sample_authenticates_all_twelve_devices_and_is_one_board() {
    let (gpus, switches) = ppcie();
    assert_eq!((gpus.len(), switches.len()), (PPCIE_GPUS, PPCIE_SWITCHES));
    let nonce = nonce_of(&gpus[0]);
    assert!(hex::encode(nonce).starts_with("1234567890123456"));
    let cache = Verified::default();
    let gpus: Vec<_> =
        gpus.iter().map(|g| authenticate(&g.evidence(), &DeviceRoot::Nvidia, &nonce, NOW, &cache).unwrap()).collect();
    let switches: Vec<_> = switches
        .iter()
        .map(|s| authenticate_switch(&s.evidence(), &DeviceRoot::Nvidia, &nonce, NOW, &cache).unwrap())
        .collect();
    // What the sample shows: the GPUs (driver 570.124.06) say protected PCIe only through their
    // status field (no feature flag yet); the switches run BIOS 96.10.6D.00.01, carry no
    // firmware id, are locked, and name the PDI their BROM certificate carries.
    for g in &gpus {
        let o = &g.report.opaque;
        assert_eq!((o.driver.as_str(), o.feature_flag, o.protected_pcie), ("570.124.06", None, Some(0xaa)));
        assert_eq!(mode(o), Mode::Ppcie);
        assert_eq!(o.nvlink_switches.len(), 18, "one switch per NVLink");
    }
    for s in &switches {
        let fields = s.report.opaque.switch.as_ref().unwrap();
        assert_eq!((s.report.opaque.vbios.as_str(), s.fwid.as_deref()), ("96.10.6D.00.01", None));
        assert_eq!((fields.lock_status, fields.gpus.len(), s.report.measurements.len()), (Some(1), 8, 31));
        assert_eq!(s.chain.device_pdi(), Ok(s.pdi));
        assert!(s.chain.leaf_fwid.is_some(), "the leaf certifies a firmware id the report does not carry");
    }
    let gpu_views: Vec<Gpu<'_>> =
        gpus.iter().map(|g| Gpu { pdi: g.chain.device_pdi().unwrap(), opaque: &g.report.opaque }).collect();
    let switch_views: Vec<_> = switches.iter().map(|s| &s.report.opaque).collect();
    let board = check_ppcie(&gpu_views, &switch_views).unwrap();
    let mut switch_pdis: Vec<Pdi> = switches.iter().map(|s| s.pdi).collect();
    switch_pdis.sort();
    assert_eq!(board.switches, switch_pdis);
    // The PDIs as an independent reading of the sample's bytes (Python) found them.
    let hex = |pdis: &[Pdi]| pdis.iter().map(Pdi::to_string).collect::<Vec<_>>();
    assert_eq!(hex(&board.switches), ["7a66a96e440d8c05", "8f979938e67797d6", "93af0e6664ca5fee", "9fc9768ce6436f2b"]);
    assert_eq!(
        hex(&board.gpus),
        [
            "09562537c1b4ea4a",
            "0faaade460782321",
            "378d9b158601b30a",
            "430b5a9c8312cebb",
            "843e3c777992b92c",
            "c6b6e23025d8e93e",
            "eda9ed8a46828e43",
            "ffa7776bd407291f"
        ]
    );
    // Every switch names exactly the GPUs whose BROM certificates the board's chains carry.
    for s in &switches {
        let mut named = s.report.opaque.switch.as_ref().unwrap().gpus.clone();
        named.sort();
        assert_eq!(named, board.gpus);
    }
}

#[test]
fn each_topology_fault_is_refused_by_name() {
    let (gpus, switches) = board();
    assert!(topology(&gpus, &switches).is_ok());
    let switch_pdi = |report: &[u8]| Report::parse(report).unwrap().opaque.switch.unwrap().pdi;

    // Counts: a switch left out, a GPU left out.
    assert_eq!(topology(&gpus, &switches[..3]), Err(TopologyError::SwitchCount { found: 3 }));
    assert_eq!(topology(&gpus[1..], &switches), Err(TopologyError::GpuCount { found: 7 }));
    // One GPU's evidence in place of another's; one switch's in place of another's.
    let mut twice = gpus.clone();
    twice[7] = twice[0].clone();
    assert_eq!(topology(&twice, &switches), Err(TopologyError::DuplicateGpu { pdi: gpus[0].0 }));
    let mut twice = switches.clone();
    twice[3] = twice[0].clone();
    assert_eq!(topology(&gpus, &twice), Err(TopologyError::DuplicateSwitch { pdi: switch_pdi(&switches[0]) }));

    // A switch's GPU list with one PDI changed: it names a GPU that is not present.
    let mut changed = switches.clone();
    let mut other = gpus[3].0;
    other.0[7] ^= 1;
    replace_first(&mut changed[2], &gpus[3].0.0, &other.0, 1);
    assert_eq!(
        topology(&gpus, &changed),
        Err(TopologyError::SwitchNamesUnknownGpu { switch: switch_pdi(&switches[2]), gpu: other })
    );
    // A switch's GPU list naming one present GPU twice: another present GPU is missing from it.
    let mut changed = switches.clone();
    replace_first(&mut changed[1], &gpus[3].0.0, &gpus[4].0.0, 1);
    assert_eq!(
        topology(&gpus, &changed),
        Err(TopologyError::SwitchMissesGpu { switch: switch_pdi(&switches[1]), gpu: gpus[3].0 })
    );

    // A GPU with an NVLink to a switch that is not present (one link of eighteen changed).
    let switch1 = switch_pdi(&switches[1]);
    let mut unknown = switch1;
    unknown.0[0] ^= 1;
    let links_to_switch1 =
        Report::parse(&gpus[5].1).unwrap().opaque.nvlink_switches.iter().filter(|p| **p == switch1).count();
    assert!(links_to_switch1 >= 4, "{links_to_switch1}");
    let mut changed = gpus.clone();
    replace_first(&mut changed[5].1, &reversed(switch1), &reversed(unknown), links_to_switch1);
    assert_eq!(
        topology(&changed, &switches),
        Err(TopologyError::GpuNamesUnknownSwitch { gpu: gpus[5].0, switch: unknown })
    );
    // A GPU whose every NVLink to one switch is off.
    let mut changed = gpus.clone();
    replace(&mut changed[5].1, &reversed(switch1), &[0; 8], links_to_switch1, true);
    assert_eq!(topology(&changed, &switches), Err(TopologyError::GpuMissesSwitch { gpu: gpus[5].0, switch: switch1 }));

    // Modes: a real B200 of the MPT set (feature flag 1) in place of a GPU; a GPU whose
    // protected-PCIe status says off; the MPT set on its own.
    let mpt = devices("go-nvattest-tools/test_mpt_data.json", "gpus");
    let mut mixed = gpus.clone();
    mixed[7] = (mpt[0].pdi(), mpt[0].report.clone());
    assert_eq!(topology(&mixed, &switches), Err(TopologyError::MixedModes { gpu: 7, mode: Mode::FeatureFlag(1) }));
    let mut off = gpus.clone();
    // Opaque type 21, length 1, 0xAA.
    replace_first(&mut off[2].1, &[21, 0, 1, 0, 0xaa], &[21, 0, 1, 0, 0x55], 1);
    assert_eq!(topology(&off, &switches), Err(TopologyError::MixedModes { gpu: 2, mode: Mode::ProtectedPcie(0x55) }));
    let mpt_board: Vec<GpuReport> = mpt.iter().map(|g| (g.pdi(), g.report.clone())).collect();
    assert_eq!(topology(&mpt_board, &[]), Err(TopologyError::NotPpcie { mode: Mode::FeatureFlag(1) }));

    // A switch whose lock status (opaque type 25, two bytes) says unlocked.
    let mut unlocked = switches.clone();
    replace_first(&mut unlocked[3], &[25, 0, 2, 0, 1, 0], &[25, 0, 2, 0, 0, 0], 1);
    assert_eq!(topology(&gpus, &unlocked), Err(TopologyError::SwitchUnlocked { switch: 3, status: Some(0) }));

    // A switch's report among the GPUs, a GPU's among the switches.
    let mut swapped = gpus.clone();
    swapped[0] = (switch1, switches[1].clone());
    assert_eq!(topology(&swapped, &switches), Err(TopologyError::NotAGpu { gpu: 0 }));
    let mut swapped = switches.clone();
    swapped[0] = gpus[0].1.clone();
    assert_eq!(topology(&gpus, &swapped), Err(TopologyError::NotASwitch { switch: 0 }));
}

/// The sample switch's own measurements as golden values: NVIDIA's LS10 RIMs are not among the
/// samples, so a configuration would pin them the same way.
fn sample_switch_firmware(report: &Report<'_>) -> SwitchFirmware {
    let measurements: BTreeMap<u8, Vec<String>> =
        report.measurements.iter().map(|m| (m.index - 1, vec![hex::encode(&m.value)])).collect();
    SwitchFirmware { bios: report.opaque.vbios.clone(), measurements, rims: vec![] }
}

#[test]
fn a_switch_is_held_to_its_golden_measurements_and_its_evidence_to_the_gpu_checks() {
    let (gpus, switches) = ppcie();
    let nonce = nonce_of(&switches[0]);
    let s = &switches[0];
    let parsed = Report::parse(&s.report).unwrap();
    let firmware = sample_switch_firmware(&parsed);
    assert_eq!(firmware.check(&parsed), Ok(31));
    // A golden value one byte off; the report's value one byte off (parsed again only).
    let mut golden = firmware.clone();
    let value = golden.measurements.get_mut(&4).unwrap();
    let mut bytes = hex::decode(&value[0]).unwrap();
    bytes[0] ^= 1;
    value[0] = hex::encode(bytes);
    assert_eq!(golden.check(&parsed), Err(GpuError::MeasurementMismatch { index: 4 }));
    let mut measured = s.report.clone();
    let block5 = parsed.measurements.iter().find(|m| m.index == 5).unwrap().value.clone();
    let mut other = block5.clone();
    other[47] ^= 1;
    replace_first(&mut measured, &block5, &other, 1);
    assert_eq!(firmware.check(&Report::parse(&measured).unwrap()), Err(GpuError::MeasurementMismatch { index: 4 }));

    let policy =
        SwitchPolicy { firmware: vec![firmware.clone()], max_ocsp_age_secs: 86_400, device_root: DeviceRoot::Nvidia };
    let verify = |device: &Device, policy: &SwitchPolicy| {
        verify_switch(&device.evidence(), &nonce, policy, NOW, &Verified::default())
    };
    // Genuine, fresh and measuring as pinned: then it needs NVIDIA's OCSP answers for its chain,
    // which the sample does not carry.
    assert_eq!(verify(s, &policy), Err(GpuError::Ocsp("no valid response for a certificate of the chain")));
    assert_eq!(
        verify(s, &SwitchPolicy { firmware: vec![golden], ..policy.clone() }),
        Err(GpuError::MeasurementMismatch { index: 4 })
    );
    let unpinned = SwitchFirmware { bios: "96.10.6D.00.02".into(), ..firmware };
    assert!(matches!(
        verify(s, &SwitchPolicy { firmware: vec![unpinned], ..policy.clone() }),
        Err(GpuError::NoReference { firmware }) if firmware.contains("96.10.6D.00.01")
    ));

    // A signature byte flipped; another nonce; another switch's chain (its key did not sign).
    let mut flipped = s.clone();
    let last = flipped.report.len() - 1;
    flipped.report[last] ^= 1;
    assert_eq!(verify(&flipped, &policy), Err(GpuError::Signature));
    let other_nonce = verify_switch(&s.evidence(), &[7; 32], &policy, NOW, &Verified::default());
    assert_eq!(other_nonce, Err(GpuError::Nonce));
    let swapped = Device { report: s.report.clone(), chain: switches[1].chain.clone() };
    assert_eq!(verify(&swapped, &policy), Err(GpuError::Signature));
    // A GPU's report is not a switch's, so it never skips the firmware-id check; and a switch's
    // report given as a GPU's is still refused for its missing firmware id.
    assert_eq!(
        authenticate_switch(&gpus[0].evidence(), &DeviceRoot::Nvidia, &nonce, NOW, &Verified::default()).err(),
        Some(GpuError::NotASwitch)
    );
    assert_eq!(
        authenticate(&s.evidence(), &DeviceRoot::Nvidia, &nonce, NOW, &Verified::default()).err(),
        Some(GpuError::FwidMissing)
    );
}

#[test]
fn the_pdi_is_the_brom_serial_after_its_first_byte() {
    // Every device of the PPCIE set: 0x41 (GPU) or 0x50 (LS10), then the 8 bytes the switches use.
    let (gpus, switches) = ppcie();
    for (device, prefix) in gpus.iter().map(|g| (g, 0x41)).chain(switches.iter().map(|s| (s, 0x50))) {
        let chain = chain::verify(&device.chain, &NVIDIA_DEVICE_ROOT_SPKI_SHA256, NOW, &Verified::default()).unwrap();
        let serial = chain.certificates[1].tbs_certificate().serial_number().as_bytes().to_vec();
        assert_eq!(serial.len(), 9);
        assert_eq!((serial[0], &serial[1..]), (prefix, &chain.device_pdi().unwrap().0[..]));
    }
    // A chain whose second certificate is not a BROM's (the provisioner ICA, a 16-byte serial).
    let mut wrong = chain::verify(&gpus[0].chain, &NVIDIA_DEVICE_ROOT_SPKI_SHA256, NOW, &Verified::default()).unwrap();
    wrong.certificates.remove(1);
    assert_eq!(wrong.certificates[1].tbs_certificate().serial_number().as_bytes().len(), 16);
    assert_eq!(wrong.device_pdi(), Err(GpuError::NoDevicePdi));
}

#[test]
fn the_mode_is_read_from_the_feature_flag_where_the_driver_sends_one() {
    let parse_mode = |report: &[u8]| {
        let o = Report::parse(report).unwrap().opaque;
        (o.feature_flag, o.protected_pcie, mode(&o))
    };
    // attestation-sdk's H100 of driver 590.12, from a protected-PCIe board: flag 2 and status 0xAA.
    let json: serde_json::Value = serde_json::from_slice(&read("attestation-sdk/hopper_evidence.json")).unwrap();
    let report = shared::b64::decode(json[0]["evidence"].as_str().unwrap()).unwrap();
    assert_eq!(parse_mode(&report), (Some(2), Some(0xaa), Mode::Ppcie));
    // The single H100 of the golden path (driver 550.90.07): no flag, status 0x55.
    let report = read("go-nvattest-tools/test_raw_gpu_attestation_report.dat");
    assert_eq!(parse_mode(&report), (None, Some(0x55), Mode::ProtectedPcie(0x55)));
    // A B200 of the multi-GPU set: flag 1, no status.
    let mpt = devices("go-nvattest-tools/test_mpt_data.json", "gpus");
    assert_eq!(parse_mode(&mpt[0].report), (Some(1), None, Mode::FeatureFlag(1)));
    // The Blackwell sample of driver 575.32: neither.
    let text = String::from_utf8(read("attestation-sdk/blackwellAttestationReport.txt")).unwrap();
    assert_eq!(parse_mode(&hex::decode(text.trim()).unwrap()), (None, None, Mode::Unstated));
}
