//! Owner requests kept by their idempotency key (DESIGN §13). The owner's signed nonce names
//! one request: the answer it got is kept with the order or session it started, in the same
//! database transaction, so the same signed bytes sent again (after a lost answer) get the same
//! answer and move nothing new, and the same nonce over another body is `422
//! idempotency_key_reused`. `GET /agents/v1/wallets/{id}/requests/{nonce}` reads it.
//!
//! The enclave keeps the same rule on its side (ids derived from the nonce, a debited order
//! found again in the book), so a relay that lost or ignores this table still moves nothing
//! twice.

use axum::Json;
use axum::extract::{Path, State};
use serde::Serialize;
use serde_json::Value;
use sqlx::Row;

use super::routes::OwnedWallet;
use crate::http::error::{ErrorBody, RelayError};
use crate::state::AgentsState;
use crate::store::{Store, StoreError};

/// A request to keep, in the caller's transaction.
pub struct Kept<'a> {
    pub wallet_id: &'a str,
    pub nonce: &'a str,
    pub operation: &'a str,
    pub body_sha256: &'a str,
    pub request_id: &'a str,
    pub answer: &'a Value,
}

impl Kept<'_> {
    pub async fn insert(&self, tx: &mut sqlx::Transaction<'static, sqlx::Any>) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO wallet_requests (wallet_id, nonce, operation, body_sha256, request_id, answer_json, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind(self.wallet_id)
        .bind(self.nonce)
        .bind(self.operation)
        .bind(self.body_sha256)
        .bind(self.request_id)
        .bind(self.answer.to_string())
        .bind(crate::unix_now())
        .execute(&mut **tx)
        .await?;
        Ok(())
    }
}

/// A kept request, as `GET …/requests/{nonce}` shows it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct KeptRequest {
    pub wallet_id: String,
    pub nonce: String,
    /// `withdraw`, `encrypt`, `swap` or `shield`.
    pub operation: String,
    /// Hex sha256 of the request body the owner signed.
    pub body_sha256: String,
    /// The order id (withdraw) or session id, derived from the nonce by the enclave.
    pub request_id: String,
    /// The answer the request got.
    #[schema(value_type = Object)]
    pub answer: Value,
    pub created_at: i64,
}

pub async fn find(store: &Store, wallet_id: &str, nonce: &str) -> Result<Option<KeptRequest>, RelayError> {
    let row = sqlx::query(
        "SELECT operation, body_sha256, request_id, answer_json, created_at FROM wallet_requests \
         WHERE wallet_id = $1 AND nonce = $2",
    )
    .bind(wallet_id)
    .bind(nonce)
    .fetch_optional(store.pool())
    .await
    .map_err(StoreError::from)?;
    let Some(r) = row else { return Ok(None) };
    let answer: String = r.try_get("answer_json").map_err(StoreError::from)?;
    Ok(Some(KeptRequest {
        wallet_id: wallet_id.to_string(),
        nonce: nonce.to_string(),
        operation: r.try_get("operation").map_err(StoreError::from)?,
        body_sha256: r.try_get("body_sha256").map_err(StoreError::from)?,
        request_id: r.try_get("request_id").map_err(StoreError::from)?,
        answer: serde_json::from_str(&answer).map_err(|_| StoreError::Corrupt("a kept answer"))?,
        created_at: r.try_get("created_at").map_err(StoreError::from)?,
    }))
}

/// The key an owner-signed request is kept under: its nonce and its body's hex sha256.
pub fn key_of(auth: Option<&shared::privacy::OwnerAuth>, body: &[u8]) -> Option<(String, String)> {
    auth.map(|a| (a.nonce.clone(), hex::encode(shared::sha256(body))))
}

/// The answer kept for this request when it was carried out already; `422` when its nonce
/// carried another body or operation.
pub async fn earlier(
    store: &Store,
    wallet_id: &str,
    key: Option<&(String, String)>,
    operation: &str,
) -> Result<Option<Value>, RelayError> {
    let Some((nonce, body_sha256)) = key else { return Ok(None) };
    match find(store, wallet_id, nonce).await? {
        None => Ok(None),
        Some(kept) if kept.body_sha256 == *body_sha256 && kept.operation == operation => Ok(Some(kept.answer)),
        Some(_) => Err(RelayError::IdempotencyKeyReused),
    }
}

#[utoipa::path(get, path = "/agents/v1/wallets/{id}/requests/{nonce}", tag = "agents",
    summary = "An owner-signed request by its nonce (its idempotency key): the answer it got",
    security(("ApiKey" = [])),
    params(("id" = String, Path, description = "The wallet id (uuid)"),
           ("nonce" = String, Path, description = "The x-owner-nonce the request was signed with")),
    responses((status = 200, body = KeptRequest), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
              (status = 404, body = ErrorBody), (status = "default", body = ErrorBody)))]
pub async fn get(
    State(api): State<AgentsState>,
    OwnedWallet { wallet, .. }: OwnedWallet,
    Path((_, nonce)): Path<(String, String)>,
) -> Result<Json<KeptRequest>, RelayError> {
    let kept = find(&api.store, &wallet.id, &nonce).await?.ok_or(RelayError::NotFound("no request with this nonce"))?;
    Ok(Json(kept))
}
