//! An NVSwitch's evidence (notes/gpu.md §1.4, §2 step 10). The four LS10 switches of a
//! protected-PCIe node answer the same SPDM request as its GPUs, under the same nonce, with a
//! chain to the same NVIDIA root (`LS_10 A01 FSP FMC LF` → `LS_10 A01 FSP BROM` → `NVIDIA LS_10
//! Provisioner ICA 1` → `NVIDIA GH100 Identity` → `NVIDIA Device Identity CA`), so they are
//! checked as a GPU is: chain, firmware id, signature, nonce, golden measurements, stapled OCSP.
//! Two things differ: the report has no firmware id to compare with the leaf's (see
//! `authenticate_device`), and it states the switch's own PDI, which must be the one its BROM
//! certificate carries ([`super::chain::VerifiedChain::device_pdi`]).

use serde::{Deserialize, Serialize};

use super::chain::{self, VerifiedChain};
use super::opaque::Pdi;
use super::{Device, DeviceRoot, Evidence, GpuError, Report, SwitchPolicy, Verified, authenticate_device, ocsp};

/// A switch's report that is genuine and fresh: parsed and shaped as a switch's, signed by the
/// leaf key NVIDIA's device identity vouches for (at `now`), answering `nonce`, naming the PDI
/// its certificate names. What it measures is not judged yet.
pub struct AuthenticatedSwitch<'a> {
    pub report: Report<'a>,
    pub chain: VerifiedChain,
    /// The switch's own PDI (opaque type 22, equal to its BROM certificate's).
    pub pdi: Pdi,
    /// Hex, when the report carries a firmware id (then the leaf's); LS10 reports do not.
    pub fwid: Option<String>,
}

/// What a verified switch runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SwitchVerdict {
    /// The device: SHA-256 (hex) of its leaf certificate's public key.
    pub device: String,
    /// Its PDI (hex), the name the GPUs know it by.
    pub pdi: String,
    /// The BIOS version its report carries.
    pub bios: String,
    /// The firmware id (hex) report and leaf share, when the report carries one.
    pub fwid: Option<String>,
    /// Golden measurements compared and equal.
    pub measurements_matched: usize,
    /// The oldest stapled OCSP response's `producedAt` (Unix seconds).
    pub ocsp_produced_at: u64,
}

/// Authenticates one NVSwitch's report, under `root`, for `nonce` at `now` (Unix seconds);
/// certificate signatures verified before are taken from `cache`. A report that is not a
/// switch's (one with no GPU list) is refused, so a GPU's never passes for a switch's to skip
/// the firmware-id check.
pub fn authenticate_switch<'a>(
    evidence: &Evidence<'a>,
    root: &DeviceRoot,
    nonce: &[u8; 32],
    now: u64,
    cache: &Verified,
) -> Result<AuthenticatedSwitch<'a>, GpuError> {
    let (report, chain, fwid) = authenticate_device(evidence, root, nonce, now, cache, Device::Switch)?;
    let pdi = report.opaque.switch.as_ref().map(|s| s.pdi).ok_or(GpuError::NotASwitch)?;
    if chain.device_pdi()? != pdi {
        return Err(GpuError::PdiMismatch);
    }
    Ok(AuthenticatedSwitch { report, chain, pdi, fwid: fwid.map(hex::encode) })
}

/// Verifies one NVSwitch's evidence for `nonce` against `policy` at `now` (Unix seconds):
/// genuine and fresh ([`authenticate_switch`]), running pinned firmware that measures as pinned,
/// its chain not revoked by NVIDIA's stapled OCSP answers (for the BROM, provisioner ICA and
/// identity certificates, as a GPU's).
pub fn verify_switch(
    evidence: &Evidence<'_>,
    nonce: &[u8; 32],
    policy: &SwitchPolicy,
    now: u64,
    cache: &Verified,
) -> Result<SwitchVerdict, GpuError> {
    let AuthenticatedSwitch { report, chain, pdi, fwid } =
        authenticate_switch(evidence, &policy.device_root, nonce, now, cache)?;
    let firmware = policy.firmware_for(&report.opaque)?;
    let measurements_matched = firmware.check(&report)?;
    let ocsp_produced_at = ocsp::check_chain(&chain.certificates, evidence.ocsp, now, policy.max_ocsp_age_secs, cache)?;
    let leaf = chain.certificates.first().ok_or(GpuError::Chain("no leaf"))?;
    Ok(SwitchVerdict {
        device: hex::encode(chain::spki_sha256(leaf)?),
        pdi: pdi.to_string(),
        bios: report.opaque.vbios.clone(),
        fwid,
        measurements_matched,
        ocsp_produced_at,
    })
}
