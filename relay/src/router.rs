//! The route table, and the layers every response passes: one log line per request, its count
//! and latency under its route template (`metrics/`), and JSON errors even where the framework
//! answers on its own (unknown paths, wrong methods, extractor rejections).

use std::net::SocketAddr;

use axum::Router;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};

use crate::error::RelayError;
use crate::metrics::route::Timer;
use crate::state::App;
use crate::{accounts, agent_route, agents_v1, billing, discovery, enclaves, log, private, receipts, x402};

pub fn router(state: App) -> Router {
    let api = routes().with_state(state.clone());
    // MCP tools call the same routes, in-process (src/mcp/call.rs).
    let mcp = crate::mcp::service(api.clone(), &state.public_url, &state.discovery.mcp_allowed_hosts);
    api.nest_service("/mcp/v1", mcp).layer(middleware::from_fn_with_state(state, edge))
}

/// What every request passes, in one layer: its count and latency under its route template
/// (`metrics/`), one log line, the rate limits, and JSON errors. One layer rather than one
/// each, because each `from_fn` layer boxes a future of its own per request, and a request
/// waiting on the enclave holds them all (docs/benchmarks.md, "Load and memory").
async fn edge(
    State(app): State<App>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    request: Request,
    next: Next,
) -> Response {
    let timer = Timer::start(&request);
    let path = request.uri().path().to_string();
    let response = match billing::rate_limit::refusal(&app, peer, &path, request.headers()).await {
        Some(refused) => refused,
        None => json_errors(next.run(request).await).await,
    };
    let status = response.status().as_u16();
    // Method, path, template, status and time; never headers or bodies.
    let (method, route, elapsed_ms) = (timer.method(), timer.route(), timer.elapsed().as_millis() as u64);
    tracing::info!(%method, path, route, status, elapsed_ms);
    timer.record(&app.metrics.requests, status);
    response
}

/// Every public route but the MCP endpoint.
fn routes() -> Router<App> {
    let lookups = Router::new()
        .route("/attestation/by-hash/{hash}", get(receipts::lookups::by_hash))
        .route("/attestation/by-tx/{signature}", get(receipts::lookups::by_tx))
        .route("/attestation/{address}", get(receipts::lookups::by_address))
        .route("/attestation/{address}/ledger", get(receipts::lookups::ledger_status))
        .route("/log/v1/sth", get(log::routes::sth))
        .route("/log/v1/proof/inclusion", get(log::routes::inclusion))
        .route("/log/v1/proof/consistency", get(log::routes::consistency))
        .route("/log/v1/entries", get(log::routes::entries))
        .route("/log/v1/anchors", get(log::routes::anchors))
        .layer(middleware::map_response(receipts::lookups::cors_open));
    Router::new()
        .route("/tee/public-key", get(enclaves::routes::public_key))
        .route("/tee/attestation", get(enclaves::routes::attestation))
        .route("/tee/keys", get(enclaves::routes::keys))
        .route("/tee/provision", post(enclaves::routes::provision))
        .route("/tee/process", post(private::tee_process::handle))
        .route("/agent", post(agent_route::handle))
        .route("/api/v1/chat/completions", post(private::chat_completions::handle))
        .route("/api/v1/x402/chat/completions", post(private::x402_chat::handle))
        .route("/.well-known/x402", get(x402::manifest::handle))
        .route("/api/v1/balance", get(billing::routes::balance))
        .route("/api/v1/usage", get(billing::routes::usage))
        .route("/api/v1/deposits", get(billing::deposits::routes::list))
        .route("/api/v1/deposits/address", get(billing::deposits::routes::address))
        .route("/api/v1/models", get(discovery::models::handle))
        .route("/api/v1/auth/challenge", post(accounts::routes::challenge))
        .route("/api/v1/auth/verify", post(accounts::routes::sign_in))
        .route("/api/v1/keys", get(accounts::routes::list_keys))
        .route("/api/v1/keys/{id}", delete(accounts::routes::revoke_key))
        .route("/api/v1/keys/{id}/rotate", post(accounts::routes::rotate_key))
        .route(agents_v1::quote::PATH, get(agents_v1::quote::handle))
        .route("/agents/v1/anonymity-set", get(agents_v1::anonymity::handle))
        .route(agents_v1::oneshot::PATH, post(agents_v1::oneshot::start))
        .route("/agents/v1/swaps/oneshot/{id}/execute", post(agents_v1::oneshot::execute))
        .route("/agents/v1/sessions/{id}", get(agents_v1::views::session))
        .route("/agents/v1/attestations/{id}", get(agents_v1::views::attestation))
        .merge(agents_v1::wallets::routes())
        .route("/.well-known/agent-card.json", get(discovery::agent_card))
        .route("/agents/v1/capabilities", get(discovery::capabilities::handle))
        .route("/agents/v1/openapi.json", get(discovery::openapi::agents_document))
        .route("/openapi.json", get(discovery::openapi::whole_document))
        .route("/icon.svg", get(discovery::icon))
        .route("/health", get(discovery::openapi::health))
        .route("/ready", get(discovery::openapi::ready))
        .route("/metrics", get(crate::metrics::route::handle))
        .merge(lookups)
        .merge(crate::web::routes())
        .fallback(|| async { RelayError::NotFound("no such route") })
        .method_not_allowed_fallback(|| async { RelayError::MethodNotAllowed })
}

/// Largest body of a route that does not read its own (axum's default `DefaultBodyLimit`).
const DEFAULT_BODY_LIMIT: usize = 2 << 20;

/// Largest framework rejection text carried into a JSON message.
const MAX_REJECTION_TEXT: usize = 200;

/// Every error response is JSON `{error, message}` (contract §1 rule 8): a framework answer
/// (an extractor's plain-text rejection, a body-limit 413) is rewritten here, with the code
/// its status means; our own JSON errors pass untouched.
async fn json_errors(response: Response) -> Response {
    let status = response.status();
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if !(status.is_client_error() || status.is_server_error()) || is_json {
        return response;
    }
    let text = match axum::body::to_bytes(response.into_body(), 4096).await {
        Ok(bytes) => String::from_utf8_lossy(&bytes).chars().take(MAX_REJECTION_TEXT).collect::<String>(),
        Err(_) => String::new(),
    };
    let error = match status {
        StatusCode::NOT_FOUND => RelayError::NotFound("no such route"),
        StatusCode::METHOD_NOT_ALLOWED => RelayError::MethodNotAllowed,
        StatusCode::PAYLOAD_TOO_LARGE => RelayError::PayloadTooLarge(DEFAULT_BODY_LIMIT),
        StatusCode::UNSUPPORTED_MEDIA_TYPE => RelayError::UnsupportedMediaType,
        s if s.is_client_error() => {
            RelayError::BadRequest(if text.trim().is_empty() { "the request was refused".into() } else { text })
        }
        _ => RelayError::Internal,
    };
    let mut rewritten = error.into_response();
    // Keep the framework's status (a 4xx we have no variant for stays what it was).
    *rewritten.status_mut() = status;
    rewritten
}
