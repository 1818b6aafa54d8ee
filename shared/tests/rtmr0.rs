//! RTMR0 (tdx.md §4.2): TD HOB layout, UEFI variable encodings checked against byte layouts
//! written out by hand here, the event list and its replay, the CFV digest of the pinned
//! firmware, and known-answer values from dstack-mr (`Dstack-TEE/dstack`, `dstack-mr/src/tdvf.rs`,
//! the "pre-202505" branch of `rtmr0_log`).
#![cfg(feature = "measure")]

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use sha2::{Digest, Sha384};
use shared::measure::rtmr::replay;
use shared::measure::rtmr0::events::{Rtmr0Error, cfv};
use shared::measure::rtmr0::evidence::PROFILE_FILES;
use shared::measure::rtmr0::{
    AcpiBlobs, EvidenceError, Rtmr0Evidence, SecureBootVariables, parse_memory_size, rtmr0_events,
};
use shared::measure::td_hob::{ResourceType, TdHob, TdHobError};
use shared::measure::tdvf::{Section, SectionType, sections};
use shared::measure::uefi_var::{
    DevicePathNode, EFI_GLOBAL_VARIABLE, EFI_IMAGE_SECURITY_DATABASE, boot_order, load_option, uiapp_boot_option,
    variable_data,
};
use shared::measure::{MeasureError, measure_rtmr0};

const INPUTS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/image-inputs");
const IMAGE_OUT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../image/out");
const GIB: u64 = 1 << 30;

/// dstack-mr's fixed CFV digest for its edk2-stable202502 OVMF (`cfv_image_hash`). The empty
/// 4 MiB-layout variable store is byte-identical across these builds.
const DSTACK_CFV: &str =
    "344bc51c980ba621aaa00da3ed7436f7d6e549197dfe699515dfa2c6583d95e6412af21c097d473155875ffd561d6790";
/// dstack-mr's fixed Boot0000 digest for pre-202505 OVMF (`boot000_hash`).
const DSTACK_BOOT0000: &str =
    "23ada07f5261f12f34a0bd8e46760962d6b4d576a416f1fea1c64bc656b1d28eacf7047ae6e967c58fd2a98bfa74c298";

fn sha384(data: &[u8]) -> [u8; 48] {
    Sha384::digest(data).into()
}

fn section(kind: SectionType, gpa: u64, mem_size: u64) -> Section {
    Section { data_offset: 0, raw_size: 0, gpa, mem_size, kind, attributes: 0 }
}

/// The TD_HOB and TempMem sections of the pinned IntelTdxX64 build (`svc measure --diagnose`),
/// in descriptor order.
fn pinned_layout() -> Vec<Section> {
    vec![
        section(SectionType::TempMem, 0x81_0000, 0x1_0000),
        section(SectionType::TempMem, 0x80_b000, 0x2000),
        section(SectionType::TdHob, 0x80_9000, 0x2000),
        section(SectionType::TempMem, 0x80_0000, 0x6000),
    ]
}

/// The accepted (SystemMemory) and unaccepted ranges the pinned layout yields below `low_end`.
fn expected_low(low_end: u64) -> Vec<(ResourceType, u64, u64)> {
    use ResourceType::{SystemMemory as A, Unaccepted as U};
    vec![
        (U, 0, 0x80_0000),
        (A, 0x80_0000, 0x6000),
        (U, 0x80_6000, 0x3000),
        (A, 0x80_9000, 0x2000),
        (A, 0x80_b000, 0x2000),
        (U, 0x80_d000, 0x3000),
        (A, 0x81_0000, 0x1_0000),
        (U, 0x82_0000, low_end - 0x82_0000),
    ]
}

fn ranges(hob: &TdHob) -> Vec<(ResourceType, u64, u64)> {
    hob.resources.iter().map(|r| (r.kind, r.start, r.length)).collect()
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}
fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}
fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

