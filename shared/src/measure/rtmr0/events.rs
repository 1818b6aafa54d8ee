//! The RTMR0 event list of edk2-stable202502 TDVF (OvmfPkg/IntelTdx, the "pre-202505"
//! layout) for direct kernel boot with Secure Boot off, in extend order:
//!
//! 1. `EV_EFI_HANDOFF_TABLES2`: the TD HOB (SEC, `TdxHelperMeasureTdHob`).
//! 2. `EV_EFI_PLATFORM_FIRMWARE_BLOB2`: the CFV, `PcdCfvRawDataSize` bytes at the variable
//!    store base, i.e. the TDVF CFV section's raw data (SEC, `TdxHelperMeasureCfvImage`).
//! 3. `EV_EFI_VARIABLE_DRIVER_CONFIG` ×5: SecureBoot, PK, KEK, db, dbx as `UEFI_VARIABLE_DATA`
//!    (TdTcg2Dxe `MeasureAllSecureVariables`; dbt only if present, never here).
//! 4. `EV_SEPARATOR` (`00000000`), PCR 7's separator, which maps to RTMR0.
//! 5. `EV_PLATFORM_CONFIG_FLAGS` ×3: fw_cfg `etc/table-loader`, then the blobs it allocates in
//!    its order: `etc/acpi/rsdp`, `etc/acpi/tables` (OvmfPkg AcpiPlatformLib `QemuFwCfgAcpi.c`).
//! 6. `EV_EFI_VARIABLE_BOOT` ×2 at ReadyToBoot (TdTcg2Dxe `MeasureAllBootVariables`, digest of
//!    the variable data only): BootOrder = `0000` and Boot0000 = the UiApp boot-manager-menu
//!    option. Direct kernel boot signals ReadyToBoot from `TryRunningQemuKernel`, before
//!    `EfiBootManagerRefreshAllBootOption` and the shell/Grub registrations, so only Boot0000
//!    exists then. The ReadyToBoot separator goes to RTMR1 only.
//!
//! The handoff-table event (`EV_TABLE_OF_DEVICES`) is skipped because `PcdTpmPlatformClass` is
//! client. edk2 ≥ stable202505 measures more (fw_cfg bootorder, SMBIOS, more boot options): a
//! different list.

use sha2::{Digest, Sha384};

use super::super::rtmr::Event;
use super::super::td_hob::{TdHob, TdHobError};
use super::super::tdvf::{Section, SectionType};
use super::super::uefi_var::{
    EFI_GLOBAL_VARIABLE, EFI_IMAGE_SECURITY_DATABASE, boot_order, uiapp_boot_option, variable_data,
};
use super::evidence::Rtmr0Evidence;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum Rtmr0Error {
    #[error("TD HOB: {0}")]
    TdHob(#[from] TdHobError),
    #[error("the firmware has no CFV section")]
    NoCfv,
    #[error("the firmware has more than one CFV section")]
    SeveralCfv,
    #[error("the CFV section's data lies outside the firmware file")]
    CfvOutsideFile,
}

/// The CFV bytes TDVF measures: the CFV section's raw data in the firmware file.
pub fn cfv<'a>(firmware: &'a [u8], sections: &[Section]) -> Result<&'a [u8], Rtmr0Error> {
    let mut cfvs = sections.iter().filter(|s| s.kind == SectionType::Cfv);
    let s = cfvs.next().ok_or(Rtmr0Error::NoCfv)?;
    if cfvs.next().is_some() {
        return Err(Rtmr0Error::SeveralCfv);
    }
    let start = s.data_offset as usize;
    let end = start.checked_add(s.raw_size as usize).ok_or(Rtmr0Error::CfvOutsideFile)?;
    firmware.get(start..end).ok_or(Rtmr0Error::CfvOutsideFile)
}

fn digest(data: &[u8]) -> [u8; 48] {
    Sha384::digest(data).into()
}

fn describe_variable(name: &str, data: &[u8]) -> String {
    if data.is_empty() { format!("{name} (unset)") } else { format!("{name} ({} bytes)", data.len()) }
}

/// The RTMR0 events for `firmware` (with `sections` parsed from it) on the host described by
/// `evidence`.
pub fn rtmr0_events(firmware: &[u8], sections: &[Section], evidence: &Rtmr0Evidence) -> Result<Vec<Event>, Rtmr0Error> {
    let hob = TdHob::new(evidence.memory, sections)?;
    let cfv = cfv(firmware, sections)?;
    let mut events = vec![
        Event {
            description: format!(
                "EV_EFI_HANDOFF_TABLES2: TD HOB at {:#x} ({} MiB, {} resource HOBs)",
                hob.base,
                evidence.memory >> 20,
                hob.resources.len()
            ),
            digest: hob.digest(),
        },
        Event {
            description: format!("EV_EFI_PLATFORM_FIRMWARE_BLOB2: CFV ({:#x} bytes)", cfv.len()),
            digest: digest(cfv),
        },
    ];
    let sb = &evidence.secure_boot;
    for (vendor, name, data) in [
        (&EFI_GLOBAL_VARIABLE, "SecureBoot", &sb.secure_boot),
        (&EFI_GLOBAL_VARIABLE, "PK", &sb.pk),
        (&EFI_GLOBAL_VARIABLE, "KEK", &sb.kek),
        (&EFI_IMAGE_SECURITY_DATABASE, "db", &sb.db),
        (&EFI_IMAGE_SECURITY_DATABASE, "dbx", &sb.dbx),
    ] {
        events.push(Event {
            description: format!("EV_EFI_VARIABLE_DRIVER_CONFIG: {}", describe_variable(name, data)),
            digest: digest(&variable_data(vendor, name, data)),
        });
    }
    events.push(Event { description: "EV_SEPARATOR".into(), digest: digest(&[0, 0, 0, 0]) });
    let acpi = &evidence.acpi;
    for (name, blob) in
        [("etc/table-loader", &acpi.table_loader), ("etc/acpi/rsdp", &acpi.rsdp), ("etc/acpi/tables", &acpi.tables)]
    {
        events.push(Event {
            description: format!("EV_PLATFORM_CONFIG_FLAGS: fw_cfg {name} ({} bytes)", blob.len()),
            digest: digest(blob),
        });
    }
    events.push(Event {
        description: "EV_EFI_VARIABLE_BOOT: BootOrder = 0000".into(),
        digest: digest(&boot_order(&[0])),
    });
    events.push(Event {
        description: "EV_EFI_VARIABLE_BOOT: Boot0000 = UiApp, Fv(DXEFV)/FvFile(UiApp)".into(),
        digest: digest(&uiapp_boot_option()),
    });
    Ok(events)
}
