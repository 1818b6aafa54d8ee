//! A report's opaque data (NVIDIA's `OpaqueData`, notes/gpu.md §1.2): TLVs `{type u16, length
//! u16, value}`, each type at most once, the ones the verifier reads decoded. GPUs and NVSwitches
//! share the type numbers, but two mean different things on each: type 6, the firmware version
//! (8 bytes on a GPU, ASCII on a switch), and type 22 (on a GPU the PDI of the switch at each
//! NVLink, on a switch its own PDI). A report is a switch's when it carries type 26, the GPUs
//! the switch is connected to, which no GPU report carries (nvtrust's and attestation-sdk's
//! switch parsers; both protected-PCIe sample sets).

use super::GpuError;
use super::evidence::Reader;

/// A platform device identifier: how GPUs and NVSwitches name each other in protected-PCIe
/// mode. In the byte order a switch reports its own (type 22) and its GPUs' (type 26), which is
/// also the order of the last eight bytes of the device's BROM certificate serial number
/// ([`super::chain::VerifiedChain::device_pdi`]). A GPU lists its switches byte-reversed
/// (nvtrust reads them little-endian); the parser turns them round.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Pdi(pub [u8; 8]);

/// Hex, as NVIDIA's tools print a PDI.
impl std::fmt::Display for Pdi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&hex::encode(self.0))
    }
}

impl std::fmt::Debug for Pdi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Pdi({self})")
    }
}

/// The opaque fields only an NVSwitch's report carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SwitchFields {
    /// Type 22: the switch's own PDI.
    pub pdi: Pdi,
    /// Type 26, its first 64 bytes: the PDIs of the eight GPUs the switch is connected to.
    pub gpus: Vec<Pdi>,
    /// Type 26, the rest: for each port, the index in `gpus` of the GPU on it (0xFF: none).
    pub ports: Vec<u8>,
    /// Type 25 (little-endian): the lock status, 1 on every switch of both protected-PCIe
    /// sample sets (a protected-PCIe switch must be locked: nvtrust's pre-check).
    pub lock_status: Option<u64>,
}

/// The opaque fields the verifier reads (NVIDIA's `OpaqueData` types).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Opaque {
    /// Type 3, e.g. `550.90.07`.
    pub driver: String,
    /// Type 6. A GPU's as NVIDIA writes it: `96.00.9F.00.01`; a switch's BIOS version as the
    /// switch writes it (ASCII): `96.10.6D.00.01`.
    pub vbios: String,
    /// Types 17, 18, 15: the board project, its SKU and the chip SKU, e.g. `1010`, `0200`, `882`.
    pub project: String,
    pub project_sku: String,
    pub chip_sku: String,
    /// Type 20: the firmware id the leaf certificate must carry too.
    pub fwid: Option<Vec<u8>>,
    /// Type 11: 0x55 when NVDEC0 is disabled (its measurement, index 35, is then not compared).
    pub nvdec0_status: Option<u8>,
    /// Type 21: the protected-PCIe status, 0xAA on every GPU of the protected-PCIe samples and
    /// 0x55 on every GPU outside that mode that carries it.
    pub protected_pcie: Option<u8>,
    /// Type 36 (little-endian): the GPU's mode, 2 for protected PCIe (0 and 1: SPT and MPT,
    /// which NVIDIA's sources number differently). Only newer drivers send it.
    pub feature_flag: Option<u64>,
    /// Type 22 on a GPU: the switch at each of its NVLinks, in the switch's own byte order
    /// (all zero: a link that is off). Empty on a switch and on a GPU without NVLinks.
    pub nvlink_switches: Vec<Pdi>,
    /// An NVSwitch's report only.
    pub switch: Option<SwitchFields>,
}

/// NVDEC0 disabled (opaque type 11).
pub const NVDEC0_DISABLED: u8 = 0x55;

/// A switch's GPU list (type 26) starts with this many PDIs (nvtrust, attestation-sdk).
const SWITCH_GPU_PDIS: usize = 8;

/// The opaque TLVs; each type at most once.
pub(super) fn parse(data: &[u8]) -> Result<Opaque, GpuError> {
    let mut r = Reader { bytes: data, at: 0 };
    let mut seen: Vec<u16> = Vec::new();
    let mut o = Opaque::default();
    let (mut version, mut pdis, mut switch_gpus, mut lock_status) = (None, None, None, None);
    while r.at < data.len() {
        let kind = r.u16("opaque type")?;
        let len = r.u16("opaque length")?;
        let value = r.take(usize::from(len), "opaque value")?;
        if seen.contains(&kind) {
            return Err(GpuError::Malformed("an opaque field twice"));
        }
        seen.push(kind);
        match kind {
            3 => o.driver = text(value)?,
            6 => version = Some(value),
            11 => o.nvdec0_status = value.first().copied(),
            15 => o.chip_sku = text(value)?,
            17 => o.project = text(value)?,
            18 => o.project_sku = text(value)?,
            20 => o.fwid = Some(value.to_vec()),
            21 => o.protected_pcie = value.first().copied(),
            22 => pdis = Some(value),
            25 => lock_status = Some(little_endian(value)?),
            26 => switch_gpus = Some(value),
            36 => o.feature_flag = Some(little_endian(value)?),
            _ => {}
        }
    }
    let pdis = pdis.map(pdi_list).transpose()?.unwrap_or_default();
    match switch_gpus {
        Some(list) => {
            let [pdi] = pdis[..] else { return Err(GpuError::Malformed("a switch report without one PDI of its own")) };
            let (gpus, ports) = list
                .split_at_checked(SWITCH_GPU_PDIS * 8)
                .ok_or(GpuError::Malformed("a switch's GPU list shorter than eight PDIs"))?;
            let gpus = pdi_list(gpus)?;
            o.switch = Some(SwitchFields { pdi, gpus, ports: ports.to_vec(), lock_status });
            o.vbios = version.map(text).transpose()?.unwrap_or_default();
        }
        None => {
            o.nvlink_switches = pdis
                .into_iter()
                .map(|Pdi(mut b)| {
                    Pdi({
                        b.reverse();
                        b
                    })
                })
                .collect();
            o.vbios = version.map(vbios).transpose()?.unwrap_or_default();
        }
    }
    Ok(o)
}