/// Walks the HOB bytes as a firmware would and checks every field against `want`.
fn check_hob_bytes(bytes: &[u8], base: u64, want: &[(ResourceType, u64, u64)]) {
    assert_eq!(bytes.len(), 56 + 48 * want.len());
    // PHIT: type 1, length 56, reserved, version 9, boot mode 0, four zero memory fields.
    assert_eq!(u16_at(bytes, 0), 1);
    assert_eq!(u16_at(bytes, 2), 56);
    assert_eq!(u32_at(bytes, 4), 0);
    assert_eq!(u32_at(bytes, 8), 9);
    assert_eq!(u32_at(bytes, 12), 0);
    assert!(bytes[16..48].iter().all(|&b| b == 0));
    // EfiEndOfHobList: just past the (unmeasured) 8-byte end HOB.
    assert_eq!(u64_at(bytes, 48), base + bytes.len() as u64 + 8);
    for (i, (kind, start, len)) in want.iter().enumerate() {
        let h = &bytes[56 + 48 * i..56 + 48 * (i + 1)];
        assert_eq!(u16_at(h, 0), 3, "resource HOB {i} type");
        assert_eq!(u16_at(h, 2), 48, "resource HOB {i} length");
        assert_eq!(u32_at(h, 4), 0);
        assert!(h[8..24].iter().all(|&b| b == 0), "owner GUID is zero");
        let code = match kind {
            ResourceType::SystemMemory => 0,
            ResourceType::Unaccepted => 7,
        };
        assert_eq!(u32_at(h, 24), code, "resource HOB {i} type code");
        assert_eq!(u32_at(h, 28), 7, "PRESENT | INITIALIZED | TESTED");
        assert_eq!(u64_at(h, 32), *start);
        assert_eq!(u64_at(h, 40), *len);
    }
}

#[test]
fn td_hob_for_2_gib_has_no_high_memory() {
    let hob = TdHob::new(2 * GIB, &pinned_layout()).unwrap();
    assert_eq!(hob.base, 0x80_9000);
    let want = expected_low(2 * GIB);
    assert_eq!(ranges(&hob), want);
    check_hob_bytes(&hob.bytes(), 0x80_9000, &want);
    assert_eq!(hob.digest(), sha384(&hob.bytes()));
    // Regression snapshot. A separate Python transliteration of dstack-mr's `measure_td_hob`
    // (run once by hand, not checked in) gave the same digest for this layout.
    assert_eq!(
        hex::encode(hob.digest()),
        "0b8772e5b0b41b83e6044a68397e02f49fb47066b4fbe4917ea2c45c64f323fdacbb37948f821ebaf8bc9c938ba8a749"
    );
}

#[test]
fn td_hob_for_8_gib_splits_at_2_gib_and_resumes_at_4_gib() {
    let hob = TdHob::new(8 * GIB, &pinned_layout()).unwrap();
    let mut want = expected_low(2 * GIB);
    want.push((ResourceType::Unaccepted, 4 * GIB, 6 * GIB));
    assert_eq!(ranges(&hob), want);
    check_hob_bytes(&hob.bytes(), 0x80_9000, &want);
    // Regression snapshot, cross-checked like the 2 GiB one.
    assert_eq!(
        hex::encode(hob.digest()),
        "2e070cda358b5aa00f27cca25c47381bb564f4be3a84d059805a73cbbde764ed8341f7e09915b5e7b370f9c08a743fbd"
    );
}

#[test]
fn td_hob_split_threshold_is_0xb0000000() {
    let below = TdHob::new(0xb000_0000 - 0x10_0000, &pinned_layout()).unwrap();
    assert_eq!(ranges(&below), expected_low(0xb000_0000 - 0x10_0000), "all memory stays below 4 GiB");
    let at = TdHob::new(0xb000_0000, &pinned_layout()).unwrap();
    let mut want = expected_low(2 * GIB);
    want.push((ResourceType::Unaccepted, 4 * GIB, 0x3000_0000));
    assert_eq!(ranges(&at), want);
    assert_ne!(below.digest(), at.digest());
}

#[test]
fn td_hob_refuses_bad_memory_and_layouts() {
    let layout = pinned_layout();
    assert_eq!(TdHob::new(0, &layout), Err(TdHobError::MemoryNotPageAligned(0)));
    assert_eq!(TdHob::new(2 * GIB + 1, &layout), Err(TdHobError::MemoryNotPageAligned(2 * GIB + 1)));
    assert_eq!(TdHob::new(1 << 53, &layout), Err(TdHobError::MemoryTooLarge(1 << 53)));
    // 4 MiB of RAM cannot hold the sections at 8 MiB.
    assert!(matches!(TdHob::new(4 << 20, &layout), Err(TdHobError::OutsideRam { .. })));
    let no_hob: Vec<Section> = layout.iter().filter(|s| s.kind != SectionType::TdHob).copied().collect();
    assert_eq!(TdHob::new(2 * GIB, &no_hob), Err(TdHobError::NoTdHobSection));
    let mut two = layout.clone();
    two.push(section(SectionType::TdHob, 0x90_0000, 0x1000));
    assert_eq!(TdHob::new(2 * GIB, &two), Err(TdHobError::SeveralTdHobSections));
}

