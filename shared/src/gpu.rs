//! NVIDIA GPU confidential-computing evidence (notes/gpu.md), verified offline: the enclave
//! runs this before it sends a prompt to a GPU node, `svc attest` to show the verdict.
//! Evidence, reference values and policy are kept apart, one concern per file:
//!
//! - [`evidence`]: the SPDM 1.1 `GET_MEASUREMENTS` request ‖ response a GPU signed, parsed by
//!   structure;
//! - [`chain`]: its certificate chain to NVIDIA's device identity root, pinned by the root's
//!   public key, and the firmware id in the leaf;
//! - [`ocsp`]: NVIDIA's stapled OCSP answers for that chain, at an injected "now";
//! - [`policy`]: the firmware a GPU may run and the golden measurements of each, pinned in
//!   configuration (the check that proves CC mode).
//! - [`switch`]: an NVSwitch's evidence, checked the same way; [`topology`]: that the GPUs and
//!   switches of a protected-PCIe node are one board of eight GPUs and four switches, linked
//!   as they say.
//!
//! - [`node`] (feature `gpu-node`): a GPU node's TDX quote and all its GPUs, bound to the
//!   node's TLS key and the enclave's nonce.
//!
//! [`verify`] runs them in that order and stops at the first failure: there is no partial
//! verdict a caller could mistake for a pass.

pub mod cache;
pub mod chain;
pub mod evidence;
#[cfg(feature = "gpu-node")]
pub mod node;
pub mod ocsp;
pub mod opaque;
pub mod policy;
#[cfg(feature = "gpu-ppcie")]
pub mod switch;
mod tlv;
#[cfg(feature = "gpu-ppcie")]
pub mod topology;

/// What a verified GPU runs (a wire type: the attestation document and `svc attest` show it).
pub use crate::wire::GpuVerdict;
pub use cache::Verified;
pub use evidence::Report;
pub use opaque::Pdi;
pub use policy::{Firmware, GpuPolicy};
#[cfg(feature = "gpu-ppcie")]
pub use policy::{SwitchFirmware, SwitchPolicy};
#[cfg(feature = "gpu-ppcie")]
pub use switch::{AuthenticatedSwitch, SwitchVerdict, authenticate_switch, verify_switch};
#[cfg(feature = "gpu-ppcie")]
pub use topology::{Ppcie, TopologyError, check_ppcie};

/// Whose device identity root a GPU's chain must end at.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum DeviceRoot {
    /// NVIDIA's "Device Identity CA" (every real GPU).
    #[default]
    Nvidia,
    /// A development root (`tests/dev-gpu`), by the SHA-256 of its SubjectPublicKeyInfo: only
    /// a development build names one, never a configuration file.
    Dev([u8; 32]),
}

impl DeviceRoot {
    pub fn spki_sha256(&self) -> &[u8; 32] {
        match self {
            DeviceRoot::Nvidia => &chain::NVIDIA_DEVICE_ROOT_SPKI_SHA256,
            DeviceRoot::Dev(spki) => spki,
        }
    }

    /// `nvidia`, or `dev:<SPKI SHA-256>`: what a verdict shows so nobody mistakes the two.
    pub fn label(&self) -> String {
        match self {
            DeviceRoot::Nvidia => "nvidia".into(),
            DeviceRoot::Dev(spki) => format!("dev:{}", hex::encode(spki)),
        }
    }
}

/// Why a GPU's evidence is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GpuError {
    #[error("malformed evidence: {0}")]
    Malformed(&'static str),
    #[error("certificate chain: {0}")]
    Chain(&'static str),
    #[error("the report's signature does not verify under the leaf certificate")]
    Signature,
    #[error("the report's firmware id differs from the leaf certificate's")]
    FwidMismatch,
    #[error("the report or the leaf certificate carries no firmware id")]
    FwidMissing,
    #[error("the report answers another nonce")]
    Nonce,
    #[error("no pinned reference for {firmware}")]
    NoReference { firmware: String },
    #[error("measurement {index} is not a golden value")]
    MeasurementMismatch { index: u8 },
    #[error("measurement {index} is missing from the report")]
    MeasurementMissing { index: u8 },
    #[error("OCSP: {0}")]
    Ocsp(&'static str),
    #[error("the report is not an NVSwitch's: it names no GPUs")]
    NotASwitch,
    #[error("the switch's report names another PDI than its BROM certificate")]
    PdiMismatch,
    #[error("the BROM certificate's serial number carries no PDI")]
    NoDevicePdi,
    #[cfg(feature = "gpu-ppcie")]
    #[error("protected-PCIe topology: {0}")]
    Topology(#[from] TopologyError),
}

/// One GPU's evidence as a node hands it over.
#[derive(Debug, Clone, Copy)]
pub struct Evidence<'a> {
    /// The raw report (request ‖ response).
    pub report: &'a [u8],
    /// The PEM certificate chain, leaf first.
    pub certificate_chain: &'a [u8],
    /// DER `OCSPResponse`s for the chain's intermediate certificates.
    pub ocsp: &'a [Vec<u8>],
}

/// A report that is genuine and fresh: parsed, from the firmware the leaf certificate names
/// (its FWID), signed by that leaf's key, which NVIDIA's device identity vouches for (at
/// `now`), answering `nonce`. What it measures is
/// not judged yet.
pub struct Authenticated<'a> {
    pub report: Report<'a>,
    pub chain: chain::VerifiedChain,
    /// Hex.
    pub fwid: String,
}

/// Authenticates one GPU's report, under `root`, for `nonce` at `now` (Unix seconds);
/// certificate signatures verified before are taken from `cache`.
pub fn authenticate<'a>(
    evidence: &Evidence<'a>,
    root: &DeviceRoot,
    nonce: &[u8; 32],
    now: u64,
    cache: &Verified,
) -> Result<Authenticated<'a>, GpuError> {
    let (report, chain, fwid) = authenticate_device(evidence, root, nonce, now, cache, Device::Gpu)?;
    let fwid = hex::encode(fwid.ok_or(GpuError::FwidMissing)?);
    Ok(Authenticated { report, chain, fwid })
}

