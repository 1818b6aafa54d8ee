//! Wallet sign-in and key management (`/api/v1/auth/*`, `/api/v1/keys*`; shapes in
//! docs/billing.md).

use axum::Json;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};

use super::sign_in::{self, Origin};
use crate::accounts::keys::{Authorized, Caller, Keys};
use crate::http::error::{ErrorBody, RelayError};
use crate::store::Store;

#[derive(Deserialize, utoipa::ToSchema)]
pub struct ChallengeRequest {
    /// The wallet's address (base58).
    wallet: String,
    /// Scopes the key will hold (`chat`, `account`, `swap`, `keys`); default all but `keys`.
    #[serde(default)]
    scopes: Option<Vec<String>>,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Challenge {
    pub nonce: String,
    /// The text the wallet signs.
    pub message: String,
    pub expires_at: String,
}

/// `POST /api/v1/auth/challenge {wallet}` → `{nonce, message, expiresAt}`: sign `message`.
#[utoipa::path(post, path = "/api/v1/auth/challenge", tag = "accounts", summary = "A sign-in challenge for a wallet to sign",
    request_body = ChallengeRequest,
    responses((status = 200, body = Challenge), (status = 400, body = ErrorBody), (status = "default", body = ErrorBody)))]
pub async fn challenge(
    State(store): State<Store>,
    State(origin): State<Origin>,
    body: Body,
) -> Result<Json<Challenge>, RelayError> {
    let body = crate::http::body::read(body, crate::http::body::MAX_SMALL_BODY).await?;
    let req: ChallengeRequest = serde_json::from_slice(&body)
        .map_err(|_| RelayError::BadRequest("body must be {\"wallet\": \"<base58>\"}".into()))?;
    let scopes = sign_in::scopes(req.scopes.as_deref())?;
    let (nonce, message, expires_at) =
        sign_in::challenge(&store, &origin, &req.wallet, &scopes, crate::unix_now()).await?;
    Ok(Json(Challenge { nonce, message, expires_at: shared::time::rfc3339(expires_at.max(0) as u64) }))
}

#[derive(Deserialize, utoipa::ToSchema)]
pub struct SignInRequest {
    wallet: String,
    nonce: String,
    /// ed25519 signature of the challenge message, base58.
    signature: String,
    /// The scopes of the challenge (they are in the signed message).
    #[serde(default)]
    scopes: Option<Vec<String>>,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct IssuedKey {
    pub api_key: String,
    pub key_id: String,
    pub scopes: String,
}

/// `POST /api/v1/auth/verify {wallet, nonce, signature}` → 201 `{apiKey, keyId, scopes}`.
/// The key is shown once; only its hash is stored.
#[utoipa::path(post, path = "/api/v1/auth/verify", tag = "accounts", summary = "Sign in: the signed challenge gets an API key (shown once)",
    request_body = SignInRequest,
    responses((status = 201, body = IssuedKey), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
              (status = "default", body = ErrorBody)))]
pub async fn sign_in(
    State(store): State<Store>,
    State(origin): State<Origin>,
    body: Body,
) -> Result<(StatusCode, Json<IssuedKey>), RelayError> {
    let body = crate::http::body::read(body, crate::http::body::MAX_SMALL_BODY).await?;
    let req: SignInRequest = serde_json::from_slice(&body)
        .map_err(|_| RelayError::BadRequest("body must be {wallet, nonce, signature}".into()))?;
    let scopes = sign_in::scopes(req.scopes.as_deref())?;
    let now = crate::unix_now();
    let (api_key, key_id) =
        sign_in::sign_in(&store, &origin, &req.wallet, &req.nonce, &req.signature, &scopes, now).await?;
    Ok((StatusCode::CREATED, Json(IssuedKey { api_key, key_id, scopes })))
}

/// The signed-in wallet managing its keys (the `keys` scope, which only a sign-in that asked for
/// it grants).
fn signed_in(caller: Caller) -> Result<String, RelayError> {
    caller.wallet.ok_or_else(|| RelayError::Forbidden("operator keys from configuration have no wallet".into()))
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct KeyView {
    pub key_id: String,
    pub scopes: String,
    pub created_at: i64,
    pub revoked_at: Option<i64>,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct KeyList {
    pub wallet: String,
    pub keys: Vec<KeyView>,
}

/// `GET /api/v1/keys`: the calling wallet's keys, without secrets.
#[utoipa::path(get, path = "/api/v1/keys", tag = "accounts", summary = "The calling wallet's keys, without secrets",
    security(("ApiKey" = [])),
    responses((status = 200, body = KeyList), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
              (status = "default", body = ErrorBody)))]
pub async fn list_keys(
    State(store): State<Store>,
    Authorized { caller, .. }: Authorized<Keys>,
) -> Result<Json<KeyList>, RelayError> {
    let wallet = signed_in(caller)?;
    let keys = sign_in::list(&store, &wallet)
        .await?
        .into_iter()
        .map(|k| KeyView { key_id: k.id, scopes: k.scopes, created_at: k.created_at, revoked_at: k.revoked_at })
        .collect();
    Ok(Json(KeyList { wallet, keys }))
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Revoked {
    pub key_id: String,
    pub revoked: bool,
}

/// `DELETE /api/v1/keys/{id}`: revoke one of the calling wallet's keys.
#[utoipa::path(delete, path = "/api/v1/keys/{id}", tag = "accounts", summary = "Revoke one of the calling wallet's keys",
    security(("ApiKey" = [])), params(("id" = String, Path, description = "The key id")),
    responses((status = 200, body = Revoked), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
              (status = 404, body = ErrorBody), (status = "default", body = ErrorBody)))]
pub async fn revoke_key(
    State(store): State<Store>,
    Authorized { caller, .. }: Authorized<Keys>,
    Path(id): Path<String>,
) -> Result<Json<Revoked>, RelayError> {
    let wallet = signed_in(caller)?;
    sign_in::revoke(&store, &wallet, &id, crate::unix_now()).await?;
    Ok(Json(Revoked { key_id: id, revoked: true }))
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Rotated {
    pub api_key: String,
    pub key_id: String,
}

/// `POST /api/v1/keys/{id}/rotate`: a new secret for the same key id (balance kept).
#[utoipa::path(post, path = "/api/v1/keys/{id}/rotate", tag = "accounts", summary = "A new secret for the same key id (the balance stays)",
    security(("ApiKey" = [])), params(("id" = String, Path, description = "The key id")),
    responses((status = 200, body = Rotated), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
              (status = 404, body = ErrorBody), (status = "default", body = ErrorBody)))]
pub async fn rotate_key(
    State(store): State<Store>,
    Authorized { caller, .. }: Authorized<Keys>,
    Path(id): Path<String>,
) -> Result<Json<Rotated>, RelayError> {
    let wallet = signed_in(caller)?;
    let api_key = sign_in::rotate(&store, &wallet, &id).await?;
    Ok(Json(Rotated { api_key, key_id: id }))
}