#[test]
fn uefi_variable_data_matches_a_hand_built_layout() {
    // SecureBoot, unset: GUID 8be4df61-93ca-11d2-aa0d-00e098032b8c (first three fields LE),
    // name length 10 (UTF-16 units, no NUL), data length 0, "SecureBoot" in UTF-16LE.
    let mut want = vec![0x61, 0xdf, 0xe4, 0x8b, 0xca, 0x93, 0xd2, 0x11, 0xaa, 0x0d, 0x00, 0xe0, 0x98, 0x03, 0x2b, 0x8c];
    want.extend_from_slice(&[10, 0, 0, 0, 0, 0, 0, 0]);
    want.extend_from_slice(&[0; 8]);
    for c in b"SecureBoot" {
        want.extend_from_slice(&[*c, 0]);
    }
    assert_eq!(want.len(), 52);
    assert_eq!(variable_data(&EFI_GLOBAL_VARIABLE, "SecureBoot", &[]), want);

    // db holding three bytes: GUID d719b2cb-3d3a-4596-a3bc-dad00e67656f.
    let mut want = vec![0xcb, 0xb2, 0x19, 0xd7, 0x3a, 0x3d, 0x96, 0x45, 0xa3, 0xbc, 0xda, 0xd0, 0x0e, 0x67, 0x65, 0x6f];
    want.extend_from_slice(&[2, 0, 0, 0, 0, 0, 0, 0]);
    want.extend_from_slice(&[3, 0, 0, 0, 0, 0, 0, 0]);
    want.extend_from_slice(&[b'd', 0, b'b', 0, 0xaa, 0xbb, 0xcc]);
    assert_eq!(variable_data(&EFI_IMAGE_SECURITY_DATABASE, "db", &[0xaa, 0xbb, 0xcc]), want);
}

#[test]
fn boot_variables_match_hand_built_layouts_and_dstack() {
    assert_eq!(boot_order(&[0]), vec![0, 0]);
    assert_eq!(boot_order(&[0x0001, 0x1234]), vec![0x01, 0x00, 0x34, 0x12]);

    let mut want = vec![0x09, 0x01, 0x00, 0x00]; // CATEGORY_APP | HIDDEN | ACTIVE
    want.extend_from_slice(&[44, 0]); // device path: 20 + 20 + 4 bytes
    for c in b"UiApp\0" {
        want.extend_from_slice(&[*c, 0]);
    }
    want.extend_from_slice(&[4, 7, 20, 0]); // MEDIA / PIWG firmware volume
    want.extend_from_slice(&[
        0xc9, 0xbd, 0xb8, 0x7c, 0xeb, 0xf8, 0x34, 0x4f, 0xaa, 0xea, 0x3e, 0xe4, 0xaf, 0x65, 0x16, 0xa1,
    ]);
    want.extend_from_slice(&[4, 6, 20, 0]); // MEDIA / PIWG firmware file
    want.extend_from_slice(&[
        0x21, 0xaa, 0x2c, 0x46, 0x14, 0x76, 0x03, 0x45, 0x83, 0x6e, 0x8a, 0xb6, 0xf4, 0x66, 0x23, 0x31,
    ]);
    want.extend_from_slice(&[0x7f, 0xff, 4, 0]); // end of device path
    assert_eq!(uiapp_boot_option(), want);
    // Known answer: dstack-mr's hard-coded pre-202505 Boot0000 digest.
    assert_eq!(hex::encode(sha384(&uiapp_boot_option())), DSTACK_BOOT0000);

    assert_eq!(load_option(1, "", &[DevicePathNode::End]), vec![1, 0, 0, 0, 4, 0, 0, 0, 0x7f, 0xff, 4, 0]);
}

fn blobs() -> AcpiBlobs {
    let mut rsdp = b"RSD PTR ".to_vec();
    rsdp.resize(36, 0x11);
    AcpiBlobs::new(vec![0x22; 256], rsdp, vec![0x33; 1000]).unwrap()
}

