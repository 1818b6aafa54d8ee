//! `svc measure DIR`: MRTD, RTMR1, RTMR2 and the image id of a built image folder, and RTMR0
//! for a host profile: what an auditor compares with the published measurements.

use std::path::{Path, PathBuf};

use shared::attest::Measurements;

use super::measure_json;
use crate::exit::{Exit, Failure};
use crate::files::{read, text};
use crate::output::print_json;

#[derive(clap::Args)]
pub struct Args {
    dir: PathBuf,
    /// Print every TDVF section and every RTMR event with its digest.
    #[arg(long)]
    diagnose: bool,
    /// Print a measurements file (schema v1) for publishing instead of the summary (wins
    /// over `--json`, which prints the summary as JSON).
    #[arg(long)]
    measurements_json: bool,
    /// Also compute RTMR0 for the host profile in this folder: files `memory` (e.g. `2G`, or
    /// bytes), `table-loader`, `rsdp`, `tables` (QEMU fw_cfg etc/table-loader, etc/acpi/rsdp,
    /// etc/acpi/tables captured from a TD). See docs/auditing.md.
    #[arg(long, value_name = "DIR")]
    rtmr0_profile: Option<PathBuf>,
}

pub fn run(args: Args, json: bool) -> Result<Exit, Failure> {
    let output = match (args.measurements_json, json) {
        (true, _) => Output::MeasurementsFile,
        (false, true) => Output::Json,
        (false, false) => Output::Text,
    };
    measure(&args.dir, args.diagnose, output, args.rtmr0_profile.as_deref())
}

/// Reads a host profile folder for RTMR0. Absent files are left out, so that the evidence
/// parser names the missing one.
fn read_rtmr0_profile(dir: &Path) -> Result<shared::measure::rtmr0::Rtmr0Evidence, Failure> {
    if !dir.is_dir() {
        return Err(Failure::bad_input(format!("{}: not a directory", dir.display())));
    }
    let mut files = std::collections::BTreeMap::new();
    for name in shared::measure::rtmr0::evidence::PROFILE_FILES {
        let path = dir.join(name);
        match std::fs::read(&path) {
            Ok(bytes) => {
                files.insert(name.to_string(), bytes);
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Failure::bad_input(format!("{}: {e}", path.display()))),
        }
    }
    shared::measure::rtmr0::Rtmr0Evidence::from_profile(&files)
        .map_err(|e| Failure::bad_input(format!("{}: {e}", dir.display())))
}

/// The name a profile folder is published under: its last path component.
fn profile_name(dir: &Path) -> String {
    let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "profile".into())
}

/// What `svc measure` prints.
enum Output {
    Text,
    /// The summary as JSON (`--json`).
    Json,
    /// A measurements file for publishing (`--measurements-json`).
    MeasurementsFile,
}

