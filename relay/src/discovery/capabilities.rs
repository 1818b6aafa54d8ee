//! `GET /agents/v1/capabilities` (contract §4.4; the shape is ours, docs/discovery.md): what an
//! agent can do here today, from the same skills table as the card and from the live
//! configuration: routes with their status, auth and price; models; payment rails; limits;
//! privacy features.

use std::collections::BTreeMap;

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::Response;
use serde::Serialize;
use shared::catalog::{self, CATALOG};

use super::skills::{Price, SKILLS, Status};
use crate::billing::metering::CALL_CURRENCY;
use crate::state::{App, AppState};

#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Capabilities {
    pub name: String,
    pub version: &'static str,
    pub network: String,
    pub routes: Vec<RouteOffer>,
    pub models: Vec<ModelOffer>,
    pub payments: Payments,
    pub limits: Limits,
    pub privacy: Privacy,
    pub discovery: Discovery,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RouteOffer {
    pub method: &'static str,
    pub path: &'static str,
    pub status: Status,
    /// Card security schemes that apply; empty: public.
    pub auth: &'static [&'static str],
    /// Stablecoin base units per call for a key (x402 callers pay the x402 price); null: free.
    pub price_per_call: Option<String>,
    /// It signs or sends transactions that move real funds.
    pub moves_funds: bool,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ModelOffer {
    pub id: String,
    pub status: &'static str,
    pub context_length: u32,
    pub price_per_million_tokens: Option<String>,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Payments {
    /// `internal-credit` (a key's prepaid balance) and, when configured, `x402`.
    pub rails: Vec<&'static str>,
    pub currency: &'static str,
    pub x402: Option<X402Terms>,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct X402Terms {
    pub network: &'static str,
    pub asset: String,
    pub price_per_call: String,
    pub manifest: String,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Limits {
    pub agent_max_iterations: u32,
    pub private_body_bytes: usize,
    pub requests_per_minute_per_key: u32,
    pub requests_per_minute_per_address: u32,
    /// Mint → `{symbol, minAmount, maxAmount, buckets}` (base units as strings).
    pub swap_mints: BTreeMap<String, SwapMint>,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SwapMint {
    pub symbol: String,
    pub decimals: u8,
    pub min_amount: String,
    pub max_amount: String,
    pub buckets: Vec<String>,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Privacy {
    /// The TEE and where its evidence is.
    pub tee: &'static str,
    pub attestation: String,
    /// Every private call returns a receipt signed by the enclave, looked up here.
    pub receipts: String,
    pub receipt_version: &'static str,
    /// Prompts are sealed to the attested key; the relay sees only ciphertext.
    pub end_to_end_encryption: &'static str,
    /// Swap session keys are made and held by the enclave only.
    pub enclave_held_swap_keys: bool,
    pub denomination_buckets: bool,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Discovery {
    pub agent_card: String,
    pub openapi: String,
    pub openapi_all: String,
    pub mcp_http: String,
    pub x402_manifest: String,
}

fn price_of(app: &AppState, price: Price) -> Option<String> {
    let agents = app.agents.as_ref();
    let amount = match price {
        Price::Free => return None,
        Price::Quote => agents.map(|a| a.config.quote_price_per_call),
        Price::SessionStart => agents.map(|a| a.config.session_price_per_call),
        Price::X402Call => Some(app.x402.price()),
    };
    amount.map(|a| a.to_string())
}

pub fn capabilities(app: &AppState) -> Capabilities {
    let base = &app.public_url;
    let swaps = app.agents.as_ref();
    let routes = SKILLS
        .iter()
        .map(|s| RouteOffer {
            method: s.method,
            path: s.path,
            // A swap route answers only where swaps are configured.
            status: match (s.status, s.path.starts_with("/agents/v1/") && swaps.is_none()) {
                (Status::Live, false) => Status::Live,
                _ => Status::Soon,
            },
            auth: s.auth.schemes(),
            price_per_call: price_of(app, s.price),
            moves_funds: s.moves_funds,
        })
        .collect();
    let models = CATALOG
        .iter()
        .filter(|m| m.listed)
        .map(|m| ModelOffer {
            id: catalog::prefixed(m.id),
            status: m.status.as_str(),
            context_length: m.context_length,
            price_per_million_tokens: app.prices.per_million_tokens.get(m.id).map(u64::to_string),
        })
        .collect();
    let x402 = app.x402.settings().map(|s| X402Terms {
        network: s.network,
        asset: s.asset.to_string(),
        price_per_call: s.price.to_string(),
        manifest: format!("{base}/.well-known/x402"),
    });
    let mut rails = vec!["internal-credit"];
    if x402.is_some() {
        rails.push("x402");
    }
    let swap_mints = swaps
        .map(|a| {
            a.config
                .mints
                .iter()
                .map(|(mint, m)| {
                    let mint_info = SwapMint {
                        symbol: m.symbol.clone(),
                        decimals: m.decimals,
                        min_amount: m.min_amount.to_string(),
                        max_amount: m.max_amount.to_string(),
                        buckets: m.buckets.iter().map(u64::to_string).collect(),
                    };
                    (mint.clone(), mint_info)
                })
                .collect()
        })
        .unwrap_or_default();
    Capabilities {
        name: app.discovery.name.clone(),
        version: super::card::CARD_VERSION,
        network: swaps.map_or("mainnet", |a| a.config.network.as_str()).to_string(),
        routes,
        models,
        payments: Payments { rails, currency: CALL_CURRENCY, x402 },
        limits: Limits {
            agent_max_iterations: agent::tool_loop::MAX_ITERATIONS,
            private_body_bytes: crate::http::body::MAX_PRIVATE_BODY,
            requests_per_minute_per_key: app.rate_limiter.config.per_key_per_minute,
            requests_per_minute_per_address: app.rate_limiter.config.per_address_per_minute,
            swap_mints,
        },
        privacy: Privacy {
            tee: "intel-tdx",
            attestation: format!("{base}/tee/attestation"),
            receipts: format!("{base}/attestation/{{address}}"),
            receipt_version: "v2",
            end_to_end_encryption: "HPKE (RFC 9180) to the attested enclave key; replies sealed back to the client",
            enclave_held_swap_keys: swaps.is_some(),
            denomination_buckets: swaps.is_some_and(|a| a.config.mints.values().any(|m| !m.buckets.is_empty())),
        },
        discovery: Discovery {
            agent_card: format!("{base}/.well-known/agent-card.json"),
            openapi: format!("{base}/agents/v1/openapi.json"),
            openapi_all: format!("{base}/openapi.json"),
            mcp_http: format!("{base}/mcp/v1"),
            x402_manifest: format!("{base}/.well-known/x402"),
        },
    }
}

#[utoipa::path(get, path = "/agents/v1/capabilities", tag = "discovery",
    summary = "What an agent can do here today: routes (Live/Soon, auth, price), models, payment rails, limits, privacy",
    responses((status = 200, body = Capabilities), (status = 304, description = "`If-None-Match` matched the `ETag`")))]
pub async fn handle(State(app): State<App>, headers: HeaderMap) -> Response {
    super::cached_json(&app, &headers, &capabilities(&app))
}
