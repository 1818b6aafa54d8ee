//! TDVF metadata (Intel TDX Virtual Firmware design guide §11) and the MRTD the TDX module
//! computes while the VMM adds the firmware's pages.
//!
//! Layout: OVMF ends with a GUIDed table whose footer GUID sits 48 bytes before the end, after
//! a u16 table length; entries are walked backwards as `data ‖ u16 len ‖ guid`. The TDX
//! metadata entry holds a u32 offset, from the end of the file, of the `TDVF` descriptor:
//! signature, length, version 1, section count, then 32-byte section records.

use sha2::{Digest, Sha384};

use super::Mr;

const FOOTER_GUID: [u8; 16] = guid(0x96b582de, 0x1fb2, 0x45f7, [0xba, 0xea, 0xa3, 0x66, 0xc5, 0x5a, 0x08, 0x2d]);
const TDX_METADATA_GUID: [u8; 16] = guid(0xe47a6535, 0x984a, 0x4798, [0x86, 0x5e, 0x46, 0x85, 0xa7, 0xbf, 0x8e, 0xc2]);
const PAGE: u64 = 4096;
const CHUNK: u64 = 256;
/// Sanity bound on sections: real firmware has about six.
const MAX_SECTIONS: u32 = 64;

/// A GUID in its on-disk (mixed-endian) byte order.
pub(crate) const fn guid(a: u32, b: u16, c: u16, d: [u8; 8]) -> [u8; 16] {
    let a = a.to_le_bytes();
    let b = b.to_le_bytes();
    let c = c.to_le_bytes();
    [a[0], a[1], a[2], a[3], b[0], b[1], c[0], c[1], d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7]]
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SectionType {
    Bfv,
    Cfv,
    TdHob,
    TempMem,
    PermMem,
    Payload,
    PayloadParam,
}

