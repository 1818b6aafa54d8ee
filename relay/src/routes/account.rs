//! `/api/v1` account reads (contract §4.1; shapes not shown there, decided in docs/billing.md).

use axum::Json;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use serde_json::{Value, json};
use shared::wire::codes;

use crate::accounts::AccountError;

use crate::app::App;
use crate::error::ApiError;

/// `GET /api/v1/balance`: `{keyId, balances: [{currency, amount}]}`, amounts as strings of
/// base units (contract §4 convention).
pub async fn balance(State(app): State<App>, headers: HeaderMap) -> Result<Json<Value>, ApiError> {
    let key_id = app.keys.check(&headers, "account").await?.key_id;
    let balances = crate::billing::balances(&app.store, &key_id).await.map_err(|e| {
        tracing::error!(error = %e, "balance read failed");
        ApiError::internal()
    })?;
    let list: Vec<Value> = balances.into_iter().map(|(c, a)| json!({"currency": c, "amount": a.to_string()})).collect();
    Ok(Json(json!({"keyId": key_id, "balances": list})))
}

#[derive(serde::Deserialize)]
pub struct UsageQuery {
    limit: Option<i64>,
    /// The `nextCursor` of the previous page.
    cursor: Option<String>,
}

/// `GET /api/v1/usage?limit=&cursor=`: the key's paid calls, newest first, with `nextCursor`
/// while more remain (docs/billing.md).
pub async fn usage(
    State(app): State<App>,
    headers: HeaderMap,
    axum::extract::Query(query): axum::extract::Query<UsageQuery>,
) -> Result<Json<Value>, ApiError> {
    let key_id = app.keys.check(&headers, "account").await?.key_id;
    let limit = query.limit.unwrap_or(50);
    if !(1..=200).contains(&limit) {
        return Err(ApiError::bad_request("limit must be between 1 and 200"));
    }
    let cursor = match query.cursor.as_deref() {
        None => None,
        Some(c) => {
            let (at, id) = c.split_once('_').ok_or_else(|| ApiError::bad_request("cursor is not one we issued"))?;
            let at: i64 = at.parse().map_err(|_| ApiError::bad_request("cursor is not one we issued"))?;
            Some((at, id.to_string()))
        }
    };
    let rows =
        crate::billing::usage_page(&app.store, &key_id, limit + 1, cursor.as_ref().map(|(a, i)| (*a, i.as_str())))
            .await
            .map_err(|e| {
                tracing::error!(error = %e, "usage read failed");
                ApiError::internal()
            })?;
    let more = rows.len() as i64 > limit;
    let page: Vec<_> = rows.into_iter().take(limit as usize).collect();
    let next = match (more, page.last()) {
        (true, Some(last)) => json!(format!("{}_{}", last.created_at, last.id)),
        _ => Value::Null,
    };
    Ok(Json(json!({"keyId": key_id, "data": page, "nextCursor": next})))
}

/// `GET /api/v1/models` (contract §2.1): the listed catalog models with their prefixed ids,
/// context length, status and price per million tokens (stablecoin base units, as a string).
pub async fn models(State(app): State<App>, headers: HeaderMap) -> Result<Json<Value>, ApiError> {
    app.keys.check(&headers, "account").await?;
    let data: Vec<Value> = shared::catalog::CATALOG
        .iter()
        .filter(|m| m.listed)
        .map(|m| {
            json!({
                "id": shared::catalog::prefixed(m.id),
                "object": "model",
                "ownedBy": shared::catalog::PROVIDER,
                "contextLength": m.context_length,
                "status": m.status.as_str(),
                "pricePerMillionTokens": app.prices.get(m.id).map(|p| json!({"amount": p.to_string(), "currency": "usdc"})),
            })
        })
        .collect();
    Ok(Json(json!({"object": "list", "data": data})))
}

