//! The reference values a GPU is held to, pinned in the enclave's measured configuration:
//! which firmware may run (driver, VBIOS, board and chip) and the golden measurements of each,
//! taken from NVIDIA's signed RIMs outside the enclave (`svc gpu-reference`). A GPU in NVIDIA's
//! devtools mode signs a valid report whose measurements differ: this check is what proves
//! confidential-computing mode. An NVSwitch's firmware is held to its golden measurements the
//! same way ([`SwitchPolicy`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::GpuError;
use super::evidence::{NVDEC0_DISABLED, Opaque, Report};

/// NVDEC0's measurement, compared only while NVDEC0 is enabled.
const NVDEC0_INDEX: u8 = 35;

/// The `gpu` section of the enclave's configuration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GpuPolicy {
    /// The firmware a GPU may run, each with its golden measurements.
    pub firmware: Vec<Firmware>,
    /// The oldest stapled OCSP response accepted, in seconds since it was produced.
    #[serde(default = "default_max_ocsp_age")]
    pub max_ocsp_age_secs: u64,
    /// NVIDIA's root unless a development build sets another; never read from configuration.
    #[serde(skip)]
    pub device_root: super::DeviceRoot,
}

fn default_max_ocsp_age() -> u64 {
    // NVIDIA's responses are valid for a day.
    24 * 3600
}

/// One firmware combination and what it measures.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Firmware {
    pub driver: String,
    pub vbios: String,
    pub project: String,
    pub project_sku: String,
    pub chip_sku: String,
    /// Golden SHA-384 values (hex) by RIM measurement index (from 0; the report's block is
    /// the index + 1): the active ones of the driver RIM and the VBIOS RIM; any one of an
    /// index's values matches.
    pub measurements: BTreeMap<u8, Vec<String>>,
    /// The SHA-256 (hex) of the RIM files the values came from, for whoever re-derives them.
    #[serde(default)]
    pub rims: Vec<String>,
}

impl GpuPolicy {
    /// The pinned firmware the report says the GPU runs.
    pub fn firmware_for(&self, o: &Opaque) -> Result<&Firmware, GpuError> {
        let same = |f: &&Firmware| {
            (&f.driver, &f.vbios, &f.project, &f.project_sku, &f.chip_sku)
                == (&o.driver, &o.vbios, &o.project, &o.project_sku, &o.chip_sku)
        };
        self.firmware.iter().find(same).ok_or_else(|| GpuError::NoReference {
            firmware: format!(
                "driver {}, VBIOS {}, board {}-{}-{}",
                o.driver, o.vbios, o.project, o.project_sku, o.chip_sku
            ),
        })
    }
}

impl Firmware {
    /// Compares every golden index with the report; returns how many matched. NVDEC0's
    /// measurement may differ or be absent while the report says NVDEC0 is disabled.
    pub fn check(&self, report: &Report<'_>) -> Result<usize, GpuError> {
        let nvdec0_off = report.opaque.nvdec0_status == Some(NVDEC0_DISABLED);
        compare(&self.measurements, report, |index| index == NVDEC0_INDEX && nvdec0_off)
    }
}

/// Compares every golden index with the report (RIM indexes count from 0, SPDM measurement
/// blocks from 1); returns how many matched. An index `exempt` says may differ or be absent.
fn compare(
    golden: &BTreeMap<u8, Vec<String>>,
    report: &Report<'_>,
    exempt: impl Fn(u8) -> bool,
) -> Result<usize, GpuError> {
    let mut matched = 0;
    for (index, values) in golden {
        let measured = report.measurements.iter().find(|m| u16::from(m.index) == u16::from(*index) + 1);
        match measured {
            Some(m) if values.iter().any(|g| hex::decode(g).is_ok_and(|g| g == m.value)) => matched += 1,
            _ if exempt(*index) => {}
            Some(_) => return Err(GpuError::MeasurementMismatch { index: *index }),
            None => return Err(GpuError::MeasurementMissing { index: *index }),
        }
    }
    Ok(matched)
}

/// The `switches` of a protected-PCIe node: the NVSwitch firmware its switches may run, each
/// with its golden measurements. NVIDIA publishes those as RIMs too
/// (`NV_SWITCH_BIOS_5612_0002_890_<BIOS>`), none of which is among this project's samples, so
/// they come from configuration like a GPU's.
#[cfg(feature = "gpu-ppcie")]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SwitchPolicy {
    pub firmware: Vec<SwitchFirmware>,
    /// The oldest stapled OCSP response accepted, in seconds since it was produced.
    #[serde(default = "default_max_ocsp_age")]
    pub max_ocsp_age_secs: u64,
    /// NVIDIA's root (the same as a GPU's) unless a development build sets another; never read
    /// from configuration.
    #[serde(skip)]
    pub device_root: super::DeviceRoot,
}

/// One NVSwitch firmware and what it measures.
#[cfg(feature = "gpu-ppcie")]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SwitchFirmware {
    /// The BIOS version the report carries (opaque type 6, ASCII), e.g. `96.10.6D.00.01`: the
    /// only firmware identifier in an LS10's report. Its project, SKU and chip SKU (`5612`,
    /// `0002`, `890` in NVIDIA's RIM names) are constants of NVIDIA's verifiers, not report
    /// fields; the chain names the chip (`LS_10 A01 FSP BROM`).
    pub bios: String,
    /// Golden SHA-384 values (hex) by RIM measurement index (from 0; the report's block is the
    /// index + 1); any one of an index's values matches.
    pub measurements: BTreeMap<u8, Vec<String>>,
    /// The SHA-256 (hex) of the RIM files the values came from, for whoever re-derives them.
    #[serde(default)]
    pub rims: Vec<String>,
}

#[cfg(feature = "gpu-ppcie")]
impl SwitchPolicy {
    /// The pinned firmware the switch's report says it runs.
    pub fn firmware_for(&self, o: &Opaque) -> Result<&SwitchFirmware, GpuError> {
        self.firmware
            .iter()
            .find(|f| f.bios == o.vbios)
            .ok_or_else(|| GpuError::NoReference { firmware: format!("switch BIOS {}", o.vbios) })
    }
}

#[cfg(feature = "gpu-ppcie")]
impl SwitchFirmware {
    /// Compares every golden index with the report; returns how many matched. No index is
    /// exempt.
    pub fn check(&self, report: &Report<'_>) -> Result<usize, GpuError> {
        compare(&self.measurements, report, |_| false)
    }
}
