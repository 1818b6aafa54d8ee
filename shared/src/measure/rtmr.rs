//! RTMR event chains: each event's SHA-384 digest is extended as
//! `RTMR = SHA384(RTMR ‖ digest)` from 48 zero bytes (tdx.md §4.3, §4.4).

use sha2::{Digest, Sha384};

use super::Mr;

/// One measured event: what it is and its digest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    pub description: String,
    pub digest: Mr,
}

impl Event {
    pub(crate) fn of(description: impl Into<String>, data: &[u8]) -> Self {
        Event { description: description.into(), digest: Sha384::digest(data).into() }
    }
}

/// Replays `events` into a register value.
pub fn replay(events: &[Event]) -> Mr {
    events.iter().fold([0u8; 48], |rtmr, e| Sha384::new().chain_update(rtmr).chain_update(e.digest).finalize().into())
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum KernelError {
    #[error("kernel is not a PE32+ image (EFI stub)")]
    NotPe,
    #[error("kernel PE offsets are inconsistent")]
    BadOffsets,
}

/// Authenticode SHA-384 of a PE image, as OVMF measures the kernel it loads.
pub fn authenticode_sha384(pe: &[u8]) -> Result<Mr, KernelError> {
    let file = object::read::pe::PeFile64::parse(pe).map_err(|_| KernelError::NotPe)?;
    let mut h = Sha384::new();
    authenticode::authenticode_digest(&file, &mut h).map_err(|_| KernelError::BadOffsets)?;
    Ok(h.finalize().into())
}

/// RTMR1 for direct boot with QEMU ≥ 10.2 (the kernel is served unpatched to TDs) and the
/// edk2-stable202502 event order: the kernel, then OVMF's fixed boot events.
/// Older QEMU patches the bzImage setup header first (docs/auditing.md).
pub fn rtmr1_events(kernel: &[u8]) -> Result<Vec<Event>, KernelError> {
    Ok(vec![
        Event { description: "kernel (Authenticode SHA-384)".into(), digest: authenticode_sha384(kernel)? },
        Event::of(
            "EV_EFI_ACTION: Calling EFI Application from Boot Option",
            b"Calling EFI Application from Boot Option",
        ),
        Event::of("EV_SEPARATOR", &[0, 0, 0, 0]),
        Event::of("EV_EFI_ACTION: Exit Boot Services Invocation", b"Exit Boot Services Invocation"),
        Event::of(
            "EV_EFI_ACTION: Exit Boot Services Returned with Success",
            b"Exit Boot Services Returned with Success",
        ),
    ])
}

/// The command line as the Linux EFI stub measures it: UTF-16LE with a terminating NUL.
pub fn cmdline_utf16(cmdline: &str) -> Vec<u8> {
    cmdline.encode_utf16().chain([0]).flat_map(u16::to_le_bytes).collect()
}

/// RTMR2: the stub measures LoadOptions (the command line as the firmware hands it over,
/// `initrd=initrd` included) and then the initrd (Linux ≥ 6.9).
pub fn rtmr2_events(load_options: &str, initrd: &[u8]) -> Vec<Event> {
    vec![
        Event::of(format!("kernel command line (UTF-16LE): {load_options:?}"), &cmdline_utf16(load_options)),
        Event::of("initrd", initrd),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replay_is_the_extend_chain() {
        let e = |d: u8| Event { description: String::new(), digest: [d; 48] };
        let one: Mr = Sha384::new().chain_update([0u8; 48]).chain_update([1u8; 48]).finalize().into();
        let two: Mr = Sha384::new().chain_update(one).chain_update([2u8; 48]).finalize().into();
        assert_eq!(replay(&[]), [0; 48]);
        assert_eq!(replay(&[e(1)]), one);
        assert_eq!(replay(&[e(1), e(2)]), two);
        assert_ne!(replay(&[e(2), e(1)]), two, "order matters");
    }

    #[test]
    fn cmdline_encoding() {
        assert_eq!(cmdline_utf16("ab"), vec![b'a', 0, b'b', 0, 0, 0]);
        assert_eq!(cmdline_utf16(""), vec![0, 0]);
    }

    #[test]
    fn non_pe_kernels_are_refused() {
        assert_eq!(authenticode_sha384(b"not a pe"), Err(KernelError::NotPe));
    }
}