impl SectionType {
    fn from_u32(v: u32) -> Option<Self> {
        Some(match v {
            0 => Self::Bfv,
            1 => Self::Cfv,
            2 => Self::TdHob,
            3 => Self::TempMem,
            4 => Self::PermMem,
            5 => Self::Payload,
            6 => Self::PayloadParam,
            _ => return None,
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Section {
    pub data_offset: u32,
    pub raw_size: u32,
    pub gpa: u64,
    pub mem_size: u64,
    pub kind: SectionType,
    /// Bit 0: MR.EXTEND the content; bit 1: PAGE.AUG (added later, not measured).
    pub attributes: u32,
}

impl Section {
    pub fn extends(&self) -> bool {
        self.attributes & 1 != 0
    }
    pub fn page_aug(&self) -> bool {
        self.attributes & 2 != 0
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TdvfError {
    #[error("firmware is truncated ({0})")]
    Truncated(&'static str),
    #[error("no OVMF GUIDed table footer 48 bytes before the end")]
    NoFooter,
    #[error("the GUIDed table has a malformed entry")]
    BadTable,
    #[error("no TDX metadata entry: not a TDVF image")]
    NoTdxMetadata,
    #[error("TDVF descriptor is malformed: {0}")]
    BadDescriptor(&'static str),
    #[error("TDVF section {0} is malformed: {1}")]
    BadSection(usize, &'static str),
    #[error("TDVF sections {0} and {1} overlap in guest memory")]
    Overlap(usize, usize),
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}
fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}
fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// Finds the data of the GUIDed-table entry `wanted`.
fn table_entry<'a>(fw: &'a [u8], wanted: &[u8; 16]) -> Result<&'a [u8], TdvfError> {
    let len = fw.len();
    if len < 50 {
        return Err(TdvfError::Truncated("shorter than the table footer"));
    }
    if fw[len - 48..len - 32] != FOOTER_GUID {
        return Err(TdvfError::NoFooter);
    }
    let table_len = usize::from(u16_at(fw, len - 50).ok_or(TdvfError::BadTable)?);
    let table_start = (len - 32).checked_sub(table_len).ok_or(TdvfError::BadTable)?;
    let mut end = len - 50; // entries end just before the footer's length field
    while end > table_start {
        if end < table_start + 18 {
            return Err(TdvfError::BadTable);
        }
        let guid = &fw[end - 16..end];
        let entry_len = usize::from(u16_at(fw, end - 18).ok_or(TdvfError::BadTable)?);
        if entry_len < 18 || end - table_start < entry_len {
            return Err(TdvfError::BadTable);
        }
        if guid == wanted {
            return Ok(&fw[end - entry_len..end - 18]);
        }
        end -= entry_len;
    }
    Err(TdvfError::NoTdxMetadata)
}

/// Parses the TDVF section list, refusing anything inconsistent.
pub fn sections(fw: &[u8]) -> Result<Vec<Section>, TdvfError> {
    let entry = table_entry(fw, &TDX_METADATA_GUID)?;
    let offset = u32_at(entry, 0).ok_or(TdvfError::BadTable)? as usize;
    let at = fw.len().checked_sub(offset).ok_or(TdvfError::BadDescriptor("offset beyond the file"))?;
    let header = fw.get(at..at + 16).ok_or(TdvfError::Truncated("descriptor header"))?;
    if &header[0..4] != b"TDVF" {
        return Err(TdvfError::BadDescriptor("signature is not TDVF"));
    }
    let length = u32_at(header, 4).unwrap_or(0);
    let version = u32_at(header, 8).unwrap_or(0);
    let count = u32_at(header, 12).unwrap_or(0);
    if version != 1 {
        return Err(TdvfError::BadDescriptor("version is not 1"));
    }
    if count == 0 || count > MAX_SECTIONS || length != 16 + 32 * count {
        return Err(TdvfError::BadDescriptor("section count and length disagree"));
    }
    let mut out = Vec::with_capacity(count as usize);
    for i in 0..count as usize {
        let s = at + 16 + 32 * i;
        let rec = fw.get(s..s + 32).ok_or(TdvfError::Truncated("section records"))?;
        let section = Section {
            data_offset: u32_at(rec, 0).unwrap_or(0),
            raw_size: u32_at(rec, 4).unwrap_or(0),
            gpa: u64_at(rec, 8).unwrap_or(0),
            mem_size: u64_at(rec, 16).unwrap_or(0),
            kind: SectionType::from_u32(u32_at(rec, 24).unwrap_or(u32::MAX))
                .ok_or(TdvfError::BadSection(i, "unknown type"))?,
            attributes: u32_at(rec, 28).unwrap_or(0),
        };
        if !section.gpa.is_multiple_of(PAGE) || !section.mem_size.is_multiple_of(PAGE) || section.mem_size == 0 {
            return Err(TdvfError::BadSection(i, "not page aligned"));
        }
        if u64::from(section.raw_size) > section.mem_size {
            return Err(TdvfError::BadSection(i, "raw data larger than its memory"));
        }
        let data_end = u64::from(section.data_offset) + u64::from(section.raw_size);
        if data_end > fw.len() as u64 {
            return Err(TdvfError::BadSection(i, "data beyond the file"));
        }
        if section.gpa.checked_add(section.mem_size).is_none() {
            return Err(TdvfError::BadSection(i, "address overflow"));
        }
        if let Some(j) = out
            .iter()
            .position(|o: &Section| section.gpa < o.gpa + o.mem_size && o.gpa < section.gpa + section.mem_size)
        {
            return Err(TdvfError::Overlap(j, i));
        }
        out.push(section);
    }
    Ok(out)
}

/// The order in which the VMM adds and extends pages: per page (upstream KVM/QEMU), or all
/// ADDs of a section before its EXTENDs (QEMU 8.x downstream TDX).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageOrder {
    SinglePass,
    TwoPass,
}

fn record(h: &mut Sha384, op: &[u8], gpa: u64) {
    let mut rec = [0u8; 128];
    rec[..op.len()].copy_from_slice(op);
    rec[16..24].copy_from_slice(&gpa.to_le_bytes());
    h.update(rec);
}

fn page_data<'a>(fw: &'a [u8], s: &Section, page: u64, zeros: &'a [u8; PAGE as usize]) -> &'a [u8] {
    let off = page * PAGE;
    if off + PAGE <= u64::from(s.raw_size) {
        let start = s.data_offset as usize + off as usize;
        &fw[start..start + PAGE as usize]
    } else {
        // Memory beyond the raw data is zero (not reached by real firmware's extended sections).
        zeros
    }
}

fn extend_page(h: &mut Sha384, fw: &[u8], s: &Section, page: u64, zeros: &[u8; PAGE as usize]) {
    let data = page_data(fw, s, page, zeros);
    for c in 0..PAGE / CHUNK {
        record(h, b"MR.EXTEND", s.gpa + page * PAGE + c * CHUNK);
        h.update(&data[(c * CHUNK) as usize..((c + 1) * CHUNK) as usize]);
    }
}

/// MRTD for `fw` under `order`. `sections` must come from [`sections`] on the same bytes.
pub fn mrtd(fw: &[u8], sections: &[Section], order: PageOrder) -> Mr {
    let mut h = Sha384::new();
    let zeros = [0u8; PAGE as usize];
    for s in sections {
        let pages = s.mem_size / PAGE;
        match order {
            PageOrder::SinglePass => {
                for p in 0..pages {
                    if !s.page_aug() {
                        record(&mut h, b"MEM.PAGE.ADD", s.gpa + p * PAGE);
                    }
                    if s.extends() {
                        extend_page(&mut h, fw, s, p, &zeros);
                    }
                }
            }
            PageOrder::TwoPass => {
                if !s.page_aug() {
                    for p in 0..pages {
                        record(&mut h, b"MEM.PAGE.ADD", s.gpa + p * PAGE);
                    }
                }
                if s.extends() {
                    for p in 0..pages {
                        extend_page(&mut h, fw, s, p, &zeros);
                    }
                }
            }
        }
    }
    h.finalize().into()
}

#[cfg(test)]
mod tests;
