//! The TD HOB list that the VMM writes into the firmware's TD_HOB section before the TD
//! starts, and that TDVF measures first into RTMR0 (`TdxHelperMeasureTdHob` in
//! `OvmfPkg/IntelTdx/TdxHelperLib/SecTdxHelper.c`: the HOBs from the start of the section up
//! to, not including, the end-of-list HOB).
//!
//! QEMU builds it (`hw/i386/tdvf-hob.c`, `tdx.c`): one PHIT HOB, then one resource-descriptor
//! HOB per RAM range, sorted by address, then the end HOB.
//! - RAM ranges come from QEMU's e820 RAM entries for q35: when the guest memory is
//!   ≥ 0xB000_0000, 2 GiB stay below 4 GiB and the rest starts at 4 GiB; otherwise all memory
//!   is below 4 GiB.
//! - The firmware's TD_HOB and TempMem sections are accepted up front: each splits its RAM
//!   range into (unaccepted head, accepted section, unaccepted tail). Accepted ranges are
//!   `EFI_RESOURCE_SYSTEM_MEMORY` (0), the rest `EFI_RESOURCE_MEMORY_UNACCEPTED` (7); all have
//!   attributes PRESENT | INITIALIZED | TESTED (7) and a zero owner GUID.
//! - PHIT: version 9, boot mode 0, the memory fields 0, `EfiEndOfHobList` = the guest address
//!   just past the end HOB (QEMU sets it to the current write position after that HOB).

use sha2::{Digest, Sha384};

use super::Mr;
use super::tdvf::{Section, SectionType};

/// `EFI_HOB_TYPE_HANDOFF`.
pub const HOB_TYPE_HANDOFF: u16 = 0x0001;
/// `EFI_HOB_TYPE_RESOURCE_DESCRIPTOR`.
pub const HOB_TYPE_RESOURCE_DESCRIPTOR: u16 = 0x0003;
/// `sizeof(EFI_HOB_HANDOFF_INFO_TABLE)`.
pub const PHIT_LEN: usize = 56;
/// `sizeof(EFI_HOB_RESOURCE_DESCRIPTOR)`.
pub const RESOURCE_LEN: usize = 48;
/// `sizeof(EFI_HOB_GENERIC_HEADER)`: the end HOB, not measured.
const END_HOB_LEN: u64 = 8;
const HANDOFF_TABLE_VERSION: u32 = 9;
/// PRESENT | INITIALIZED | TESTED.
const RESOURCE_ATTRIBUTES: u32 = 0x7;

/// Above this much memory QEMU's q35 keeps only 2 GiB below 4 GiB.
pub const LOWMEM_SPLIT_THRESHOLD: u64 = 0xB000_0000;
/// Memory kept below 4 GiB when splitting.
pub const LOWMEM_WHEN_SPLIT: u64 = 0x8000_0000;
/// Where the remainder starts.
pub const HIGHMEM_START: u64 = 0x1_0000_0000;
const PAGE: u64 = 4096;
/// Sanity bound (4 PiB) so every address computation stays far from overflow.
pub const MAX_MEMORY: u64 = 1 << 52;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResourceType {
    /// `EFI_RESOURCE_SYSTEM_MEMORY`: accepted before the TD starts.
    SystemMemory,
    /// `EFI_RESOURCE_MEMORY_UNACCEPTED`.
    Unaccepted,
}

impl ResourceType {
    pub fn code(self) -> u32 {
        match self {
            Self::SystemMemory => 0,
            Self::Unaccepted => 7,
        }
    }
}

/// One resource-descriptor HOB.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Resource {
    pub kind: ResourceType,
    pub start: u64,
    pub length: u64,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TdHobError {
    #[error("memory size {0:#x} is not a positive multiple of 4 KiB")]
    MemoryNotPageAligned(u64),
    #[error("memory size {0:#x} is above the supported maximum (4 PiB)")]
    MemoryTooLarge(u64),
    #[error("the firmware has no TD_HOB section")]
    NoTdHobSection,
    #[error("the firmware has more than one TD_HOB section")]
    SeveralTdHobSections,
    #[error("accepted range {start:#x}..{end:#x} (TD_HOB/TempMem) is not inside guest RAM below {ram_end:#x}")]
    OutsideRam { start: u64, end: u64, ram_end: u64 },
    #[error("accepted ranges overlap at {0:#x}")]
    Overlap(u64),
}

