//! The TD the enclave runs in: boot (`boot.rs`, the only `unsafe`), `/init` (`init.rs`),
//! quotes through configfs-tsm (`shared::tsm`) or a development PKI (`dev_quotes.rs`, feature
//! `dev-quotes` only), and the attestation made once at boot (`attestation.rs`).

pub mod attestation;
#[cfg(target_os = "linux")]
pub mod boot;
#[cfg(feature = "dev-quotes")]
pub mod dev_quotes;
#[cfg(target_os = "linux")]
pub mod init;
pub use shared::tsm;
