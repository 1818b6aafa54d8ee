//! Client-side attestation (feature `verify`): dcap-qvl checks the DCAP chain; this module
//! adds our policy and the key binding, and reports every check in a verification document.
//!
//! Evidence, reference values and policy are kept apart, as Project Oak does:
//! - `evidence`: what the enclave presents (quote, binding, nonce proof) and the quote's shape;
//! - `collateral`: what vouches for it, parsed once and cached;
//! - `measurements`: the reference values (`measurements/*.json`);
//! - `policy`: what is acceptable, with one file per check in `policy/` (`tcb`,
//!   `td_attributes`, `measurements`, `binding`, `nonce`), each returning its rows and first
//!   failure;
//! - `platforms` (feature `remember-platforms`): DCAP results for platforms seen before, so a
//!   warm check costs one signature;
//! - `verify`: runs the policies in order and assembles the `document`.

pub mod collateral;
pub mod document;
pub mod evidence;
pub mod measurements;
#[cfg(feature = "remember-platforms")]
pub mod platforms;
pub mod policy;
pub mod verify;

pub use collateral::{Collateral, CollateralError};
pub use document::{Check, Verdict, VerificationDocument};
pub use evidence::{Evidence, NonceProof};
pub use measurements::Measurements;
#[cfg(feature = "remember-platforms")]
pub use platforms::{VerifiedPlatforms, verify_remembering};
pub use policy::{Binding, Policy, TrustRoot};
pub use verify::verify;

pub use crate::freshness::{NONCE_PREFIX, nonce_message};
