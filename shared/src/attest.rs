//! Client-side attestation (feature `verify`): dcap-qvl checks the DCAP chain; this module
//! adds our policy and the key binding, and reports every check in a verification document.
//!
//! Kept apart, one concern per file, as Project Oak does: `measurements` (reference values),
//! `policy` (what is acceptable), `verify` (evidence against both), `document` (the result).

pub mod document;
pub mod measurements;
pub mod policy;
pub mod verify;

pub use document::{Check, Verdict, VerificationDocument};
pub use measurements::Measurements;
pub use policy::{Binding, Policy, TrustRoot};
pub use verify::{Evidence, verify};

/// Message the enclave signs to prove liveness for a client nonce (freshness, beyond the
/// contract): `SVC-ATTEST-NONCE-v1` ‖ nonce (32) ‖ tee public key (32).
pub fn nonce_message(nonce: &[u8; 32], tee_public_key: &[u8; 32]) -> Vec<u8> {
    [NONCE_PREFIX, nonce.as_slice(), tee_public_key.as_slice()].concat()
}

pub const NONCE_PREFIX: &[u8] = b"SVC-ATTEST-NONCE-v1";