fn evidence(memory: u64) -> Rtmr0Evidence {
    Rtmr0Evidence { memory, acpi: blobs(), secure_boot: SecureBootVariables::default() }
}

/// A minimal firmware image: a CFV at offset 0 plus the pinned TD_HOB/TempMem layout.
fn fake_firmware() -> (Vec<u8>, Vec<Section>) {
    let fw: Vec<u8> = (0..0x2000u32).map(|i| (i % 253) as u8).collect();
    let mut s = pinned_layout();
    s.push(Section {
        data_offset: 0,
        raw_size: 0x1000,
        gpa: 0xffc0_0000,
        mem_size: 0x1000,
        kind: SectionType::Cfv,
        attributes: 0,
    });
    (fw, s)
}

#[test]
fn event_list_and_replay() {
    let (fw, s) = fake_firmware();
    let ev = evidence(2 * GIB);
    let events = rtmr0_events(&fw, &s, &ev).unwrap();
    let zero_var = |guid: &[u8; 16], name: &str| sha384(&variable_data(guid, name, &[]));
    let want: Vec<[u8; 48]> = vec![
        TdHob::new(2 * GIB, &s).unwrap().digest(),
        sha384(&fw[..0x1000]),
        zero_var(&EFI_GLOBAL_VARIABLE, "SecureBoot"),
        zero_var(&EFI_GLOBAL_VARIABLE, "PK"),
        zero_var(&EFI_GLOBAL_VARIABLE, "KEK"),
        zero_var(&EFI_IMAGE_SECURITY_DATABASE, "db"),
        zero_var(&EFI_IMAGE_SECURITY_DATABASE, "dbx"),
        sha384(&[0, 0, 0, 0]),
        sha384(&ev.acpi.table_loader),
        sha384(&ev.acpi.rsdp),
        sha384(&ev.acpi.tables),
        sha384(&[0, 0]),
        sha384(&uiapp_boot_option()),
    ];
    let got: Vec<[u8; 48]> = events.iter().map(|e| e.digest).collect();
    assert_eq!(got, want);
    // The replay is the extend chain from zero, written out here.
    let chained = want.iter().fold([0u8; 48], |acc, d| {
        let mut h = Sha384::new();
        h.update(acc);
        h.update(d);
        h.finalize().into()
    });
    assert_eq!(replay(&events), chained);
    // Memory size and ACPI content both move RTMR0.
    assert_ne!(replay(&rtmr0_events(&fw, &s, &evidence(4 * GIB)).unwrap()), chained);
    let mut other = evidence(2 * GIB);
    other.acpi.tables.push(0);
    assert_ne!(replay(&rtmr0_events(&fw, &s, &other).unwrap()), chained);
    // A Secure Boot build (SecureBoot = 00) changes only that event.
    let mut sb = evidence(2 * GIB);
    sb.secure_boot.secure_boot = vec![0];
    let sb_events = rtmr0_events(&fw, &s, &sb).unwrap();
    assert_eq!(sb_events[2].digest, sha384(&variable_data(&EFI_GLOBAL_VARIABLE, "SecureBoot", &[0])));
    assert_eq!(sb_events[3..], events[3..]);
}

#[test]
fn event_list_errors() {
    let (fw, s) = fake_firmware();
    let no_cfv: Vec<Section> = s.iter().filter(|x| x.kind != SectionType::Cfv).copied().collect();
    assert_eq!(rtmr0_events(&fw, &no_cfv, &evidence(2 * GIB)), Err(Rtmr0Error::NoCfv));
    assert_eq!(cfv(&fw[..0x800], &s), Err(Rtmr0Error::CfvOutsideFile));
    assert!(matches!(rtmr0_events(&fw, &s, &evidence(4 << 20)), Err(Rtmr0Error::TdHob(TdHobError::OutsideRam { .. }))));
    assert!(matches!(measure_rtmr0(b"not firmware", &evidence(2 * GIB)), Err(MeasureError::Firmware(_))));
}

fn profile() -> BTreeMap<String, Vec<u8>> {
    let b = blobs();
    [("memory", b"2G\n".to_vec()), ("table-loader", b.table_loader), ("rsdp", b.rsdp), ("tables", b.tables)]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
}

