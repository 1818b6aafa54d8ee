//! `/api/v1` account reads (contract §4.1; shapes not shown there, decided in docs/billing.md).

use axum::Json;
use axum::extract::State;
use axum::http::HeaderMap;
use serde_json::{Value, json};

use crate::app::App;
use crate::error::ApiError;

/// `GET /api/v1/balance`: `{keyId, balances: [{currency, amount}]}`, amounts as strings of
/// base units (contract §4 convention).
pub async fn balance(State(app): State<App>, headers: HeaderMap) -> Result<Json<Value>, ApiError> {
    let key_id = app.keys.check(&headers)?;
    let balances = crate::billing::balances(&app.store, &key_id).await.map_err(|e| {
        tracing::error!(error = %e, "balance read failed");
        ApiError::internal()
    })?;
    let list: Vec<Value> = balances.into_iter().map(|(c, a)| json!({"currency": c, "amount": a.to_string()})).collect();
    Ok(Json(json!({"keyId": key_id, "balances": list})))
}
