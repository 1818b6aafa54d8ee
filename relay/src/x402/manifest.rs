//! `GET /.well-known/x402`: the paywall manifest (contract §4.4, §5 rule 2), in the x402scan
//! discovery shape `{version: 1, resources: [...]}`, plus the payment terms of each priced route
//! and the facilitator. A relay without x402 lists no resources and says `enabled: false`.

use std::collections::BTreeMap;

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use super::requirements::{self, MIME_TYPE};
use crate::state::App;

/// A route priced per call with x402, as the manifest lists it. Each is defined beside its
/// handler; the router hands the list to [`routes`](super::routes), so the manifest names routes
/// without importing their subsystems.
pub struct PricedRoute {
    pub method: &'static str,
    pub path: &'static str,
    pub description: &'static str,
    /// Body fields and their types.
    pub input: &'static [(&'static str, &'static str)],
}

const INSTRUCTIONS: &str = "Each resource costs one x402 payment per call (scheme exact, Solana). Call it without \
                            payment to receive the 402 requirements; pay with X-PAYMENT (x402 v1) or \
                            PAYMENT-SIGNATURE (x402 v2). The payment is settled only after a successful answer.";

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Manifest {
    pub version: u8,
    pub resources: Vec<String>,
    pub instructions: &'static str,
    pub x402: Terms,
    pub routes: Vec<RouteTerms>,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Terms {
    pub enabled: bool,
    pub x402_versions: [u8; 2],
    pub scheme: &'static str,
    pub network: String,
    pub caip2: Option<&'static str>,
    pub asset: String,
    pub asset_decimals: u8,
    pub pay_to: Option<String>,
    pub price_per_call: String,
    pub max_timeout_seconds: u64,
    pub facilitator: Option<String>,
    pub payment_headers: HeaderNames,
    pub response_headers: HeaderNames,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct HeaderNames {
    pub v1: &'static str,
    pub v2: &'static str,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RouteTerms {
    pub resource: String,
    pub method: &'static str,
    pub description: &'static str,
    pub mime_type: &'static str,
    pub price: String,
    pub price_in_units: f64,
    pub asset: String,
    pub network: &'static str,
    pub pay_to: String,
    pub input: BTreeMap<&'static str, &'static str>,
}

#[utoipa::path(get, path = "/.well-known/x402", tag = "discovery",
    summary = "The x402 paywall manifest: priced routes, their terms and the facilitator",
    responses((status = 200, body = Manifest)))]
pub async fn handle(State(app): State<App>, priced: &'static [&'static PricedRoute]) -> Response {
    let x402 = &app.x402;
    let settings = x402.settings();
    let routes: Vec<RouteTerms> = match settings {
        None => Vec::new(),
        Some(s) => priced
            .iter()
            .map(|r| RouteTerms {
                resource: format!("{}{}", app.public_url, r.path),
                method: r.method,
                description: r.description,
                mime_type: MIME_TYPE,
                price: s.price.to_string(),
                price_in_units: s.price_in_units(),
                asset: s.asset.to_string(),
                network: s.network,
                pay_to: s.pay_to.to_string(),
                input: r.input.iter().copied().collect(),
            })
            .collect(),
    };
    let manifest = Manifest {
        version: 1,
        resources: routes.iter().map(|r| r.resource.clone()).collect(),
        instructions: INSTRUCTIONS,
        x402: Terms {
            enabled: x402.enabled(),
            x402_versions: [1, 2],
            scheme: requirements::SCHEME,
            network: settings.map_or(x402.config.network.clone(), |s| s.network.to_string()),
            caip2: settings.map(|s| s.caip2),
            asset: x402.config.asset.clone(),
            asset_decimals: x402.config.asset_decimals,
            pay_to: settings.map(|s| s.pay_to.to_string()),
            price_per_call: x402.price().to_string(),
            max_timeout_seconds: x402.config.max_timeout_seconds,
            facilitator: settings.map(|s| s.facilitator.name()),
            payment_headers: HeaderNames { v1: "X-PAYMENT", v2: "PAYMENT-SIGNATURE" },
            response_headers: HeaderNames { v1: requirements::X_PAYMENT_RESPONSE, v2: requirements::PAYMENT_RESPONSE },
        },
        routes,
    };
    let mut response = Json(manifest).into_response();
    response.headers_mut().insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
    response
}
