//! The protected-PCIe (PPCIE) topology of one node (notes/gpu.md §1.4, §2 step 10): an HGX
//! board of eight H100s and four LS10 NVSwitches in one confidential VM, whose NVLink traffic
//! is not encrypted, so the GPUs must be linked to these switches and no others. Each device's
//! report is authenticated on its own ([`super::authenticate`], [`super::authenticate_switch`]);
//! this checks, from what they signed, that together they are one such board, in this order:
//!
//! 1. every GPU in protected-PCIe mode ([`mode`]): none in another mode beside them;
//! 2. every switch locked (opaque type 25 is 1; nvtrust checks the lock through NSCQ, unsigned,
//!    before it attests);
//! 3. exactly eight GPUs and four switches;
//! 4. no GPU PDI and no switch PDI twice;
//! 5. each GPU's NVLinks reach exactly the four switches present (an all-zero entry is a link
//!    that is off);
//! 6. each switch names exactly the eight GPUs present.
//!
//! NVIDIA's ppcie-verifier (nvtrust) checks 3, that every GPU reaches the same four switches,
//! that each switch is one of them, and that every switch names the same eight GPU PDIs;
//! go-nvattest-tools the same plus that no switch PDI repeats; trustee's `validate_ppcie` only
//! counts twelve devices, four switch PDIs per GPU and eight GPU PDIs in all. None of them can
//! hold the switches' GPU list against the GPUs present, since a GPU's report does not state
//! its own PDI: here it is the one the GPU's BROM certificate carries
//! ([`super::chain::VerifiedChain::device_pdi`]).
//!
//! A plain function over parsed reports: it takes them as authenticated, and it checks no
//! signature itself.

use std::collections::BTreeSet;

use super::opaque::{Opaque, Pdi, SwitchFields};

/// An HGX protected-PCIe board's GPUs.
pub const PPCIE_GPUS: usize = 8;
/// An HGX protected-PCIe board's NVSwitches.
pub const PPCIE_SWITCHES: usize = 4;
/// Feature flag (opaque type 36) of a GPU in protected-PCIe mode.
const PPCIE_FLAG: u64 = 2;
/// Protected-PCIe status (opaque type 21) of a GPU in that mode.
const PROTECTED_PCIE_ON: u8 = 0xAA;
/// Lock status (opaque type 25) of a locked switch.
const LOCKED: u64 = 1;
/// A GPU's NVLink that is off names this switch.
const NO_SWITCH: Pdi = Pdi([0; 8]);

/// One GPU as the check reads it: its own PDI and its report's opaque data.
#[derive(Debug, Clone, Copy)]
pub struct Gpu<'a> {
    /// From its BROM certificate ([`super::chain::VerifiedChain::device_pdi`]).
    pub pdi: Pdi,
    pub opaque: &'a Opaque,
}

/// A board that passed: its GPUs and its switches by PDI, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ppcie {
    pub gpus: Vec<Pdi>,
    pub switches: Vec<Pdi>,
}

/// What a GPU's report says about protected PCIe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Feature flag 2, with protected-PCIe status 0xAA or none; or, from a driver that sends
    /// no feature flag (the 570.124.06 sample set), status 0xAA.
    Ppcie,
    /// Another feature flag: 0 or 1, SPT or MPT (NVIDIA's sources number those two
    /// differently; the B200 multi-GPU sample says 1).
    FeatureFlag(u64),
    /// No feature flag, and a protected-PCIe status other than 0xAA (0x55 outside the mode).
    ProtectedPcie(u8),
    /// Feature flag 2 beside a protected-PCIe status other than 0xAA.
    Contradictory { status: u8 },
    /// Neither field.
    Unstated,
}

impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Mode::Ppcie => f.write_str("protected PCIe"),
            Mode::FeatureFlag(flag) => write!(f, "feature flag {flag}"),
            Mode::ProtectedPcie(status) => write!(f, "protected-PCIe status {status:#04x}"),
            Mode::Contradictory { status } => write!(f, "feature flag 2 but protected-PCIe status {status:#04x}"),
            Mode::Unstated => f.write_str("no mode stated"),
        }
    }
}

/// A GPU's mode, from its signed opaque data. The feature flag (type 36) is what NVIDIA's
/// verifiers read (nvtrust, attestation-sdk, go-nvattest-tools), but drivers before it (the
/// protected-PCIe sample set, driver 570.124.06) send only the protected-PCIe status (type 21):
/// 0xAA on each GPU of both protected-PCIe sample sets, 0x55 on each GPU outside that mode that
/// sends it. Where both are sent they must agree.
pub fn mode(o: &Opaque) -> Mode {
    match (o.feature_flag, o.protected_pcie) {
        (Some(PPCIE_FLAG), None | Some(PROTECTED_PCIE_ON)) => Mode::Ppcie,
        (Some(PPCIE_FLAG), Some(status)) => Mode::Contradictory { status },
        (Some(flag), _) => Mode::FeatureFlag(flag),
        (None, Some(PROTECTED_PCIE_ON)) => Mode::Ppcie,
        (None, Some(status)) => Mode::ProtectedPcie(status),
        (None, None) => Mode::Unstated,
    }
}

