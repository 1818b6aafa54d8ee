//! The enclaves behind this relay: the client of their internal API, the pool that routes by
//! key id, the sealed objects they keep here, and the public routes that pass their keys,
//! attestations (with Intel's collateral where a quote has none) and provisioning through.

pub mod client;
pub mod collateral;
pub mod objects;
pub mod pool;
pub mod routes;

pub use client::{EnclaveAnswer, EnclaveClient, Unreachable};
pub use pool::EnclavePool;
