//! Client-side attestation (feature `verify`): dcap-qvl checks the DCAP chain; this module
//! adds our policy and the key binding, and reports every check in a verification document.
//!
//! Kept apart, one concern per file, as Project Oak does: `measurements` (reference values),
//! `policy` (what is acceptable), `verify` (evidence against both), `document` (the result).

pub mod collateral;
pub mod document;
pub mod measurements;
pub mod policy;
pub mod verify;

pub use collateral::{Collateral, CollateralError};
pub use document::{Check, Verdict, VerificationDocument};
pub use measurements::Measurements;
pub use policy::{Binding, Policy, TrustRoot};
pub use verify::{Evidence, verify};

pub use crate::freshness::{NONCE_PREFIX, nonce_message};
