//! The host-profile inputs of RTMR0, as an operator captures them from a real TD
//! (docs/auditing.md, "RTMR0: per host profile").
//!
//! A profile is a set of named files ([`PROFILE_FILES`]):
//! - `memory`: the guest memory size, `2G`, `8GiB`, `2048M` or a plain number of **bytes**
//!   (unlike QEMU's `-m`, whose bare numbers are MiB);
//! - `table-loader`, `rsdp`, `tables`: the raw QEMU fw_cfg files `etc/table-loader`,
//!   `etc/acpi/rsdp` and `etc/acpi/tables`, byte for byte.

use std::collections::BTreeMap;

/// The profile file holding the memory size.
pub const MEMORY_FILE: &str = "memory";
/// The profile file holding fw_cfg `etc/table-loader`.
pub const TABLE_LOADER_FILE: &str = "table-loader";
/// The profile file holding fw_cfg `etc/acpi/rsdp`.
pub const RSDP_FILE: &str = "rsdp";
/// The profile file holding fw_cfg `etc/acpi/tables`.
pub const TABLES_FILE: &str = "tables";
/// Every file a profile must hold.
pub const PROFILE_FILES: [&str; 4] = [MEMORY_FILE, TABLE_LOADER_FILE, RSDP_FILE, TABLES_FILE];

/// Size of one QEMU BIOS linker/loader command (`BiosLinkerLoaderEntry`).
const LOADER_ENTRY_LEN: usize = 128;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum EvidenceError {
    #[error("profile file `{0}` is missing")]
    Missing(&'static str),
    #[error("memory size {0:?}: {1}")]
    BadMemorySize(String, &'static str),
    #[error("fw_cfg blob `{0}` is empty")]
    EmptyBlob(&'static str),
    #[error("`{TABLE_LOADER_FILE}` is {0} bytes, not a whole number of 128-byte loader commands")]
    BadTableLoader(usize),
    #[error("`{RSDP_FILE}` is not an ACPI RSDP (\"RSD PTR \" signature, 20 or 36 bytes)")]
    BadRsdp,
}

/// QEMU's fw_cfg ACPI files, in the order OVMF measures them: the loader script first, then
/// each file the script allocates in script order (QEMU prepends allocations, so the RSDP,
/// allocated last, comes before the tables).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AcpiBlobs {
    pub table_loader: Vec<u8>,
    pub rsdp: Vec<u8>,
    pub tables: Vec<u8>,
}

impl AcpiBlobs {
    /// Checks the blobs' shape (it catches swapped or truncated captures, not wrong content).
    pub fn new(table_loader: Vec<u8>, rsdp: Vec<u8>, tables: Vec<u8>) -> Result<Self, EvidenceError> {
        if table_loader.is_empty() {
            return Err(EvidenceError::EmptyBlob(TABLE_LOADER_FILE));
        }
        if !table_loader.len().is_multiple_of(LOADER_ENTRY_LEN) {
            return Err(EvidenceError::BadTableLoader(table_loader.len()));
        }
        if rsdp.is_empty() {
            return Err(EvidenceError::EmptyBlob(RSDP_FILE));
        }
        if !rsdp.starts_with(b"RSD PTR ") || !matches!(rsdp.len(), 20 | 36) {
            return Err(EvidenceError::BadRsdp);
        }
        if tables.is_empty() {
            return Err(EvidenceError::EmptyBlob(TABLES_FILE));
        }
        Ok(AcpiBlobs { table_loader, rsdp, tables })
    }
}

/// The data of the Secure Boot variables; empty means "not set", which is what the pinned
/// firmware (IntelTdxX64, `SECURE_BOOT_ENABLE = FALSE`, `AuthVariableLibNull`) has: no
/// `SecureBoot` variable is even created. A Secure Boot build creates `SecureBoot` = `00`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SecureBootVariables {
    pub secure_boot: Vec<u8>,
    pub pk: Vec<u8>,
    pub kek: Vec<u8>,
    pub db: Vec<u8>,
    pub dbx: Vec<u8>,
}

/// Everything RTMR0 depends on besides the firmware file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rtmr0Evidence {
    /// Guest memory in bytes.
    pub memory: u64,
    pub acpi: AcpiBlobs,
    pub secure_boot: SecureBootVariables,
}

impl Rtmr0Evidence {
    /// Builds the evidence from a profile's files (name → contents), Secure Boot off.
    pub fn from_profile(files: &BTreeMap<String, Vec<u8>>) -> Result<Self, EvidenceError> {
        let get = |name: &'static str| files.get(name).ok_or(EvidenceError::Missing(name));
        let raw = get(MEMORY_FILE)?;
        let memory_text = std::str::from_utf8(raw)
            .map_err(|_| EvidenceError::BadMemorySize(String::from_utf8_lossy(raw).into(), "not UTF-8"))?;
        let memory = parse_memory_size(memory_text)?;
        let acpi = AcpiBlobs::new(get(TABLE_LOADER_FILE)?.clone(), get(RSDP_FILE)?.clone(), get(TABLES_FILE)?.clone())?;
        Ok(Rtmr0Evidence { memory, acpi, secure_boot: SecureBootVariables::default() })
    }
}

/// Parses `2G`, `2GiB`, `512M`, `8g` (binary units K/M/G/T, optional `iB`/`B`) or a plain
/// number of bytes. Surrounding whitespace is ignored.
pub fn parse_memory_size(text: &str) -> Result<u64, EvidenceError> {
    let bad = |why| EvidenceError::BadMemorySize(text.trim().to_string(), why);
    let t = text.trim();
    let digits_end = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (number, unit) = t.split_at(digits_end);
    if number.is_empty() {
        return Err(bad("expected a number, optionally followed by K, M, G or T"));
    }
    let number: u64 = number.parse().map_err(|_| bad("number out of range"))?;
    let unit = unit.trim();
    let shift = match unit.to_ascii_uppercase().as_str() {
        "" | "B" => 0,
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        "T" | "TB" | "TIB" => 40,
        _ => return Err(bad("unknown unit (use K, M, G or T)")),
    };
    let bytes = number.checked_mul(1u64 << shift).ok_or_else(|| bad("number out of range"))?;
    if bytes == 0 {
        return Err(bad("must be positive"));
    }
    Ok(bytes)
}
