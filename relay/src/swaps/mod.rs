//! The swap side of the Agent Privacy API (`/agents/v1`, contract §4.3, DESIGN §11,
//! docs/swaps.md): quotes, anonymity sets, one-shot private swaps and their sessions and
//! receipts.
//!
//! The relay serves HTTP, prices quotes, builds the funding transaction and keeps each session
//! as a durable state machine (`agents::sessions`, advanced by `worker.rs`). It holds no key
//! that moves funds: the enclave makes every session key, signs every transaction of it, and
//! reads the chain itself before it does.

pub mod anonymity;
pub mod buckets;
pub mod enclave;
pub mod oneshot;
pub mod params;
pub mod quote;
pub mod views;

use crate::state::App;

/// The swap routes: quotes, anonymity sets, one-shot swaps, sessions and their receipts.
pub fn routes() -> axum::Router<App> {
    use axum::routing::{get, post};
    axum::Router::new()
        .route(quote::PATH, get(quote::handle))
        .route("/agents/v1/anonymity-set", get(anonymity::handle))
        .route(oneshot::PATH, post(oneshot::start))
        .route("/agents/v1/swaps/oneshot/{id}/execute", post(oneshot::execute))
        .route("/agents/v1/sessions/{id}", get(views::session))
        .route("/agents/v1/attestations/{id}", get(views::attestation))
}
