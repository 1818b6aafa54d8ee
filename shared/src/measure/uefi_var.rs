//! The UEFI byte encodings that edk2's TdTcg2Dxe measures into RTMR0 (edk2-stable202502):
//!
//! - `UEFI_VARIABLE_DATA` (TCG PC Client PFP; `MdePkg/Include/IndustryStandard/UefiTcgPlatform.h`,
//!   packed): vendor GUID, u64 name length in UTF-16 code units (no NUL), u64 data length,
//!   the UTF-16LE name without its NUL, then the data. For `EV_EFI_VARIABLE_DRIVER_CONFIG`
//!   (the Secure Boot variables) the digest covers this whole structure; an absent variable is
//!   measured with data length 0 (`ReadAndMeasureVariable`).
//! - For `EV_EFI_VARIABLE_BOOT` (BootOrder, Boot####) the digest covers only the variable's
//!   data (`MeasureVariable` in `OvmfPkg/Tcg/TdTcg2Dxe/TdTcg2Dxe.c`).
//! - `BootOrder` is a list of u16 LE option numbers; `Boot####` is an `EFI_LOAD_OPTION`:
//!   u32 attributes, u16 device-path length, NUL-terminated UTF-16LE description, the device
//!   path, optional data.

use super::tdvf::guid;

/// `EFI_GLOBAL_VARIABLE` 8be4df61-93ca-11d2-aa0d-00e098032b8c (SecureBoot, PK, KEK, Boot*).
pub const EFI_GLOBAL_VARIABLE: [u8; 16] =
    guid(0x8be4df61, 0x93ca, 0x11d2, [0xaa, 0x0d, 0x00, 0xe0, 0x98, 0x03, 0x2b, 0x8c]);
/// `EFI_IMAGE_SECURITY_DATABASE_GUID` d719b2cb-3d3a-4596-a3bc-dad00e67656f (db, dbx).
pub const EFI_IMAGE_SECURITY_DATABASE: [u8; 16] =
    guid(0xd719b2cb, 0x3d3a, 0x4596, [0xa3, 0xbc, 0xda, 0xd0, 0x0e, 0x67, 0x65, 0x6f]);
/// `FvNameGuid` of `[FV.DXEFV]` in `OvmfPkg/IntelTdx/IntelTdxX64.fdf` (edk2 2025.02).
pub const OVMF_DXEFV: [u8; 16] = guid(0x7cb8bdc9, 0xf8eb, 0x4f34, [0xaa, 0xea, 0x3e, 0xe4, 0xaf, 0x65, 0x16, 0xa1]);
/// `FILE_GUID` of `MdeModulePkg/Application/UiApp/UiApp.inf`, which IntelTdxX64.dsc sets as
/// `PcdBootManagerMenuFile`.
pub const UIAPP_FILE: [u8; 16] = guid(0x462caa21, 0x7614, 0x4503, [0x83, 0x6e, 0x8a, 0xb6, 0xf4, 0x66, 0x23, 0x31]);

/// `LOAD_OPTION_ACTIVE`.
pub const LOAD_OPTION_ACTIVE: u32 = 0x0000_0001;
/// `LOAD_OPTION_HIDDEN`.
pub const LOAD_OPTION_HIDDEN: u32 = 0x0000_0008;
/// `LOAD_OPTION_CATEGORY_APP`.
pub const LOAD_OPTION_CATEGORY_APP: u32 = 0x0000_0100;

/// UTF-16LE code units of `s`, without a terminator.
fn utf16le(s: &str) -> Vec<u8> {
    s.encode_utf16().flat_map(u16::to_le_bytes).collect()
}

/// `UEFI_VARIABLE_DATA` for `name` under `vendor` holding `data` (empty when the variable is
/// not set).
pub fn variable_data(vendor: &[u8; 16], name: &str, data: &[u8]) -> Vec<u8> {
    let name16 = utf16le(name);
    let mut out = Vec::with_capacity(32 + name16.len() + data.len());
    out.extend_from_slice(vendor);
    out.extend_from_slice(&(name16.len() as u64 / 2).to_le_bytes());
    out.extend_from_slice(&(data.len() as u64).to_le_bytes());
    out.extend_from_slice(&name16);
    out.extend_from_slice(data);
    out
}

/// The data of a `BootOrder` variable.
pub fn boot_order(options: &[u16]) -> Vec<u8> {
    options.iter().flat_map(|o| o.to_le_bytes()).collect()
}

/// One `EFI_DEVICE_PATH_PROTOCOL` node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DevicePathNode {
    /// `MEDIA_DEVICE_PATH` / `MEDIA_PIWG_FW_VOL_DP` (type 4, subtype 7): a firmware volume by name.
    FirmwareVolume([u8; 16]),
    /// `MEDIA_DEVICE_PATH` / `MEDIA_PIWG_FW_FILE_DP` (type 4, subtype 6): a file in that volume.
    FirmwareFile([u8; 16]),
    /// `END_DEVICE_PATH_TYPE` / `END_ENTIRE_DEVICE_PATH_SUBTYPE` (0x7f, 0xff).
    End,
}

impl DevicePathNode {
    fn encode(&self, out: &mut Vec<u8>) {
        let (kind, subtype, body): (u8, u8, &[u8]) = match self {
            Self::FirmwareVolume(g) => (4, 7, g),
            Self::FirmwareFile(g) => (4, 6, g),
            Self::End => (0x7f, 0xff, &[]),
        };
        out.extend_from_slice(&[kind, subtype]);
        out.extend_from_slice(&(4 + body.len() as u16).to_le_bytes());
        out.extend_from_slice(body);
    }
}

/// The data of a `Boot####` variable: an `EFI_LOAD_OPTION` without optional data.
pub fn load_option(attributes: u32, description: &str, path: &[DevicePathNode]) -> Vec<u8> {
    let mut device_path = Vec::new();
    for node in path {
        node.encode(&mut device_path);
    }
    let mut out = Vec::new();
    out.extend_from_slice(&attributes.to_le_bytes());
    out.extend_from_slice(&(device_path.len() as u16).to_le_bytes());
    out.extend_from_slice(&utf16le(description));
    out.extend_from_slice(&[0, 0]);
    out.extend_from_slice(&device_path);
    out
}

/// `Boot0000` of edk2 2025.02 OVMF/IntelTdx: the boot-manager-menu option that
/// `BmRegisterBootManagerMenu` (MdeModulePkg UefiBootManagerLib, `BmBoot.c`) registers during
/// `PlatformBootManagerBeforeConsole`: attributes `CATEGORY_APP | ACTIVE | HIDDEN`, the
/// description from UiApp's UI section (its `BASE_NAME`, "UiApp"), device path
/// `Fv(DXEFV)/FvFile(UiApp)/End`.
pub fn uiapp_boot_option() -> Vec<u8> {
    load_option(
        LOAD_OPTION_CATEGORY_APP | LOAD_OPTION_ACTIVE | LOAD_OPTION_HIDDEN,
        "UiApp",
        &[DevicePathNode::FirmwareVolume(OVMF_DXEFV), DevicePathNode::FirmwareFile(UIAPP_FILE), DevicePathNode::End],
    )
}
