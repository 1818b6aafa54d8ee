//! `GET /api/v1/models` (contract §2.1): the listed catalog models with their prefixed ids,
//! context length, status and price per million tokens.

use axum::Json;
use axum::extract::State;
use serde::Serialize;
use shared::catalog::{self, CATALOG, PROVIDER};

use crate::accounts::keys::{Account, Authorized};
use crate::billing::metering::CALL_CURRENCY;
use crate::http::error::RelayError;
use crate::state::App;

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ModelList {
    pub object: &'static str,
    pub data: Vec<Model>,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Model {
    pub id: String,
    pub object: &'static str,
    pub owned_by: &'static str,
    pub context_length: u32,
    pub status: &'static str,
    pub price_per_million_tokens: Option<Price>,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Price {
    /// Stablecoin base units, as a string.
    pub amount: String,
    pub currency: &'static str,
}

#[utoipa::path(get, path = "/api/v1/models", tag = "discovery", summary = "The listed catalog models (contract §2.1)",
    security(("ApiKey" = [])),
    responses((status = 200, body = ModelList), (status = 401, body = crate::http::error::ErrorBody),
              (status = 403, body = crate::http::error::ErrorBody), (status = "default", body = crate::http::error::ErrorBody)))]
pub async fn handle(State(app): State<App>, _: Authorized<Account>) -> Result<Json<ModelList>, RelayError> {
    let data = CATALOG
        .iter()
        .filter(|m| m.listed)
        .map(|m| Model {
            id: catalog::prefixed(m.id),
            object: "model",
            owned_by: PROVIDER,
            context_length: m.context_length,
            status: m.status.as_str(),
            price_per_million_tokens: app
                .prices
                .per_million_tokens
                .get(m.id)
                .map(|p| Price { amount: p.to_string(), currency: CALL_CURRENCY }),
        })
        .collect();
    Ok(Json(ModelList { object: "list", data }))
}
