//! Measurement math (feature `measure`): what a TD's MRTD and RTMRs will be for a given
//! firmware, kernel, command line and initrd, computed offline (tdx.md §4). Pure functions of
//! bytes; `svc measure` and the image build read the files and print or publish the values.

pub mod rtmr;
pub mod rtmr0;
pub mod td_hob;
pub mod tdvf;
pub mod uefi_var;

use sha2::{Digest, Sha256};

/// A 48-byte TDX measurement register value (SHA-384).
pub type Mr = [u8; 48];

/// The image identity dstack uses: sha256(MRTD ‖ RTMR1 ‖ RTMR2). RTMR0 is left out because
/// it describes the host platform, not the image.
pub fn image_id(mrtd: &Mr, rtmr1: &Mr, rtmr2: &Mr) -> [u8; 32] {
    Sha256::new().chain_update(mrtd).chain_update(rtmr1).chain_update(rtmr2).finalize().into()
}

/// The command line the Linux EFI stub receives from edk2 2025.02 when an initrd is passed:
/// the firmware appends ` initrd=initrd` (tdx.md §4.4; the image boot test checks it).
pub fn load_options(cmdline: &str) -> String {
    format!("{cmdline} initrd=initrd")
}

/// Everything `svc measure` reports for one image.
#[derive(Debug, Clone)]
pub struct ImageMeasurements {
    pub sections: Vec<tdvf::Section>,
    pub mrtd_single_pass: Mr,
    pub mrtd_two_pass: Mr,
    pub rtmr1_events: Vec<rtmr::Event>,
    pub rtmr1: Mr,
    pub rtmr2_events: Vec<rtmr::Event>,
    pub rtmr2: Mr,
    /// sha256(MRTD single-pass ‖ RTMR1 ‖ RTMR2).
    pub image_id: [u8; 32],
}

#[derive(Debug, thiserror::Error)]
pub enum MeasureError {
    #[error("firmware: {0}")]
    Firmware(#[from] tdvf::TdvfError),
    #[error("kernel: {0}")]
    Kernel(#[from] rtmr::KernelError),
    #[error("RTMR0: {0}")]
    Rtmr0(#[from] rtmr0::events::Rtmr0Error),
}

/// Measures firmware + kernel + initrd + command line (as given to QEMU's `-append`).
pub fn measure_image(
    firmware: &[u8],
    kernel: &[u8],
    initrd: &[u8],
    cmdline: &str,
) -> Result<ImageMeasurements, MeasureError> {
    let sections = tdvf::sections(firmware)?;
    let mrtd_single_pass = tdvf::mrtd(firmware, &sections, tdvf::PageOrder::SinglePass);
    let mrtd_two_pass = tdvf::mrtd(firmware, &sections, tdvf::PageOrder::TwoPass);
    let rtmr1_events = rtmr::rtmr1_events(kernel)?;
    let rtmr1 = rtmr::replay(&rtmr1_events);
    let rtmr2_events = rtmr::rtmr2_events(&load_options(cmdline), initrd);
    let rtmr2 = rtmr::replay(&rtmr2_events);
    Ok(ImageMeasurements {
        image_id: image_id(&mrtd_single_pass, &rtmr1, &rtmr2),
        sections,
        mrtd_single_pass,
        mrtd_two_pass,
        rtmr1_events,
        rtmr1,
        rtmr2_events,
        rtmr2,
    })
}

/// RTMR0 for one firmware on one host profile, with its events.
#[derive(Debug, Clone)]
pub struct Rtmr0Measurement {
    pub events: Vec<rtmr::Event>,
    pub rtmr0: Mr,
}

/// Measures RTMR0 for `firmware` on the host described by `evidence` (tdx.md §4.2).
pub fn measure_rtmr0(firmware: &[u8], evidence: &rtmr0::Rtmr0Evidence) -> Result<Rtmr0Measurement, MeasureError> {
    let sections = tdvf::sections(firmware)?;
    let events = rtmr0::rtmr0_events(firmware, &sections, evidence)?;
    Ok(Rtmr0Measurement { rtmr0: rtmr::replay(&events), events })
}
