//! Shared state and the router.

use std::sync::Arc;
use std::time::Instant;

use axum::Router;
use axum::extract::Request;
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::routing::{get, post};

use crate::auth::ApiKeys;
use crate::ledger::Ledger;
use crate::routes;
use crate::store::Store;
use crate::tee::TeeClient;

pub struct AppState {
    pub tee: TeeClient,
    pub keys: ApiKeys,
    pub store: Store,
    pub ledger: Ledger,
    pub public_url: String,
    pub prices: std::collections::BTreeMap<String, u64>,
    /// The plaintext `/agent` path (models and tools the relay calls itself).
    pub plain: crate::plain_agent::PlainAgent,
    pub agent_price: u64,
    pub tee_process_price: u64,
    pub free_per_day: u32,
    pub trusted_proxies: Vec<std::net::IpAddr>,
    pub max_history_turns: u32,
    pub x402: crate::x402::X402,
    pub rate_limits: crate::rate_limit::RateLimitConfig,
}

pub type App = Arc<AppState>;

pub fn router(state: App) -> Router {
    let lookups = Router::new()
        .route("/attestation/by-hash/{hash}", get(routes::receipts::by_hash))
        .route("/attestation/by-tx/{signature}", get(routes::receipts::by_tx))
        .route("/attestation/{address}", get(routes::receipts::by_address))
        .layer(middleware::map_response(routes::receipts::cors_open));
    Router::new()
        .route("/tee/public-key", get(routes::tee::public_key))
        .route("/tee/attestation", get(routes::tee::attestation))
        .route("/tee/process", post(routes::tee::process))
        .route("/agent", post(routes::agent::agent))
        .route("/api/v1/x402/chat/completions", post(routes::x402::chat_completions))
        .route("/.well-known/x402", get(routes::x402::manifest))
        .route("/api/v1/balance", get(routes::account::balance))
        .route("/api/v1/models", get(routes::account::models))
        .route("/api/v1/usage", get(routes::account::usage))
        .route("/api/v1/chat/completions", post(routes::completions::chat_completions))
        .route("/api/v1/auth/challenge", post(routes::account::challenge))
        .route("/api/v1/auth/verify", post(routes::account::sign_in))
        .route("/api/v1/keys", get(routes::account::list_keys))
        .route("/api/v1/keys/{id}", axum::routing::delete(routes::account::revoke_key))
        .route("/api/v1/keys/{id}/rotate", post(routes::account::rotate_key))
        .route("/health", get(|| async { "ok" }))
        .merge(lookups)
        .layer(middleware::from_fn_with_state(state.clone(), crate::rate_limit::limit))
        .layer(middleware::from_fn(log_request))
        .with_state(state)
}

/// One line per request: method, path, status, time. Never headers or bodies.
async fn log_request(request: Request, next: Next) -> Response {
    let method = request.method().clone();
    let path = request.uri().path().to_string();
    let started = Instant::now();
    let response = next.run(request).await;
    tracing::info!(%method, path, status = response.status().as_u16(), elapsed_ms = started.elapsed().as_millis() as u64);
    response
}
