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

/// The enclave routes: its key, its attestation, the enclaves behind this relay, provisioning.
pub fn routes() -> axum::Router<crate::state::App> {
    use axum::routing::{get, post};
    axum::Router::new()
        .route("/tee/public-key", get(routes::public_key))
        .route("/tee/attestation", get(routes::attestation))
        .route("/tee/keys", get(routes::keys))
        .route("/tee/provision", post(routes::provision))
}
