//! The enclave: the only component that holds private keys and sees private plaintext.
//!
//! Boot creates fresh keys and the binding quote; the internal API serves the public key,
//! the attestation and `process` (open envelope, call the model, seal the reply, sign the
//! receipt) to the relay.

// Unsafe code is denied workspace-wide ([workspace.lints]); `boot`, the one commented module of
// boot syscalls, allows it for itself.

pub mod api;
pub mod attestation;
#[cfg(target_os = "linux")]
pub mod boot;
pub mod config;
pub mod custody;
#[cfg(feature = "dev-quotes")]
pub mod dev_quotes;
pub mod error;
pub mod funds;
pub mod gpu_node;
#[cfg(target_os = "linux")]
pub mod init;
pub mod keys;
pub mod process;
pub mod replay;
pub mod sealed;
pub mod swap;
pub mod swap_check;
pub mod tsm;
