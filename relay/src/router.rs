//! The route table, and the layers every response passes: one log line per request, its count
//! and latency under its route template (`metrics/`), and JSON errors even where the framework
//! answers on its own (unknown paths, wrong methods, extractor rejections).

use std::net::SocketAddr;

use axum::Router;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};

use crate::http::error::RelayError;
use crate::metrics::route::Timer;
use crate::state::App;
use crate::{
    accounts, agent_route, billing, discovery, enclaves, metrics, private, receipts, swaps, wallets, web, x402,
};

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

/// The routes the x402 manifest lists, in its order (a route that starts taking x402 payments
/// belongs here).
const X402_PRICED: &[&x402::manifest::PricedRoute] =
    &[&private::x402_chat::PRICED, &agent_route::PRICED, &swaps::quote::PRICED, &swaps::oneshot::PRICED];

/// Every public route but the MCP endpoint: each subsystem's own, merged.
fn routes() -> Router<App> {
    Router::new()
        .merge(enclaves::routes())
        .merge(private::routes())
        .merge(agent_route::routes())
        .merge(x402::routes(X402_PRICED))
        .merge(billing::routes())
        .merge(accounts::routes())
        .merge(discovery::routes())
        .merge(swaps::routes())
        .merge(wallets::routes())
        .merge(receipts::routes())
        .merge(metrics::routes())
        .merge(web::routes())
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
        _ => RelayError::Internal("the framework answered a server error"),
    };
    let mut rewritten = error.into_response();
    // Keep the framework's status (a 4xx we have no variant for stays what it was).
    *rewritten.status_mut() = status;
    rewritten
}
