//! `GET /agents/v1/anonymity-set` (contract §2.7 gap, decided in docs/swaps.md): how many
//! fundings of each standard denomination of a mint landed in a recent window, from the
//! sessions this relay recorded. Free and public: it reveals only counts per bucket.
//!
//! Query: `mint` (required), `amount` (optional: the answer then also says which bucket that
//! amount falls in and how many share it), `windowHours` (optional, 1 to 168).

use std::collections::HashMap;

use axum::Json;
use axum::extract::{Query, State};
use serde::Serialize;
use shared::amount::Amount;
use shared::wire::codes;

use super::buckets;
use super::params::Fields;
use crate::agents::sessions;
use crate::http::error::{ErrorBody, RelayError};
use crate::state::AgentsState;

const MAX_WINDOW_HOURS: u64 = 168;

#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AnonymitySet {
    pub mint: String,
    pub symbol: String,
    pub window_hours: u64,
    /// ISO 8601: the window's start.
    pub since: String,
    pub buckets: Vec<BucketCount>,
    /// Set when `amount` was asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requested: Option<Requested>,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct BucketCount {
    /// Base units.
    pub amount: String,
    pub label: String,
    /// Fundings of exactly this amount in the window.
    pub count: i64,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Requested {
    pub amount: String,
    pub bucketed: bool,
    pub nearest_bucket: String,
    pub bucket_label: String,
    /// Fundings of exactly the asked amount in the window: an amount off the buckets
    /// usually stands alone.
    pub count: i64,
}

#[utoipa::path(get, path = "/agents/v1/anonymity-set", tag = "agents",
    summary = "Fundings per denomination bucket of a mint in a recent window (docs/swaps.md)",
    params(("mint" = String, Query, description = "A mint the service swaps (base58)"),
           ("amount" = Option<String>, Query, description = "Also say which bucket this amount falls in", pattern = "^[1-9][0-9]{0,19}$"),
           ("windowHours" = Option<u64>, Query, description = "1 to 168", minimum = 1, maximum = 168)),
    responses((status = 200, body = AnonymitySet), (status = 400, body = ErrorBody),
              (status = 501, body = ErrorBody), (status = "default", body = ErrorBody)))]
pub async fn handle(
    State(api): State<AgentsState>,
    Query(query): Query<HashMap<String, String>>,
) -> Result<Json<AnonymitySet>, RelayError> {
    let fields = Fields::from_query(query);
    fields.require(&["mint"])?;
    let agents = api.configured()?;
    let mint = fields.mint("mint")?;
    let config = agents.mint("mint", &mint)?;
    let window_hours = match fields.get("windowHours") {
        None => agents.config.anonymity_window_hours,
        Some(text) => text.parse::<u64>().ok().filter(|h| (1..=MAX_WINDOW_HOURS).contains(h)).ok_or_else(|| {
            RelayError::input(
                codes::INVALID_FIELD,
                format!("`windowHours` must be an integer from 1 to {MAX_WINDOW_HOURS}"),
            )
        })?,
    };
    let amount = match fields.get("amount") {
        Some(_) => Some(fields.amount("amount")?),
        None => None,
    };
    let since = crate::unix_now() - (window_hours * 3600) as i64;
    let mint_text = mint.to_string();
    let mut counts = Vec::with_capacity(config.buckets.len());
    for bucket in &config.buckets {
        let count = sessions::fundings(&api.store, &mint, Amount(*bucket), since).await?;
        counts.push(BucketCount { amount: bucket.to_string(), label: buckets::label(*bucket, config), count });
    }
    let requested = match amount {
        None => None,
        Some(a) => {
            let b = buckets::bucket(a, config);
            let count = sessions::fundings(&api.store, &mint, Amount(a), since).await?;
            Some(Requested {
                amount: a.to_string(),
                bucketed: b.as_ref().is_some_and(|b| b.bucketed),
                nearest_bucket: b.as_ref().map_or(a, |b| b.nearest).to_string(),
                bucket_label: b.map_or_else(|| buckets::label(a, config), |b| b.label),
                count,
            })
        }
    };
    Ok(Json(AnonymitySet {
        mint: mint_text,
        symbol: config.symbol.clone(),
        window_hours,
        since: shared::time::rfc3339(since.max(0) as u64),
        buckets: counts,
        requested,
    }))
}
