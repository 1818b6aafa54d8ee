//! Stand-in for pay.sh: the published skills catalog (the CDN directory the `pay` CLI reads,
//! <https://pay.sh/docs/using-pay/skills>) and one catalog provider's pay-per-call API.
//!
//! ```ignore
//! pub async fn start() -> (Running, Log)
//! ```
//!
//! Starts the server. The catalog lives under `/pay-skills/v1`, so point the `paysh` upstream's
//! base URL at `format!("{}/pay-skills/v1", running.base_url)`. The [`Log`] records every
//! request (method, raw path, query, headers, body).
//!
//! Served:
//! - `GET /pay-skills/v1/skills.json` — the index `{version, generated_at, base_url,
//!   provider_count, providers: [...]}` with three providers: `acme/weather` (whose
//!   `service_url` is this server's `/acme`), `quicknode/rpc` and
//!   `solana-foundation/google/translate` (sample entries with external URLs, never called);
//! - `GET /pay-skills/v1/providers/{fqn}.json` — provider detail `{endpoints: [...], content}`
//!   (only `acme/weather`; others 404);
//! - the `acme/weather` API: `GET /acme/current` and `POST /acme/forecast` answer 402 with an
//!   x402 v1 body `{x402Version: 1, error, accepts: [...]}` unless an `X-PAYMENT` or
//!   `PAYMENT-SIGNATURE` header is present; `GET /acme/free/echo` answers 200 with the query
//!   parameters, `POST /acme/free/echo` with the JSON body it got (400 for a non-JSON body).
//!
//! Unlike the real catalog (HTTPS domains only), `acme/weather`'s `service_url` is a loopback
//! `http://` URL, since the provider is this server.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use axum::Router;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::{Incoming, Running};

pub use crate::{Log, Seen};

struct Stand {
    /// This server's own base URL, known once it is bound.
    base: OnceLock<String>,
    log: Log,
}

pub async fn start() -> (Running, Log) {
    let log: Log = Arc::default();
    let stand = Arc::new(Stand { base: OnceLock::new(), log: log.clone() });
    let running = crate::serve(Router::new().fallback(handle).with_state(stand.clone())).await;
    let _ = stand.base.set(running.base_url.clone());
    (running, log)
}

/// The USDC mint on Solana mainnet.
const USDC: &str = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
const PAY_TO: &str = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin";

async fn handle(State(stand): State<Arc<Stand>>, request: Incoming) -> Response {
    crate::record(&stand.log, request.seen());
    let Incoming { method, uri, headers, body } = request;

    let base = stand.base.get().cloned().unwrap_or_default();
    let paid = headers.contains_key("x-payment") || headers.contains_key("payment-signature");
    match (method.as_str(), uri.path()) {
        ("GET", "/pay-skills/v1/skills.json") => axum::Json(index(&base)).into_response(),
        ("GET", "/pay-skills/v1/providers/acme/weather.json") => axum::Json(detail(&base)).into_response(),
        ("GET", "/acme/current") if !paid => payment_required(&base, "/acme/current", "Current conditions", "10000"),
        ("POST", "/acme/forecast") if !paid => payment_required(&base, "/acme/forecast", "7-day forecast", "50000"),
        ("GET", "/acme/free/echo") => {
            let query: HashMap<String, String> =
                Query::<HashMap<String, String>>::try_from_uri(&uri).map(|q| q.0).unwrap_or_default();
            axum::Json(json!({"echo": query, "method": "GET"})).into_response()
        }
        ("POST", "/acme/free/echo") => match serde_json::from_slice::<Value>(&body) {
            Ok(value) => axum::Json(json!({"echo": value, "method": "POST"})).into_response(),
            Err(_) => (StatusCode::BAD_REQUEST, axum::Json(json!({"error": "body must be JSON"}))).into_response(),
        },
        _ => (StatusCode::NOT_FOUND, axum::Json(json!({"error": "not found"}))).into_response(),
    }
}

