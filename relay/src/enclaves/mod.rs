//! The enclaves behind this relay: the client of their internal API, the pool that routes by
//! key id, the sealed objects they keep here, and the public routes that pass their keys,
//! attestations (with Intel's collateral where a quote has none) and provisioning through.

pub mod client;
pub mod collateral;
pub mod objects;
pub mod pool;
pub mod routes;

use std::sync::Arc;

use axum::extract::FromRef;

pub use client::{EnclaveAnswer, EnclaveClient, Unreachable};
pub use collateral::CollateralSource;
pub use pool::EnclavePool;

use crate::state::App;

impl FromRef<App> for Arc<EnclavePool> {
    fn from_ref(app: &App) -> Self {
        app.enclaves.clone()
    }
}

impl FromRef<App> for Option<Arc<CollateralSource>> {
    fn from_ref(app: &App) -> Self {
        app.collateral.clone()
    }
}

/// The enclave routes: its key, its attestation, the enclaves behind this relay, provisioning.
pub fn routes() -> axum::Router<App> {
    use axum::routing::{get, post};
    axum::Router::new()
        .route("/tee/public-key", get(routes::public_key))
        .route("/tee/attestation", get(routes::attestation))
        .route("/tee/keys", get(routes::keys))
        .route("/tee/provision", post(routes::provision))
}
