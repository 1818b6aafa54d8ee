//! `/api/v1` balance and usage reads (contract §4.1; shapes not shown there, decided in
//! docs/billing.md).

use axum::Json;
use axum::extract::{Query, State};
use serde::{Deserialize, Serialize};

use super::balances::{self, UsageRow};
use crate::accounts::keys::{Account, Authorized};
use crate::http::error::{ErrorBody, RelayError};
use crate::store::Store;

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Amount {
    pub currency: String,
    /// Base units, as a string (contract §4 convention).
    pub amount: String,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Balances {
    pub key_id: String,
    pub balances: Vec<Amount>,
}

/// `GET /api/v1/balance`: `{keyId, balances: [{currency, amount}]}`.
#[utoipa::path(get, path = "/api/v1/balance", tag = "billing", summary = "The key's prepaid balances",
    security(("ApiKey" = [])),
    responses((status = 200, body = Balances), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
              (status = "default", body = ErrorBody)))]
pub async fn balance(
    State(store): State<Store>,
    Authorized { caller, .. }: Authorized<Account>,
) -> Result<Json<Balances>, RelayError> {
    let key_id = caller.key_id;
    let balances = balances::balances(&store, &key_id)
        .await?
        .into_iter()
        .map(|(currency, a)| Amount { currency, amount: a.to_string() })
        .collect();
    Ok(Json(Balances { key_id, balances }))
}

#[derive(Deserialize)]
pub struct UsageQuery {
    limit: Option<String>,
    /// The `nextCursor` of the previous page.
    cursor: Option<String>,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UsagePage {
    pub key_id: String,
    pub data: Vec<UsageRow>,
    pub next_cursor: Option<String>,
}

/// `GET /api/v1/usage?limit=&cursor=`: the key's paid calls, newest first, with `nextCursor`
/// while more remain.
#[utoipa::path(get, path = "/api/v1/usage", tag = "billing", summary = "The key's paid calls, newest first",
    security(("ApiKey" = [])),
    params(("limit" = Option<String>, Query, description = "1 to 200 (default 50)"),
           ("cursor" = Option<String>, Query, description = "The `nextCursor` of the previous page")),
    responses((status = 200, body = UsagePage), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
              (status = 403, body = ErrorBody), (status = "default", body = ErrorBody)))]
pub async fn usage(
    State(store): State<Store>,
    Authorized { caller, .. }: Authorized<Account>,
    Query(query): Query<UsageQuery>,
) -> Result<Json<UsagePage>, RelayError> {
    let key_id = caller.key_id;
    let bad_limit = || RelayError::BadRequest("limit must be an integer between 1 and 200".into());
    let limit: i64 = match query.limit.as_deref() {
        None => 50,
        Some(l) => l.parse().map_err(|_| bad_limit())?,
    };
    if !(1..=200).contains(&limit) {
        return Err(bad_limit());
    }
    let cursor = match query.cursor.as_deref() {
        None => None,
        Some(c) => {
            let bad = || RelayError::BadRequest("cursor is not one we issued".into());
            let (at, id) = c.split_once('_').ok_or_else(bad)?;
            Some((at.parse::<i64>().map_err(|_| bad())?, id.to_string()))
        }
    };
    let rows = balances::usage_page(&store, &key_id, limit + 1, cursor.as_ref().map(|(a, i)| (*a, i.as_str()))).await?;
    let more = rows.len() as i64 > limit;
    let data: Vec<UsageRow> = rows.into_iter().take(limit as usize).collect();
    let next_cursor = match (more, data.last()) {
        (true, Some(last)) => Some(format!("{}_{}", last.created_at, last.id)),
        _ => None,
    };
    Ok(Json(UsagePage { key_id, data, next_cursor }))
}