/// Consecutive 8-byte PDIs, in the order they are written.
fn pdi_list(value: &[u8]) -> Result<Vec<Pdi>, GpuError> {
    let (pdis, rest) = value.as_chunks::<8>();
    match rest.is_empty() {
        true => Ok(pdis.iter().copied().map(Pdi).collect()),
        false => Err(GpuError::Malformed("a PDI list that is not a multiple of eight bytes")),
    }
}

/// An unsigned little-endian value of one to eight bytes.
fn little_endian(value: &[u8]) -> Result<u64, GpuError> {
    if !(1..=8).contains(&value.len()) {
        return Err(GpuError::Malformed("a little-endian opaque field of more than eight bytes or none"));
    }
    Ok(value.iter().rev().fold(0, |n, b| n << 8 | u64::from(*b)))
}

/// ASCII up to the first NUL.
fn text(value: &[u8]) -> Result<String, GpuError> {
    let end = value.iter().position(|b| *b == 0).unwrap_or(value.len());
    let s = &value[..end];
    match s.iter().all(|b| b.is_ascii_graphic()) {
        true => Ok(String::from_utf8_lossy(s).into_owned()),
        false => Err(GpuError::Malformed("an opaque text field that is not ASCII")),
    }
}

/// A GPU's 8-byte VBIOS version as NVIDIA prints it: bytes 3, 2, 1, 0, 4 in hex.
fn vbios(value: &[u8]) -> Result<String, GpuError> {
    let [b0, b1, b2, b3, b4, ..] = value else { return Err(GpuError::Malformed("VBIOS version")) };
    Ok(format!("{b3:02X}.{b2:02X}.{b1:02X}.{b0:02X}.{b4:02X}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tlvs(fields: &[(u16, &[u8])]) -> Vec<u8> {
        let mut out = Vec::new();
        for (kind, value) in fields {
            out.extend_from_slice(&kind.to_le_bytes());
            out.extend_from_slice(&(value.len() as u16).to_le_bytes());
            out.extend_from_slice(value);
        }
        out
    }

    #[test]
    fn a_gpu_lists_its_switches_byte_reversed_and_a_switch_its_own_and_its_gpus() {
        let gpu =
            parse(&tlvs(&[(22, &[1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0, 0, 0, 0, 0]), (21, &[0xaa]), (36, &[2, 0])]))
                .unwrap();
        assert_eq!(gpu.nvlink_switches, vec![Pdi([8, 7, 6, 5, 4, 3, 2, 1]), Pdi([0; 8])]);
        assert_eq!((gpu.protected_pcie, gpu.feature_flag, gpu.switch), (Some(0xaa), Some(2), None));
        let mut list: Vec<u8> = (1..=64).collect();
        list.extend_from_slice(&[0, 0xff]);
        let switch = parse(&tlvs(&[(6, b"96.10.6D.00.01"), (22, &[9; 8]), (25, &[1, 0]), (26, &list)])).unwrap();
        let fields = switch.switch.unwrap();
        assert_eq!(
            (fields.pdi, fields.gpus.len(), fields.gpus[1]),
            (Pdi([9; 8]), 8, Pdi([9, 10, 11, 12, 13, 14, 15, 16]))
        );
        assert_eq!((fields.ports, fields.lock_status), (vec![0, 0xff], Some(1)));
        assert_eq!((switch.vbios.as_str(), switch.nvlink_switches.len()), ("96.10.6D.00.01", 0));
    }

    #[test]
    fn malformed_pdis_are_refused() {
        let fault = |fields: &[(u16, &[u8])]| match parse(&tlvs(fields)) {
            Err(GpuError::Malformed(why)) => why,
            other => panic!("{other:?}"),
        };
        assert_eq!(fault(&[(22, &[1; 9])]), "a PDI list that is not a multiple of eight bytes");
        assert_eq!(fault(&[(22, &[1; 16]), (26, &[2; 64])]), "a switch report without one PDI of its own");
        assert_eq!(fault(&[(26, &[2; 64])]), "a switch report without one PDI of its own");
        assert_eq!(fault(&[(22, &[1; 8]), (26, &[2; 63])]), "a switch's GPU list shorter than eight PDIs");
        assert_eq!(fault(&[(36, &[1; 9])]), "a little-endian opaque field of more than eight bytes or none");
        assert_eq!(fault(&[(25, &[])]), "a little-endian opaque field of more than eight bytes or none");
    }
}