/// The registers a TD booting this image will have (QEMU ≥ 10.2), and RTMR0 for a host
/// profile when one is given.
fn measure(dir: &Path, diagnose: bool, output: Output, rtmr0_profile: Option<&Path>) -> Result<Exit, Failure> {
    let cmdline = text(&dir.join("cmdline"))?;
    let cmdline = cmdline.trim_end_matches('\n');
    let firmware = read(&dir.join("OVMF.fd"))?;
    let rtmr0 = match rtmr0_profile {
        Some(p) => {
            let evidence = read_rtmr0_profile(p)?;
            let m =
                shared::measure::measure_rtmr0(&firmware, &evidence).map_err(|e| Failure::bad_input(e.to_string()))?;
            Some((profile_name(p), evidence.memory, m))
        }
        None => None,
    };
    let m = shared::measure::measure_image(
        &firmware,
        &read(&dir.join("vmlinuz"))?,
        &read(&dir.join("initrd.cpio"))?,
        cmdline,
    )
    .map_err(|e| Failure::bad_input(e.to_string()))?;
    if let Output::Json = output {
        let rtmr0 = rtmr0.as_ref().map(|(profile, memory, measurement)| measure_json::Rtmr0 {
            profile,
            memory: *memory,
            measurement,
        });
        print_json(&measure_json::summary(&m, rtmr0, cmdline, diagnose));
        return Ok(Exit::Ok);
    }
    if let Output::MeasurementsFile = output {
        let image = |name: &str, mrtd| shared::attest::measurements::ImageMeasurement {
            name: name.into(),
            mrtd,
            rtmr1: m.rtmr1,
            rtmr2: m.rtmr2,
        };
        let doc = Measurements {
            schema_version: 1,
            images: vec![
                image("svc-enclave (MRTD single-pass: upstream KVM/QEMU)", m.mrtd_single_pass),
                image("svc-enclave (MRTD two-pass: QEMU 8.x TDX)", m.mrtd_two_pass),
            ],
            rtmr0: rtmr0
                .iter()
                .map(|(platform, _, r)| shared::attest::measurements::Rtmr0Entry {
                    platform: platform.clone(),
                    value: r.rtmr0,
                })
                .collect(),
            mr_config_id: None,
            mr_owner: None,
            mr_owner_config: None,
            min_tcb_evaluation_data_number: None,
        };
        print_json(&doc);
        return Ok(Exit::Ok);
    }
    if diagnose {
        println!("TDVF sections:");
        for s in &m.sections {
            println!(
                "  {:<13} gpa {:#012x} size {:#09x} raw {:#09x} @ {:#09x}  extend={} aug={}",
                format!("{:?}", s.kind),
                s.gpa,
                s.mem_size,
                s.raw_size,
                s.data_offset,
                s.extends(),
                s.page_aug()
            );
        }
        let rtmr0_events = rtmr0.as_ref().map(|(_, _, r)| &r.events);
        for (name, events) in
            [("RTMR0", rtmr0_events), ("RTMR1", Some(&m.rtmr1_events)), ("RTMR2", Some(&m.rtmr2_events))]
        {
            let Some(events) = events else { continue };
            println!("{name} events (extend order):");
            for e in events {
                println!("  {}  {}", hex::encode(e.digest), e.description);
            }
        }
    }
    println!("MRTD      {}  (single-pass page order: upstream KVM/QEMU)", hex::encode(m.mrtd_single_pass));
    println!("MRTD      {}  (two-pass page order: QEMU 8.x TDX)", hex::encode(m.mrtd_two_pass));
    if let Some((name, memory, r)) = &rtmr0 {
        println!(
            "RTMR0     {}  (host profile {name:?}: {} MiB, edk2-stable202502 event list; unvalidated on hardware)",
            hex::encode(r.rtmr0),
            memory >> 20
        );
    }
    println!("RTMR1     {}  (QEMU >= 10.2, kernel unpatched)", hex::encode(m.rtmr1));
    println!("RTMR2     {}  (cmdline {:?} + initrd)", hex::encode(m.rtmr2), shared::measure::load_options(cmdline));
    println!("image_id  {}  (sha256(MRTD single-pass || RTMR1 || RTMR2))", hex::encode(m.image_id));
    Ok(Exit::Ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write_profile(dir: &Path) {
        std::fs::write(dir.join("memory"), "2G\n").unwrap();
        std::fs::write(dir.join("table-loader"), [0u8; 128]).unwrap();
        let mut rsdp = b"RSD PTR ".to_vec();
        rsdp.resize(36, 0);
        std::fs::write(dir.join("rsdp"), rsdp).unwrap();
        std::fs::write(dir.join("tables"), b"DSDT").unwrap();
    }

    #[test]
    fn rtmr0_profile_folder() {
        let dir = tempfile::tempdir().unwrap();
        let profile = dir.path().join("qemu-q35-2G");
        std::fs::create_dir(&profile).unwrap();
        write_profile(&profile);
        let evidence = read_rtmr0_profile(&profile).ok().unwrap();
        assert_eq!(evidence.memory, 2 << 30);
        assert_eq!(profile_name(&profile), "qemu-q35-2G");

        std::fs::remove_file(profile.join("tables")).unwrap();
        let Err(Failure { exit, message }) = read_rtmr0_profile(&profile) else { panic!("a missing blob is refused") };
        assert_eq!(exit, Exit::BadInput);
        assert!(message.contains("`tables` is missing"), "{message}");

        write_profile(&profile);
        std::fs::write(profile.join("memory"), "2048").unwrap(); // bytes, not MiB: too small
        let evidence = read_rtmr0_profile(&profile).ok().unwrap();
        assert_eq!(evidence.memory, 2048);
        std::fs::write(profile.join("memory"), "two gigs").unwrap();
        assert!(read_rtmr0_profile(&profile).is_err());
        assert!(read_rtmr0_profile(&dir.path().join("absent")).is_err());
    }
}
