//! Our configfs-tsm client (Linux `Documentation/ABI/testing/configfs-tsm-report`).
//!
//! One quote = `mkdir report/<name>`, check `provider`, read `generation`, write exactly 64
//! bytes to `inblob`, read `outblob`, read `generation` again, `rmdir`. configfs commits a
//! binary attribute on close and ignores errors there, so a lost `inblob` write is visible
//! only through `generation`: it must have advanced by exactly one. The filesystem sits
//! behind [`TsmFs`] so the kernel's rules can be modelled in tests.

use std::io;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Where configfs-tsm reports live when configfs is mounted at `/sys/kernel/config`.
pub const DEFAULT_ROOT: &str = "/sys/kernel/config/tsm/report";
pub const TDX_PROVIDER: &str = "tdx_guest";
/// Outblobs above this are not DCAP quotes (DICE/CBOR payloads are larger).
pub const MAX_QUOTE_LEN: usize = 8192;
const ENXIO: i32 = 6;
const EBUSY: i32 = 16;
const EINTR: i32 = 4;
const ETIMEDOUT: i32 = 110;

/// The report directory as seen through the filesystem.
pub trait TsmFs: Send + Sync {
    fn mkdir(&self, name: &str) -> io::Result<()>;
    fn rmdir(&self, name: &str) -> io::Result<()>;
    fn read(&self, name: &str, attr: &str) -> io::Result<Vec<u8>>;
    /// open(O_WRONLY), write_all, close.
    fn write(&self, name: &str, attr: &str, data: &[u8]) -> io::Result<()>;
}

/// The real filesystem under `root`.
pub struct StdFs {
    pub root: PathBuf,
}

impl TsmFs for StdFs {
    fn mkdir(&self, name: &str) -> io::Result<()> {
        std::fs::create_dir(self.root.join(name))
    }
    fn rmdir(&self, name: &str) -> io::Result<()> {
        std::fs::remove_dir(self.root.join(name))
    }
    fn read(&self, name: &str, attr: &str) -> io::Result<Vec<u8>> {
        std::fs::read(self.root.join(name).join(attr))
    }
    fn write(&self, name: &str, attr: &str, data: &[u8]) -> io::Result<()> {
        use std::io::Write;
        // Not File::create: configfs attributes are opened, never created or truncated.
        let mut f = std::fs::OpenOptions::new().write(true).open(self.root.join(name).join(attr))?;
        f.write_all(data)
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TsmError {
    /// No TSM provider (not a TD, or the guest driver is not loaded).
    #[error("no TSM quote provider")]
    NoProvider,
    #[error("TSM provider is `{0}`, not tdx_guest")]
    WrongProvider(String),
    #[error("quote provider stayed busy after {0} attempts")]
    Busy(u32),
    #[error("generation moved from {before} to {after}: the report input was lost or changed")]
    GenerationMismatch { before: u64, after: u64 },
    #[error("quote is empty or larger than {MAX_QUOTE_LEN} bytes ({0} bytes)")]
    BadQuoteLength(usize),
    #[error("quote does not carry the requested report_data")]
    ReportDataMismatch,
    #[error("configfs-tsm I/O error: {0}")]
    Io(String),
}

#[derive(Debug, Clone, Copy)]
pub struct Retry {
    pub attempts: u32,
    pub delay: Duration,
}

impl Default for Retry {
    fn default() -> Self {
        Retry { attempts: 5, delay: Duration::from_millis(200) }
    }
}

static COUNTER: AtomicU64 = AtomicU64::new(0);

fn item_name() -> String {
    let mut random = [0u8; 8];
    rand_core::RngCore::fill_bytes(&mut rand_core::OsRng, &mut random);
    format!("q-{}-{}-{}", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed), hex::encode(random))
}

fn classify(e: io::Error) -> Attempt {
    match e.raw_os_error() {
        Some(ENXIO) => Attempt::Fatal(TsmError::NoProvider),
        Some(EBUSY | EINTR | ETIMEDOUT) => Attempt::Retry,
        _ if e.kind() == io::ErrorKind::NotFound => Attempt::Fatal(TsmError::NoProvider),
        _ if e.kind() == io::ErrorKind::Interrupted => Attempt::Retry,
        _ => Attempt::Fatal(TsmError::Io(e.to_string())),
    }
}

enum Attempt {
    Retry,
    Fatal(TsmError),
}

fn parse_generation(bytes: &[u8]) -> Result<u64, Attempt> {
    std::str::from_utf8(bytes)
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .ok_or_else(|| Attempt::Fatal(TsmError::Io("unreadable generation".into())))
}

/// Gets a TDX quote over `report_data`. Blocking: quotes take seconds and the kernel
/// serialises them, so call this from a blocking context, once per purpose.
pub fn get_quote(fs: &dyn TsmFs, report_data: &[u8; 64], retry: Retry) -> Result<Vec<u8>, TsmError> {
    for attempt in 1..=retry.attempts.max(1) {
        let name = item_name();
        if let Err(e) = fs.mkdir(&name) {
            match classify(e) {
                Attempt::Fatal(err) => return Err(err),
                Attempt::Retry => {
                    std::thread::sleep(retry.delay * attempt);
                    continue;
                }
            }
        }
        let result = quote_in(fs, &name, report_data);
        // Always remove the item, whatever happened; the kernel keeps it until rmdir.
        let _ = fs.rmdir(&name);
        match result {
            Ok(quote) => return Ok(quote),
            Err(Attempt::Fatal(err)) => return Err(err),
            Err(Attempt::Retry) => std::thread::sleep(retry.delay * attempt),
        }
    }
    Err(TsmError::Busy(retry.attempts.max(1)))
}

fn quote_in(fs: &dyn TsmFs, name: &str, report_data: &[u8; 64]) -> Result<Vec<u8>, Attempt> {
    let provider = fs.read(name, "provider").map_err(classify)?;
    let provider = String::from_utf8_lossy(&provider).trim().to_string();
    if provider != TDX_PROVIDER {
        return Err(Attempt::Fatal(TsmError::WrongProvider(provider.chars().take(32).collect())));
    }
    let before = parse_generation(&fs.read(name, "generation").map_err(classify)?)?;
    fs.write(name, "inblob", report_data).map_err(classify)?;
    let quote = fs.read(name, "outblob").map_err(classify)?;
    let after = parse_generation(&fs.read(name, "generation").map_err(classify)?)?;
    if after != before + 1 {
        return Err(Attempt::Fatal(TsmError::GenerationMismatch { before, after }));
    }
    if quote.is_empty() || quote.len() > MAX_QUOTE_LEN {
        return Err(Attempt::Fatal(TsmError::BadQuoteLength(quote.len())));
    }
    // Cheap self-check: the quote must echo our report_data.
    if crate::quote::report_data(&quote).ok().as_ref() != Some(report_data) {
        return Err(Attempt::Fatal(TsmError::ReportDataMismatch));
    }
    Ok(quote)
}

#[cfg(test)]
mod fake;
#[cfg(test)]
mod tests;
