//! Synthetic TDVF images for the parser's edge cases.

use super::*;

struct Fw {
    bytes: Vec<u8>,
}

/// A firmware of `size` bytes with a TDVF descriptor at `desc_at` listing `sections`, and the
/// GUIDed table (metadata entry + footer) at the end.
fn build(size: usize, desc_at: usize, sections: &[(u32, u32, u64, u64, u32, u32)]) -> Fw {
    let mut b = vec![0u8; size];
    b[desc_at..desc_at + 4].copy_from_slice(b"TDVF");
    b[desc_at + 4..desc_at + 8].copy_from_slice(&(16 + 32 * sections.len() as u32).to_le_bytes());
    b[desc_at + 8..desc_at + 12].copy_from_slice(&1u32.to_le_bytes());
    b[desc_at + 12..desc_at + 16].copy_from_slice(&(sections.len() as u32).to_le_bytes());
    for (i, (off, raw, gpa, mem, kind, attr)) in sections.iter().enumerate() {
        let s = desc_at + 16 + 32 * i;
        b[s..s + 4].copy_from_slice(&off.to_le_bytes());
        b[s + 4..s + 8].copy_from_slice(&raw.to_le_bytes());
        b[s + 8..s + 16].copy_from_slice(&gpa.to_le_bytes());
        b[s + 16..s + 24].copy_from_slice(&mem.to_le_bytes());
        b[s + 24..s + 28].copy_from_slice(&kind.to_le_bytes());
        b[s + 28..s + 32].copy_from_slice(&attr.to_le_bytes());
    }
    // Table (backwards from the footer): [metadata entry: u32 offset, u16 len 22, guid][u16 table len, footer guid][32 bytes]
    let footer = size - 48;
    b[footer..footer + 16].copy_from_slice(&FOOTER_GUID);
    let table_len: u16 = 22 + 18;
    b[footer - 2..footer].copy_from_slice(&table_len.to_le_bytes());
    let entry_end = footer - 2;
    b[entry_end - 16..entry_end].copy_from_slice(&TDX_METADATA_GUID);
    b[entry_end - 18..entry_end - 16].copy_from_slice(&22u16.to_le_bytes());
    b[entry_end - 22..entry_end - 18].copy_from_slice(&((size - desc_at) as u32).to_le_bytes());
    // Recognisable code bytes in the first page.
    for (i, x) in b[..4096].iter_mut().enumerate() {
        *x = (i % 251) as u8;
    }
    Fw { bytes: b }
}

const BFV: u32 = 0;
const TEMP: u32 = 3;

fn good() -> Fw {
    build(64 * 1024, 32 * 1024, &[(0, 8192, 0xffff_0000, 8192, BFV, 1), (0, 0, 0x80_0000, 4096, TEMP, 0)])
}

#[test]
fn parses_sections() {
    let fw = good();
    let s = sections(&fw.bytes).unwrap();
    assert_eq!(s.len(), 2);
    assert_eq!((s[0].kind, s[0].gpa, s[0].extends(), s[0].page_aug()), (SectionType::Bfv, 0xffff_0000, true, false));
    assert_eq!((s[1].kind, s[1].mem_size, s[1].extends()), (SectionType::TempMem, 4096, false));
}

/// MRTD written out record by record for the `good` image, independent of the loop code.
#[test]
fn mrtd_matches_hand_computation() {
    let fw = good();
    let s = sections(&fw.bytes).unwrap();
    let rec = |op: &[u8], gpa: u64| {
        let mut r = [0u8; 128];
        r[..op.len()].copy_from_slice(op);
        r[16..24].copy_from_slice(&gpa.to_le_bytes());
        r
    };
    let mut single = Sha384::new();
    let mut two = Sha384::new();
    for page in 0..2u64 {
        single.update(rec(b"MEM.PAGE.ADD", 0xffff_0000 + page * 4096));
        for c in 0..16u64 {
            single.update(rec(b"MR.EXTEND", 0xffff_0000 + page * 4096 + c * 256));
            let at = (page * 4096 + c * 256) as usize;
            single.update(&fw.bytes[at..at + 256]);
        }
    }
    for page in 0..2u64 {
        two.update(rec(b"MEM.PAGE.ADD", 0xffff_0000 + page * 4096));
    }
    for page in 0..2u64 {
        for c in 0..16u64 {
            two.update(rec(b"MR.EXTEND", 0xffff_0000 + page * 4096 + c * 256));
            let at = (page * 4096 + c * 256) as usize;
            two.update(&fw.bytes[at..at + 256]);
        }
    }
    for h in [&mut single, &mut two] {
        h.update(rec(b"MEM.PAGE.ADD", 0x80_0000));
    }
    let single: Mr = single.finalize().into();
    let two: Mr = two.finalize().into();
    assert_eq!(mrtd(&fw.bytes, &s, PageOrder::SinglePass), single);
    assert_eq!(mrtd(&fw.bytes, &s, PageOrder::TwoPass), two);
    assert_ne!(single, two);
}

