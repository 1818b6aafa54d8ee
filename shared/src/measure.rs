//! Measurement math (feature `measure`): what a TD's MRTD and RTMRs will be for a given
//! firmware, kernel, command line and initrd, computed offline (tdx.md §4). Pure functions of
//! bytes; `svc measure` and the image build read the files and print or publish the values.

pub mod rtmr;
pub mod tdvf;

use sha2::{Digest, Sha256};

/// A 48-byte TDX measurement register value (SHA-384).
pub type Mr = [u8; 48];

/// The image identity dstack uses: sha256(MRTD ‖ RTMR1 ‖ RTMR2). RTMR0 is left out because
/// it describes the host platform, not the image.
pub fn image_id(mrtd: &Mr, rtmr1: &Mr, rtmr2: &Mr) -> [u8; 32] {
    Sha256::new().chain_update(mrtd).chain_update(rtmr1).chain_update(rtmr2).finalize().into()
}
