//! The enclave: the only component that holds private keys and sees private plaintext.
//!
//! Folders follow the trust line (reading order and line counts: README.md):
//! - `platform/`: the TD itself: boot syscalls, `/init`, configfs-tsm quotes, the attestation;
//! - `keys/`: the per-boot keys, the provisioned secrets and the sealed objects;
//! - `inference/`: a private chat from envelope to sealed reply, and the GPU nodes' gate;
//! - `funds/`: swap session keys, the checks before they sign, the managed wallets' pool;
//! - `service.rs` ties them, `api.rs` serves them, `error.rs` maps every failure once.

// Unsafe code is denied workspace-wide ([workspace.lints]); `platform/boot.rs`, the one
// commented module of boot syscalls, allows it for itself.

pub mod api;
pub mod config;
pub mod error;
pub mod funds;
pub mod inference;
pub mod keys;
pub mod platform;
pub mod service;