/// The TD HOB for one memory size and firmware layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TdHob {
    /// Guest address of the TD_HOB section.
    pub base: u64,
    pub resources: Vec<Resource>,
}

impl TdHob {
    /// Lays out the HOB list as QEMU does for `memory` bytes of guest RAM and the firmware's
    /// TD_HOB and TempMem `sections`.
    pub fn new(memory: u64, sections: &[Section]) -> Result<Self, TdHobError> {
        if memory == 0 || !memory.is_multiple_of(PAGE) {
            return Err(TdHobError::MemoryNotPageAligned(memory));
        }
        if memory > MAX_MEMORY {
            return Err(TdHobError::MemoryTooLarge(memory));
        }
        let mut hobs = sections.iter().filter(|s| s.kind == SectionType::TdHob);
        let base = hobs.next().ok_or(TdHobError::NoTdHobSection)?.gpa;
        if hobs.next().is_some() {
            return Err(TdHobError::SeveralTdHobSections);
        }
        let low_end = if memory >= LOWMEM_SPLIT_THRESHOLD { LOWMEM_WHEN_SPLIT } else { memory };
        let mut accepted: Vec<(u64, u64)> = sections
            .iter()
            .filter(|s| matches!(s.kind, SectionType::TdHob | SectionType::TempMem))
            .map(|s| (s.gpa, s.gpa.saturating_add(s.mem_size)))
            .collect();
        accepted.sort_unstable();
        let mut resources = Vec::new();
        let mut cursor = 0u64;
        for &(start, end) in &accepted {
            if end > low_end {
                return Err(TdHobError::OutsideRam { start, end, ram_end: low_end });
            }
            if start < cursor {
                return Err(TdHobError::Overlap(start));
            }
            if start > cursor {
                resources.push(Resource { kind: ResourceType::Unaccepted, start: cursor, length: start - cursor });
            }
            resources.push(Resource { kind: ResourceType::SystemMemory, start, length: end - start });
            cursor = end;
        }
        if low_end > cursor {
            resources.push(Resource { kind: ResourceType::Unaccepted, start: cursor, length: low_end - cursor });
        }
        if memory > low_end {
            resources.push(Resource { kind: ResourceType::Unaccepted, start: HIGHMEM_START, length: memory - low_end });
        }
        Ok(TdHob { base, resources })
    }

    /// The measured bytes: PHIT and resource HOBs (the end HOB is not measured).
    pub fn bytes(&self) -> Vec<u8> {
        let len = PHIT_LEN + RESOURCE_LEN * self.resources.len();
        let mut out = Vec::with_capacity(len);
        out.extend_from_slice(&HOB_TYPE_HANDOFF.to_le_bytes());
        out.extend_from_slice(&(PHIT_LEN as u16).to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes()); // reserved
        out.extend_from_slice(&HANDOFF_TABLE_VERSION.to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes()); // boot mode
        out.extend_from_slice(&[0; 32]); // EfiMemoryTop/Bottom, EfiFreeMemoryTop/Bottom
        let end_of_list = self.base + len as u64 + END_HOB_LEN;
        out.extend_from_slice(&end_of_list.to_le_bytes());
        for r in &self.resources {
            out.extend_from_slice(&HOB_TYPE_RESOURCE_DESCRIPTOR.to_le_bytes());
            out.extend_from_slice(&(RESOURCE_LEN as u16).to_le_bytes());
            out.extend_from_slice(&0u32.to_le_bytes()); // reserved
            out.extend_from_slice(&[0; 16]); // owner
            out.extend_from_slice(&r.kind.code().to_le_bytes());
            out.extend_from_slice(&RESOURCE_ATTRIBUTES.to_le_bytes());
            out.extend_from_slice(&r.start.to_le_bytes());
            out.extend_from_slice(&r.length.to_le_bytes());
        }
        out
    }

    /// SHA-384 of [`Self::bytes`]: the first RTMR0 event digest.
    pub fn digest(&self) -> Mr {
        Sha384::digest(self.bytes()).into()
    }
}