fn account_error(e: AccountError) -> ApiError {
    match e {
        AccountError::BadWallet | AccountError::BadSignatureFormat => ApiError::bad_request(e.to_string()),
        AccountError::BadChallenge | AccountError::BadSignature => ApiError::unauthorized(e.to_string()),
        AccountError::NotFound => ApiError::not_found(e.to_string()),
        AccountError::Store(err) => err.into(),
    }
}

#[derive(serde::Deserialize)]
pub struct ChallengeRequest {
    wallet: String,
}

/// `POST /api/v1/auth/challenge {wallet}` → `{nonce, message, expiresAt}`: sign `message`.
pub async fn challenge(State(app): State<App>, body: axum::body::Bytes) -> Result<Json<Value>, ApiError> {
    let req: ChallengeRequest =
        serde_json::from_slice(&body).map_err(|_| ApiError::bad_request("body must be {\"wallet\": \"<base58>\"}"))?;
    let (nonce, message, expires_at) =
        crate::accounts::challenge(&app.store, &req.wallet, crate::unix_now()).await.map_err(account_error)?;
    Ok(Json(json!({"nonce": nonce, "message": message, "expiresAt": shared::time::rfc3339(expires_at as u64)})))
}

#[derive(serde::Deserialize)]
pub struct SignInRequest {
    wallet: String,
    nonce: String,
    /// ed25519 signature of the challenge message, base58.
    signature: String,
}

/// `POST /api/v1/auth/verify {wallet, nonce, signature}` → 201 `{apiKey, keyId, scopes}`.
/// The key is shown once; only its hash is stored.
pub async fn sign_in(State(app): State<App>, body: axum::body::Bytes) -> Result<(StatusCode, Json<Value>), ApiError> {
    let req: SignInRequest =
        serde_json::from_slice(&body).map_err(|_| ApiError::bad_request("body must be {wallet, nonce, signature}"))?;
    let (api_key, key_id) =
        crate::accounts::sign_in(&app.store, &req.wallet, &req.nonce, &req.signature, crate::unix_now())
            .await
            .map_err(account_error)?;
    Ok((StatusCode::CREATED, Json(json!({"apiKey": api_key, "keyId": key_id, "scopes": crate::accounts::ALL_SCOPES}))))
}

async fn wallet_caller(app: &App, headers: &HeaderMap) -> Result<String, ApiError> {
    let caller = app.keys.check(headers, "account").await?;
    caller.wallet.ok_or_else(|| ApiError::new(403, codes::FORBIDDEN, "operator keys from configuration have no wallet"))
}

/// `GET /api/v1/keys`: the calling wallet's keys, without secrets.
pub async fn list_keys(State(app): State<App>, headers: HeaderMap) -> Result<Json<Value>, ApiError> {
    let wallet = wallet_caller(&app, &headers).await?;
    let keys = crate::accounts::list(&app.store, &wallet).await.map_err(account_error)?;
    let list: Vec<Value> = keys
        .into_iter()
        .map(|k| json!({"keyId": k.id, "scopes": k.scopes, "createdAt": k.created_at, "revokedAt": k.revoked_at}))
        .collect();
    Ok(Json(json!({"wallet": wallet, "keys": list})))
}

/// `DELETE /api/v1/keys/{id}`: revoke one of the calling wallet's keys.
pub async fn revoke_key(
    State(app): State<App>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let wallet = wallet_caller(&app, &headers).await?;
    crate::accounts::revoke(&app.store, &wallet, &id, crate::unix_now()).await.map_err(account_error)?;
    Ok(Json(json!({"keyId": id, "revoked": true})))
}

/// `POST /api/v1/keys/{id}/rotate`: a new secret for the same key id (balance kept).
pub async fn rotate_key(
    State(app): State<App>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let wallet = wallet_caller(&app, &headers).await?;
    let api_key = crate::accounts::rotate(&app.store, &wallet, &id).await.map_err(account_error)?;
    Ok(Json(json!({"apiKey": api_key, "keyId": id})))
}