fn index(base: &str) -> Value {
    json!({
        "version": 2,
        "generated_at": "2026-05-07T01:23:54Z",
        "base_url": format!("{base}/pay-skills/v1"),
        "provider_count": 3,
        "affiliate_count": 0,
        "aggregator_count": 0,
        "providers": [
            {
                "fqn": "acme/weather",
                "title": "Acme Weather",
                "description": "Current conditions and 7-day forecasts for any city, as JSON with temperature, wind and precipitation.",
                "use_case": "Use for weather lookups: current conditions, forecasts, planning outdoor events.",
                "category": "data",
                "service_url": format!("{base}/acme"),
                "endpoint_count": 3,
                "has_metering": true,
                "has_free_tier": true,
                "min_price_usd": 0.0,
                "max_price_usd": 0.05,
                "sha": "3f2a9c0d11e4b7a2"
            },
            {
                "fqn": "quicknode/rpc",
                "title": "QuickNode",
                "description": "Pay-per-request JSON-RPC endpoints for 140+ blockchain networks, including Solana and Ethereum.",
                "use_case": "Use for blockchain JSON-RPC, querying account or contract state, sending transactions.",
                "category": "compute",
                "service_url": "https://x402.quicknode.example",
                "endpoint_count": 140,
                "has_metering": true,
                "has_free_tier": false,
                "min_price_usd": 0.0001,
                "max_price_usd": 0.001,
                "sha": "9b1e77c0a2f3d4e5"
            },
            {
                "fqn": "solana-foundation/google/translate",
                "title": "Google Translate",
                "description": "Translate text between more than 100 languages and detect the language of a text.",
                "use_case": "Use to translate user text or detect which language a text is in.",
                "category": "translation",
                "service_url": "https://translate.gateway.example",
                "endpoint_count": 4,
                "has_metering": true,
                "has_free_tier": false,
                "min_price_usd": 0.001,
                "max_price_usd": 0.02,
                "sha": "c39acd601c54f2ae"
            }
        ]
    })
}

fn detail(base: &str) -> Value {
    json!({
        "fqn": "acme/weather",
        "title": "Acme Weather",
        "service_url": format!("{base}/acme"),
        "endpoints": [
            {
                "method": "GET",
                "path": "/current",
                "full_path": "/current",
                "resource": "weather",
                "description": "Get the current conditions for a city (query: city).",
                "pricing": {"amount": "0.01", "currency": "USDC"}
            },
            {
                "method": "POST",
                "path": "/forecast",
                "full_path": "/forecast",
                "resource": "weather",
                "description": "Get a 7-day forecast for a city (JSON body: {city}).",
                "pricing": {"amount": "0.05", "currency": "USDC"}
            },
            {
                "method": "GET",
                "path": "/free/echo",
                "full_path": "/free/echo",
                "resource": "debug",
                "description": "Echo the query string back, free of charge.",
                "pricing": null
            }
        ],
        "content": "# Acme Weather\n\nPrefer /current over /forecast when today is enough."
    })
}

fn payment_required(base: &str, path: &str, description: &str, amount: &str) -> Response {
    let body = json!({
        "x402Version": 1,
        "error": "X-PAYMENT header is required",
        "accepts": [{
            "scheme": "exact",
            "network": "solana",
            "maxAmountRequired": amount,
            "asset": USDC,
            "payTo": PAY_TO,
            "resource": format!("{base}{path}"),
            "description": description,
            "mimeType": "application/json",
            "outputSchema": {"input": {"type": "http", "method": "GET"}, "output": {"type": "object"}},
            "maxTimeoutSeconds": 60,
            "extra": {"feePayer": "2wKupLR9q6wXYppw8Gr2NvWxKBUqm4PPJKkQfoxHDBg4", "name": "USDC", "decimals": 6}
        }]
    });
    (StatusCode::PAYMENT_REQUIRED, axum::Json(body)).into_response()
}