/// Why a node's GPUs and switches are not one protected-PCIe board; the first failure, in the
/// order of the module's list. GPUs and switches are counted from 0 in the order given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TopologyError {
    #[error("GPU {gpu} is an NVSwitch's report")]
    NotAGpu { gpu: usize },
    #[error("switch {switch} is not an NVSwitch's report")]
    NotASwitch { switch: usize },
    #[error("no GPU is in protected-PCIe mode (GPU 0: {mode})")]
    NotPpcie { mode: Mode },
    #[error("GPU {gpu} is not in protected-PCIe mode ({mode}), beside GPUs that are")]
    MixedModes { gpu: usize, mode: Mode },
    #[error("switch {switch} is not locked (lock status {status:?})")]
    SwitchUnlocked { switch: usize, status: Option<u64> },
    #[error("{found} GPUs, not {PPCIE_GPUS}")]
    GpuCount { found: usize },
    #[error("{found} switches, not {PPCIE_SWITCHES}")]
    SwitchCount { found: usize },
    #[error("GPU {pdi} twice")]
    DuplicateGpu { pdi: Pdi },
    #[error("switch {pdi} twice")]
    DuplicateSwitch { pdi: Pdi },
    #[error("GPU {gpu} has an NVLink to switch {switch}, which is not present")]
    GpuNamesUnknownSwitch { gpu: Pdi, switch: Pdi },
    #[error("GPU {gpu} has no NVLink to switch {switch}")]
    GpuMissesSwitch { gpu: Pdi, switch: Pdi },
    #[error("switch {switch} names GPU {gpu}, which is not present")]
    SwitchNamesUnknownGpu { switch: Pdi, gpu: Pdi },
    #[error("switch {switch} does not name GPU {gpu}")]
    SwitchMissesGpu { switch: Pdi, gpu: Pdi },
}

/// Checks that `gpus` and `switches` (their reports' opaque data) are one protected-PCIe board,
/// each linked to each; the first failure is the error.
pub fn check_ppcie(gpus: &[Gpu<'_>], switches: &[&Opaque]) -> Result<Ppcie, TopologyError> {
    if let Some(gpu) = gpus.iter().position(|g| g.opaque.switch.is_some()) {
        return Err(TopologyError::NotAGpu { gpu });
    }
    let switches: Vec<&SwitchFields> = switches
        .iter()
        .enumerate()
        .map(|(switch, o)| o.switch.as_ref().ok_or(TopologyError::NotASwitch { switch }))
        .collect::<Result<_, _>>()?;
    let modes: Vec<Mode> = gpus.iter().map(|g| mode(g.opaque)).collect();
    if let Some((gpu, &other)) = modes.iter().enumerate().find(|(_, m)| **m != Mode::Ppcie) {
        return Err(match modes.contains(&Mode::Ppcie) {
            true => TopologyError::MixedModes { gpu, mode: other },
            false => TopologyError::NotPpcie { mode: other },
        });
    }
    if let Some((switch, s)) = switches.iter().enumerate().find(|(_, s)| s.lock_status != Some(LOCKED)) {
        return Err(TopologyError::SwitchUnlocked { switch, status: s.lock_status });
    }
    if gpus.len() != PPCIE_GPUS {
        return Err(TopologyError::GpuCount { found: gpus.len() });
    }
    if switches.len() != PPCIE_SWITCHES {
        return Err(TopologyError::SwitchCount { found: switches.len() });
    }
    let gpu_set = unique(gpus.iter().map(|g| g.pdi)).map_err(|pdi| TopologyError::DuplicateGpu { pdi })?;
    let switch_set = unique(switches.iter().map(|s| s.pdi)).map_err(|pdi| TopologyError::DuplicateSwitch { pdi })?;
    for g in gpus {
        let links: BTreeSet<Pdi> = g.opaque.nvlink_switches.iter().copied().filter(|p| *p != NO_SWITCH).collect();
        if let Some(&switch) = links.difference(&switch_set).next() {
            return Err(TopologyError::GpuNamesUnknownSwitch { gpu: g.pdi, switch });
        }
        if let Some(&switch) = switch_set.difference(&links).next() {
            return Err(TopologyError::GpuMissesSwitch { gpu: g.pdi, switch });
        }
    }
    for s in &switches {
        let named: BTreeSet<Pdi> = s.gpus.iter().copied().collect();
        if let Some(&gpu) = named.difference(&gpu_set).next() {
            return Err(TopologyError::SwitchNamesUnknownGpu { switch: s.pdi, gpu });
        }
        if let Some(&gpu) = gpu_set.difference(&named).next() {
            return Err(TopologyError::SwitchMissesGpu { switch: s.pdi, gpu });
        }
    }
    Ok(Ppcie { gpus: gpu_set.into_iter().collect(), switches: switch_set.into_iter().collect() })
}

/// The PDIs as a set, or the first that repeats.
fn unique(pdis: impl Iterator<Item = Pdi>) -> Result<BTreeSet<Pdi>, Pdi> {
    let mut set = BTreeSet::new();
    for pdi in pdis {
        if !set.insert(pdi) {
            return Err(pdi);
        }
    }
    Ok(set)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mode_is_the_feature_flag_else_the_protected_pcie_status() {
        let o = |feature_flag, protected_pcie| Opaque { feature_flag, protected_pcie, ..Opaque::default() };
        assert_eq!(mode(&o(Some(2), None)), Mode::Ppcie);
        assert_eq!(mode(&o(Some(2), Some(0xaa))), Mode::Ppcie);
        assert_eq!(mode(&o(None, Some(0xaa))), Mode::Ppcie);
        assert_eq!(mode(&o(Some(2), Some(0x55))), Mode::Contradictory { status: 0x55 });
        assert_eq!(mode(&o(Some(1), Some(0xaa))), Mode::FeatureFlag(1));
        assert_eq!(mode(&o(Some(0), None)), Mode::FeatureFlag(0));
        assert_eq!(mode(&o(None, Some(0x55))), Mode::ProtectedPcie(0x55));
        assert_eq!(mode(&o(None, None)), Mode::Unstated);
    }
}
