//! The enclave: the only component that holds private keys and sees private plaintext.
//!
//! Boot creates fresh keys and the binding quote; the internal API serves the public key,
//! the attestation and `process` (open envelope, call the model, seal the reply, sign the
//! receipt) to the relay.

#![forbid(unsafe_code)]

pub mod api;
pub mod attestation;
pub mod config;
#[cfg(feature = "dev-quotes")]
pub mod dev_quotes;
pub mod error;
pub mod keys;
pub mod process;
pub mod replay;
pub mod tsm;
