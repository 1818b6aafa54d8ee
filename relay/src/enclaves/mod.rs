//! The enclaves behind this relay: the client of their internal API, the pool that routes by
//! key id, the sealed objects they keep here, and the public routes that pass their keys,
//! attestations and provisioning through unchanged.

pub mod client;
pub mod objects;
pub mod pool;
pub mod routes;

pub use client::{EnclaveAnswer, EnclaveClient, Unreachable};
pub use pool::EnclavePool;