#[test]
fn page_aug_sections_are_not_measured() {
    let with = build(64 * 1024, 32 * 1024, &[(0, 4096, 0x1000, 4096, BFV, 1), (0, 0, 0x10_0000, 4096, TEMP, 2)]);
    let without = build(64 * 1024, 32 * 1024, &[(0, 4096, 0x1000, 4096, BFV, 1)]);
    let a = mrtd(&with.bytes, &sections(&with.bytes).unwrap(), PageOrder::SinglePass);
    let b = mrtd(&without.bytes, &sections(&without.bytes).unwrap(), PageOrder::SinglePass);
    assert_eq!(a, b);
}

#[test]
fn malformed_images_are_refused() {
    // Footer GUID wrong.
    let mut fw = good();
    let n = fw.bytes.len();
    fw.bytes[n - 40] ^= 1;
    assert_eq!(sections(&fw.bytes), Err(TdvfError::NoFooter));
    // Metadata GUID wrong: the table has no TDX entry.
    let mut fw = good();
    fw.bytes[n - 55] ^= 1;
    assert_eq!(sections(&fw.bytes), Err(TdvfError::NoTdxMetadata));
    // Table length larger than the file.
    let mut fw = good();
    fw.bytes[n - 50..n - 48].copy_from_slice(&u16::MAX.to_le_bytes());
    assert!(sections(&fw.bytes).is_err());
    // Entry length that runs past the table.
    let mut fw = good();
    fw.bytes[n - 68..n - 66].copy_from_slice(&200u16.to_le_bytes());
    assert_eq!(sections(&fw.bytes), Err(TdvfError::BadTable));
    // Descriptor signature, version, count/length.
    let mut fw = good();
    fw.bytes[32 * 1024] = b'X';
    assert_eq!(sections(&fw.bytes), Err(TdvfError::BadDescriptor("signature is not TDVF")));
    let mut fw = good();
    fw.bytes[32 * 1024 + 8] = 2;
    assert_eq!(sections(&fw.bytes), Err(TdvfError::BadDescriptor("version is not 1")));
    let mut fw = good();
    fw.bytes[32 * 1024 + 12] = 3;
    assert_eq!(sections(&fw.bytes), Err(TdvfError::BadDescriptor("section count and length disagree")));
    // Truncations.
    assert_eq!(sections(&good().bytes[..40]), Err(TdvfError::Truncated("shorter than the table footer")));
    // Dropping the front keeps the table, but the descriptor offset now points before the file.
    assert_eq!(sections(&good().bytes[44 * 1024..]), Err(TdvfError::BadDescriptor("offset beyond the file")));
    assert!(sections(&[]).is_err());
}

#[test]
fn inconsistent_sections_are_refused() {
    let overlap = build(64 * 1024, 32 * 1024, &[(0, 4096, 0x1000, 8192, BFV, 1), (0, 0, 0x2000, 4096, TEMP, 0)]);
    assert_eq!(sections(&overlap.bytes), Err(TdvfError::Overlap(0, 1)));
    let unaligned = build(64 * 1024, 32 * 1024, &[(0, 4096, 0x1001, 4096, BFV, 1)]);
    assert_eq!(sections(&unaligned.bytes), Err(TdvfError::BadSection(0, "not page aligned")));
    let beyond = build(64 * 1024, 32 * 1024, &[(60 * 1024, 8192, 0x1000, 8192, BFV, 1)]);
    assert_eq!(sections(&beyond.bytes), Err(TdvfError::BadSection(0, "data beyond the file")));
    let raw_too_big = build(64 * 1024, 32 * 1024, &[(0, 8192, 0x1000, 4096, BFV, 1)]);
    assert_eq!(sections(&raw_too_big.bytes), Err(TdvfError::BadSection(0, "raw data larger than its memory")));
    let unknown = build(64 * 1024, 32 * 1024, &[(0, 4096, 0x1000, 4096, 9, 1)]);
    assert_eq!(sections(&unknown.bytes), Err(TdvfError::BadSection(0, "unknown type")));
    let wrap = build(64 * 1024, 32 * 1024, &[(0, 4096, u64::MAX - 4095, 8192, BFV, 1)]);
    assert_eq!(sections(&wrap.bytes), Err(TdvfError::BadSection(0, "address overflow")));
}