/// Which kind of device a report is taken for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Device {
    Gpu,
    #[cfg_attr(not(feature = "gpu-ppcie"), allow(dead_code))]
    Switch,
}

/// The checks every device's report passes, in order: parsed (and, for a switch, shaped as a
/// switch's), its chain to `root`, the firmware id in report and leaf, the signature, the
/// nonce. Returns the report, the chain and the firmware id the report carries.
fn authenticate_device<'a>(
    evidence: &Evidence<'a>,
    root: &DeviceRoot,
    nonce: &[u8; 32],
    now: u64,
    cache: &Verified,
    device: Device,
) -> Result<(Report<'a>, chain::VerifiedChain, Option<Vec<u8>>), GpuError> {
    use p384::ecdsa::Signature;
    use p384::ecdsa::signature::Verifier;

    let report = Report::parse(evidence.report)?;
    if device == Device::Switch && report.opaque.switch.is_none() {
        return Err(GpuError::NotASwitch);
    }
    let chain = chain::verify(evidence.certificate_chain, root.spki_sha256(), now, cache)?;
    let fwid = match (&report.opaque.fwid, &chain.leaf_fwid, device) {
        (Some(reported), Some(certified), _) if reported == certified => Some(reported.clone()),
        (Some(_), Some(_), _) => return Err(GpuError::FwidMismatch),
        // An LS10 NVSwitch's report carries no firmware id (opaque type 20) although its leaf
        // certifies one (every switch of both protected-PCIe sample sets), and NVIDIA's switch
        // verifiers compare the two only when the report has one (nvtrust
        // `verify_switch_certificate_chain`, go-nvattest-tools
        // `defaultVerifySwitchCertificateChain`). The switch is still held to its golden
        // measurements. A GPU's report without one is refused: drivers since 550 send it.
        (None, _, Device::Switch) => None,
        _ => return Err(GpuError::FwidMissing),
    };
    let signature = Signature::from_slice(&report.signature).map_err(|_| GpuError::Signature)?;
    chain.leaf_key.verify(report.signed, &signature).map_err(|_| GpuError::Signature)?;
    if report.nonce != *nonce {
        return Err(GpuError::Nonce);
    }
    Ok((report, chain, fwid))
}

/// Verifies one GPU's evidence for `nonce` against `policy` at `now` (Unix seconds): genuine
/// and fresh ([`authenticate`]), running pinned firmware that measures as pinned, its chain
/// not revoked by NVIDIA's stapled OCSP answers. Signatures over certificates and OCSP answers
/// verified before are taken from `cache`; the report's signature is checked every time.
pub fn verify(
    evidence: &Evidence<'_>,
    nonce: &[u8; 32],
    policy: &GpuPolicy,
    now: u64,
    cache: &Verified,
) -> Result<GpuVerdict, GpuError> {
    let Authenticated { report, chain, fwid } = authenticate(evidence, &policy.device_root, nonce, now, cache)?;
    let firmware = policy.firmware_for(&report.opaque)?;
    let measurements_matched = firmware.check(&report)?;
    let ocsp_produced_at = ocsp::check_chain(&chain.certificates, evidence.ocsp, now, policy.max_ocsp_age_secs, cache)?;
    let leaf = chain.certificates.first().ok_or(GpuError::Chain("no leaf"))?;
    let device = hex::encode(chain::spki_sha256(leaf)?);
    let o = &report.opaque;
    Ok(GpuVerdict {
        device,
        driver: o.driver.clone(),
        vbios: o.vbios.clone(),
        board: format!("{}-{}-{}", o.project, o.project_sku, o.chip_sku),
        fwid,
        measurements_matched,
        ocsp_produced_at,
    })
}
