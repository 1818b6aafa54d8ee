//! Files `svc` keeps that hold a secret or a pin: the key cache, wallet certificates, the
//! witness's heads, cached collateral, the MCP guardrails' spending record. Each is written
//! whole to a temporary file created 0600 and renamed over the old one (in a directory made
//! 0700), so another local user can neither read nor swap it and a crash never leaves half a
//! file. A file an older `svc` made with a wider mode is replaced, not reused.

use std::fs::{DirBuilder, OpenOptions};
use std::io::{self, Write};
use std::path::Path;

/// Makes `dir` and its missing parents, owner-only.
pub fn create_dir(dir: &Path) -> io::Result<()> {
    let mut builder = DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// Replaces `path` with `bytes`, readable and writable by the owner only.
pub fn write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    create_dir(dir)?;
    let name = path.file_name().ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no file name"))?;
    // Unique per writer: two threads of one process (the proxy's key cache) may write at once.
    static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let temporary = dir.join(format!(".{}.{}.{n}.tmp", name.to_string_lossy(), std::process::id()));
    let _ = std::fs::remove_file(&temporary); // a leftover of a crash, whatever its mode
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(&temporary)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    std::fs::rename(&temporary, path)?;
    std::fs::File::open(dir)?.sync_all()
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn files_are_owner_only_even_over_a_wider_one() {
        let root = tempfile::tempdir().unwrap();
        let path = root.path().join("state").join("svc").join("keys.json");
        write(&path, b"one").unwrap();
        assert_eq!(
            (mode(&path), mode(path.parent().unwrap()), mode(&root.path().join("state"))),
            (0o600, 0o700, 0o700)
        );
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        write(&path, b"two").unwrap();
        assert_eq!((std::fs::read(&path).unwrap(), mode(&path)), (b"two".to_vec(), 0o600));
        let names: Vec<_> =
            std::fs::read_dir(path.parent().unwrap()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, ["keys.json"], "no temporary left behind");
    }
}