#[test]
fn profile_evidence_and_its_errors() {
    assert_eq!(PROFILE_FILES, ["memory", "table-loader", "rsdp", "tables"]);
    let ev = Rtmr0Evidence::from_profile(&profile()).unwrap();
    assert_eq!(ev, evidence(2 * GIB));
    for missing in PROFILE_FILES {
        let mut p = profile();
        p.remove(missing);
        assert_eq!(Rtmr0Evidence::from_profile(&p), Err(EvidenceError::Missing(missing)));
    }
    let with = |name: &str, value: &[u8]| {
        let mut p = profile();
        p.insert(name.into(), value.to_vec());
        Rtmr0Evidence::from_profile(&p)
    };
    assert!(matches!(with("memory", b"lots"), Err(EvidenceError::BadMemorySize(..))));
    assert!(matches!(with("memory", b"2X"), Err(EvidenceError::BadMemorySize(..))));
    assert!(matches!(with("memory", &[0xff, 0xfe]), Err(EvidenceError::BadMemorySize(..))));
    assert_eq!(with("tables", b""), Err(EvidenceError::EmptyBlob("tables")));
    assert_eq!(with("table-loader", b""), Err(EvidenceError::EmptyBlob("table-loader")));
    assert_eq!(with("table-loader", &[0; 130]), Err(EvidenceError::BadTableLoader(130)));
    assert_eq!(with("rsdp", b"RSD PTR too short"), Err(EvidenceError::BadRsdp));
    assert_eq!(with("rsdp", &[0; 36]), Err(EvidenceError::BadRsdp), "swapped or wrong file");
}

#[test]
fn memory_sizes() {
    assert_eq!(parse_memory_size("2G"), Ok(2 * GIB));
    assert_eq!(parse_memory_size(" 8GiB\n"), Ok(8 * GIB));
    assert_eq!(parse_memory_size("2048M"), Ok(2 * GIB));
    assert_eq!(parse_memory_size("2048 mb"), Ok(2 * GIB));
    assert_eq!(parse_memory_size("1t"), Ok(1 << 40));
    assert_eq!(parse_memory_size("2147483648"), Ok(2 * GIB));
    for bad in ["", "G", "0", "0G", "-2G", "2.5G", "2Q", "99999999999999999999", "17179869184T"] {
        assert!(matches!(parse_memory_size(bad), Err(EvidenceError::BadMemorySize(..))), "{bad:?}");
    }
}

/// Extracts Debian's prebuilt OVMF.fd from the pinned .deb (as `measure_pinned.rs` does).
fn debian_ovmf() -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let deb = Path::new(INPUTS).join("ovmf_2025.02-8+deb13u1_all.deb");
    let ok = Command::new("dpkg-deb").arg("-x").arg(deb).arg(dir.path()).status().unwrap();
    assert!(ok.success(), "dpkg-deb -x");
    std::fs::read(dir.path().join("usr/share/ovmf/OVMF.fd")).unwrap()
}

#[test]
fn cfv_digest_of_debian_prebuilt_ovmf() {
    let fw = debian_ovmf();
    let s = sections(&fw).unwrap();
    assert_eq!(cfv(&fw, &s).unwrap().len(), 0x8_4000);
    assert_eq!(hex::encode(sha384(cfv(&fw, &s).unwrap())), DSTACK_CFV);
}

#[test]
fn rtmr0_of_the_built_firmware() {
    let path = Path::new(IMAGE_OUT).join("OVMF.fd");
    let Ok(fw) = std::fs::read(&path) else {
        eprintln!("{}: absent (make image builds it); built-firmware RTMR0 check not run", path.display());
        return;
    };
    let s = sections(&fw).unwrap();
    let cfv_bytes = cfv(&fw, &s).unwrap();
    assert_eq!(cfv_bytes.len(), 0x8_4000);
    assert_eq!(hex::encode(sha384(cfv_bytes)), DSTACK_CFV);
    // The TD_HOB/TempMem layout is the one the TD HOB tests above assume.
    let mut layout: Vec<Section> =
        s.iter().filter(|x| matches!(x.kind, SectionType::TdHob | SectionType::TempMem)).copied().collect();
    for x in &mut layout {
        (x.data_offset, x.raw_size, x.attributes) = (0, 0, 0);
    }
    assert_eq!(layout, pinned_layout());
    let m = measure_rtmr0(&fw, &evidence(2 * GIB)).unwrap();
    assert_eq!(m.events.len(), 13);
    assert_eq!(m.rtmr0, replay(&m.events));
}
