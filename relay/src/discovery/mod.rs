//! What the service offers, for clients and agents to discover (contract §2.11, §4.4): the
//! model catalog, the A2A card, the capabilities document and the OpenAPI documents, all built
//! from the code and the configuration (`skills` is the one table of the agent surfaces).

pub mod capabilities;
pub mod card;
pub mod models;
pub mod openapi;
pub mod skills;

use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};

use crate::state::App;

/// The `discovery` section of the relay configuration: how the service names itself.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct DiscoveryConfig {
    pub name: String,
    pub description: String,
    pub organization: String,
    /// Default: the relay's public URL.
    pub organization_url: Option<String>,
    /// Default: the relay's OpenAPI document.
    pub documentation_url: Option<String>,
    /// `Cache-Control: max-age` of the discovery documents.
    pub max_age_secs: u64,
    /// `Host` values the MCP endpoint accepts besides the public URL's host and loopback.
    pub mcp_allowed_hosts: Vec<String>,
}

impl Default for DiscoveryConfig {
    fn default() -> Self {
        DiscoveryConfig {
            name: "svc private AI and private swaps".into(),
            description: "Private AI inference sealed to an attested Intel TDX enclave, with signed receipts, and \
                          private token swaps on the ledger through keys only the enclave holds."
                .into(),
            organization: "svc".into(),
            organization_url: None,
            documentation_url: None,
            max_age_secs: 300,
            mcp_allowed_hosts: Vec::new(),
        }
    }
}

impl DiscoveryConfig {
    pub fn organization_url(&self, base: &str) -> String {
        self.organization_url.clone().unwrap_or_else(|| base.to_string())
    }

    pub fn documentation_url(&self, base: &str) -> String {
        self.documentation_url.clone().unwrap_or_else(|| format!("{base}/openapi.json"))
    }
}

/// A discovery document as JSON with `Cache-Control` and a strong `ETag` (sha256 of the body);
/// a matching `If-None-Match` gets 304.
pub fn cached_json(app: &App, headers: &HeaderMap, value: &impl Serialize) -> Response {
    let body = match serde_json::to_vec_pretty(value) {
        Ok(b) => b,
        Err(_) => {
            return crate::http::error::RelayError::Internal("a discovery document did not serialize").into_response();
        }
    };
    let etag = format!("\"{}\"", hex::encode(&shared::sha256(&body)[..16]));
    let cache = format!("public, max-age={}", app.discovery.max_age_secs);
    let matches = headers.get(header::IF_NONE_MATCH).and_then(|v| v.to_str().ok()).is_some_and(|v| {
        v.split(',').map(str::trim).any(|t| t == etag || t == "*" || t.strip_prefix("W/") == Some(etag.as_str()))
    });
    let mut response = match matches {
        true => StatusCode::NOT_MODIFIED.into_response(),
        false => ([(header::CONTENT_TYPE, "application/json")], body).into_response(),
    };
    let h = response.headers_mut();
    if let (Ok(tag), Ok(cache)) = (HeaderValue::from_str(&etag), HeaderValue::from_str(&cache)) {
        h.insert(header::ETAG, tag);
        h.insert(header::CACHE_CONTROL, cache);
    }
    h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
    response
}

/// `GET /.well-known/agent-card.json`.
#[utoipa::path(get, path = "/.well-known/agent-card.json", tag = "discovery",
    summary = "The A2A agent card (contract §2.11), readable by A2A v1.0 and v0.3 clients",
    responses((status = 200, body = card::AgentCard), (status = 304, description = "`If-None-Match` matched the `ETag`")))]
pub async fn agent_card(State(app): State<App>, headers: HeaderMap) -> Response {
    let network = app.agents.as_ref().map_or("mainnet", |a| a.config.network.as_str());
    cached_json(&app, &headers, &card::card(&app.public_url, &app.discovery, network))
}

/// The card's icon: a small mark, served here so `iconUrl` resolves.
#[utoipa::path(get, path = "/icon.svg", tag = "discovery", summary = "The card's icon",
    responses((status = 200, content_type = "image/svg+xml", body = String)))]
pub async fn icon() -> Response {
    const SVG: &str = "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 64 64\"><rect width=\"64\" height=\"64\" \
                       rx=\"12\" fill=\"#111\"/><path d=\"M20 28v-6a12 12 0 0 1 24 0v6\" fill=\"none\" stroke=\"#fff\" \
                       stroke-width=\"5\"/><rect x=\"14\" y=\"28\" width=\"36\" height=\"24\" rx=\"4\" fill=\"#fff\"/></svg>";
    ([(header::CONTENT_TYPE, "image/svg+xml"), (header::CACHE_CONTROL, "public, max-age=86400")], SVG).into_response()
}

/// What the service says of itself: models, the agent card, capabilities, the OpenAPI
/// documents, health.
pub fn routes() -> axum::Router<App> {
    use axum::routing::get;
    axum::Router::new()
        .route("/api/v1/models", get(models::handle))
        .route("/.well-known/agent-card.json", get(agent_card))
        .route("/agents/v1/capabilities", get(capabilities::handle))
        .route("/agents/v1/openapi.json", get(openapi::agents_document))
        .route("/openapi.json", get(openapi::whole_document))
        .route("/icon.svg", get(icon))
        .route("/health", get(openapi::health))
        .route("/ready", get(openapi::ready))
}
