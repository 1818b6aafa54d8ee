//! `svc gpu-reference`: the golden GPU measurements to pin in the enclave's configuration,
//! from NVIDIA RIM files pinned by digest (docs/gpu.md).

use std::path::{Path, PathBuf};

use crate::exit::{Exit, Failure};
use crate::files::read;

#[derive(clap::Args)]
pub struct Args {
    #[arg(long, value_name = "FILE")]
    driver_rim: PathBuf,
    #[arg(long, value_name = "FILE")]
    vbios_rim: PathBuf,
    #[arg(long)]
    board: String,
    #[arg(long, value_name = "FILE", default_value = "measurements/gpu-rim-pins.json")]
    pins: PathBuf,
}

/// Exits `Rejected` when a RIM is not pinned or the two disagree.
pub fn run(args: Args) -> Result<Exit, Failure> {
    let pins: client::gpu_reference::Pins = serde_json::from_slice(&read(&args.pins)?)
        .map_err(|e| Failure::bad_input(format!("{}: {e}", args.pins.display())))?;
    let (driver, vbios) = (read(&args.driver_rim)?, read(&args.vbios_rim)?);
    let name = |path: &Path| path.display().to_string();
    let firmware = client::gpu_reference::reference(
        (&name(&args.driver_rim), &driver),
        (&name(&args.vbios_rim), &vbios),
        &args.board,
        &pins,
    )
    .map_err(|e| Failure::new(Exit::Rejected, e.to_string()))?;
    let text = serde_json::to_string_pretty(&firmware).map_err(|e| Failure::bad_input(e.to_string()))?;
    println!("{text}");
    Ok(Exit::Ok)
}
