//! The files `svc` reads from its command line, and where it keeps state between runs.

use std::path::{Path, PathBuf};

use crate::exit::Failure;

/// A file named on the command line; one that cannot be read is bad input.
pub fn read(path: &Path) -> Result<Vec<u8>, Failure> {
    std::fs::read(path).map_err(|e| Failure::bad_input(format!("{}: {e}", path.display())))
}

pub fn text(path: &Path) -> Result<String, Failure> {
    String::from_utf8(read(path)?).map_err(|_| Failure::bad_input(format!("{}: not UTF-8", path.display())))
}

/// What `svc` keeps across runs (verified wallet certificates, pinned log keys, the TCB
/// floor, MCP spending): `$SVC_STATE_DIR`, else `$XDG_STATE_HOME/svc`, else
/// `~/.local/state/svc`.
pub fn state_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("SVC_STATE_DIR") {
        return PathBuf::from(dir);
    }
    let base = std::env::var_os("XDG_STATE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local").join("state")));
    base.unwrap_or_else(|| PathBuf::from(".")).join("svc")
}

/// `$XDG_CACHE_HOME/svc/collateral`, or `~/.cache/svc/collateral`.
pub fn collateral_cache_dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("svc").join("collateral"))
}
