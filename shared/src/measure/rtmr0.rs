//! RTMR0: the firmware/platform register (tdx.md §4.2). It depends on the host profile (guest
//! memory size, QEMU's ACPI tables), so it is published per profile, not per image.
//!
//! - [`evidence`]: the inputs (memory size, the three fw_cfg ACPI blobs, Secure Boot
//!   variables), parsed and checked.
//! - [`events`]: the event list TDVF (edk2-stable202502, direct kernel boot) extends.
//! - The replay is [`super::rtmr::replay`].

pub mod events;
pub mod evidence;

pub use events::rtmr0_events;
pub use evidence::{AcpiBlobs, EvidenceError, Rtmr0Evidence, SecureBootVariables, parse_memory_size};
