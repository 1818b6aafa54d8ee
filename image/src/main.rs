//! `mkinitramfs --out FILE --init BIN --config JSON [--module KO]... [--mtime UNIX]`
//!
//! Layout: `/init` (the static enclave binary), `/etc/enclave.json` (the measured
//! configuration), `/lib/modules/<name>` plus `/lib/modules/modules.order` (load order as
//! given), the mount points, and `/dev/console`. mtime defaults to `SOURCE_DATE_EPOCH`.

use std::path::PathBuf;
use std::process::ExitCode;

use image_build::cpio::{Archive, Entry};

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mkinitramfs: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), String> {
    let mut out = None;
    let mut init = None;
    let mut config = None;
    let mut modules: Vec<PathBuf> = Vec::new();
    let mut mtime = std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .map(|v| v.parse::<u32>().map_err(|_| "SOURCE_DATE_EPOCH is not a number"));
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--out" => out = Some(PathBuf::from(value()?)),
            "--init" => init = Some(PathBuf::from(value()?)),
            "--config" => config = Some(PathBuf::from(value()?)),
            "--module" => modules.push(PathBuf::from(value()?)),
            "--mtime" => mtime = Some(value()?.parse::<u32>().map_err(|_| "--mtime is not a number")),
            _ => return Err(format!("unknown argument {flag}")),
        }
    }
    let (out, init, config) = match (out, init, config) {
        (Some(o), Some(i), Some(c)) => (o, i, c),
        _ => {
            return Err("usage: mkinitramfs --out FILE --init BIN --config JSON [--module KO]... [--mtime UNIX]".into());
        }
    };
    let mtime = mtime.transpose()?.ok_or("set SOURCE_DATE_EPOCH or --mtime")?;
    let read = |p: &PathBuf| std::fs::read(p).map_err(|e| format!("{}: {e}", p.display()));

    let mut a = Archive::default();
    let dir = Entry::Dir { mode: 0o755 };
    for d in ["dev", "proc", "sys", "etc", "lib", "lib/modules", "run", "tmp"] {
        a.add(d, dir.clone()).map_err(|e| e.to_string())?;
    }
    a.add("dev/console", Entry::CharDev { mode: 0o600, major: 5, minor: 1 }).map_err(|e| e.to_string())?;
    a.add("init", Entry::File { mode: 0o755, data: read(&init)? }).map_err(|e| e.to_string())?;
    a.add("etc/enclave.json", Entry::File { mode: 0o644, data: read(&config)? }).map_err(|e| e.to_string())?;
    let mut order = String::new();
    for m in &modules {
        let name = m.file_name().and_then(|n| n.to_str()).ok_or(format!("{}: no file name", m.display()))?;
        a.add(&format!("lib/modules/{name}"), Entry::File { mode: 0o644, data: read(m)? })
            .map_err(|e| e.to_string())?;
        order.push_str(name);
        order.push('\n');
    }
    a.add("lib/modules/modules.order", Entry::File { mode: 0o644, data: order.into_bytes() })
        .map_err(|e| e.to_string())?;
    let bytes = a.write(mtime).map_err(|e| e.to_string())?;
    std::fs::write(&out, bytes).map_err(|e| format!("{}: {e}", out.display()))
}
