//! Measurements of the pinned inputs in `../shared/image-inputs/`, against the values in
//! `../shared/notes/tdx.md` §4 and an independent Authenticode computation written here.
#![cfg(feature = "measure")]

use std::path::Path;
use std::process::Command;

use sha2::{Digest, Sha384};
use shared::measure::rtmr::{authenticode_sha384, replay, rtmr1_events};
use shared::measure::tdvf::{PageOrder, SectionType, mrtd, sections};

const INPUTS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/image-inputs");

/// Extracts one file from a pinned .deb (dpkg-deb, as the image build does).
fn from_deb(deb: &str, path_in_deb: &str) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let ok = Command::new("dpkg-deb").arg("-x").arg(Path::new(INPUTS).join(deb)).arg(dir.path()).status().unwrap();
    assert!(ok.success(), "dpkg-deb -x {deb}");
    std::fs::read(dir.path().join(path_in_deb)).unwrap_or_else(|e| panic!("{path_in_deb}: {e}"))
}

fn ovmf() -> Vec<u8> {
    from_deb("ovmf_2025.02-8+deb13u1_all.deb", "usr/share/ovmf/OVMF.fd")
}

fn kernel() -> Vec<u8> {
    from_deb(
        "linux-image-6.12.107+deb13-cloud-amd64-unsigned_6.12.107-1_amd64.deb",
        "boot/vmlinuz-6.12.107+deb13-cloud-amd64",
    )
}

#[test]
fn prebuilt_ovmf_layout_and_mrtd() {
    let fw = ovmf();
    let s = sections(&fw).unwrap();
    let bfv = s.iter().find(|x| x.kind == SectionType::Bfv).unwrap();
    assert_eq!((bfv.gpa, bfv.mem_size, bfv.extends()), (0xffc8_4000, 0x37_c000, true));
    let cfv = s.iter().find(|x| x.kind == SectionType::Cfv).unwrap();
    assert_eq!((cfv.gpa, cfv.mem_size, cfv.extends()), (0xffc0_0000, 0x8_4000, false));
    assert!(s.iter().any(|x| x.kind == SectionType::TdHob && x.gpa == 0x80_9000));
    // tdx.md §4.1 (single pass, trixie ovmf 2025.02-8+deb13u1): bdc6fb145880f06f…
    let single = hex::encode(mrtd(&fw, &s, PageOrder::SinglePass));
    assert!(single.starts_with("bdc6fb145880f06f"), "{single}");
    let two = hex::encode(mrtd(&fw, &s, PageOrder::TwoPass));
    assert_ne!(single, two);
}

#[test]
fn kernel_authenticode_agrees_with_an_independent_implementation() {
    let k = kernel();
    let ours = authenticode_sha384(&k).unwrap();
    assert_eq!(ours, independent_authenticode(&k));
    // tdx.md §4.3: b87b2bfd7eb3fcc0…
    assert!(hex::encode(ours).starts_with("b87b2bfd7eb3fcc0"), "{}", hex::encode(ours));
}

#[test]
fn rtmr1_for_the_pinned_kernel() {
    let events = rtmr1_events(&kernel()).unwrap();
    assert_eq!(events.len(), 5);
    // tdx.md §4.4 (QEMU ≥ 10.2, unpatched kernel): 77ec4f2c75e1f253…
    let rtmr1 = hex::encode(replay(&events));
    assert!(rtmr1.starts_with("77ec4f2c75e1f253"), "{rtmr1}");
}

/// Authenticode per the PE/COFF spec, written from the spec for this test: hash the headers
/// except the checksum and the certificate-table entry, then the sections in file order,
/// then what follows them except the certificate table.
fn independent_authenticode(pe: &[u8]) -> [u8; 48] {
    let u16le = |at: usize| u16::from_le_bytes([pe[at], pe[at + 1]]) as usize;
    let u32le = |at: usize| u32::from_le_bytes(pe[at..at + 4].try_into().unwrap()) as usize;
    let nt = u32le(0x3c);
    assert_eq!(&pe[nt..nt + 4], b"PE\0\0");
    let coff = nt + 4;
    let sections = u16le(coff + 2);
    let opt = coff + 20;
    let opt_size = u16le(coff + 16);
    assert_eq!(u16le(opt), 0x20b, "PE32+");
    let checksum = opt + 64;
    let cert_dir = opt + 112 + 4 * 8; // data directory 4 (security), 8 bytes each
    let headers_end = u32le(opt + 60); // SizeOfHeaders
    let (cert_off, cert_len) = (u32le(cert_dir), u32le(cert_dir + 4));
    let mut h = Sha384::new();
    h.update(&pe[..checksum]);
    h.update(&pe[checksum + 4..cert_dir]);
    h.update(&pe[cert_dir + 8..headers_end]);
    let table = opt + opt_size;
    let mut raw: Vec<(usize, usize)> = (0..sections)
        .map(|i| {
            let s = table + 40 * i;
            (u32le(s + 20), u32le(s + 16)) // PointerToRawData, SizeOfRawData
        })
        .filter(|(_, size)| *size > 0)
        .collect();
    raw.sort();
    let mut hashed = headers_end;
    for (off, size) in raw {
        h.update(&pe[off..off + size]);
        hashed = hashed.max(off + size);
    }
    let end = if cert_len > 0 { cert_off } else { pe.len() };
    if end > hashed {
        h.update(&pe[hashed..end]);
    }
    h.finalize().into()
}
