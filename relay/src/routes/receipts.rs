//! Public receipt lookups (contract §4.2): by address, by ciphertext hash, and by commit
//! transaction, which re-derives the address from the hash in the commit's instruction data.

use axum::extract::{Path, State};
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use shared::address::{Address, receipt_address};
use shared::receipt::decode_hex32;

use crate::app::App;
use crate::error::ApiError;
use crate::store::StoredReceipt;

pub async fn cors_open(mut response: Response) -> Response {
    response.headers_mut().insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
    response
}

fn receipt_response(stored: Option<StoredReceipt>) -> Result<Response, ApiError> {
    let stored = stored.ok_or_else(|| ApiError::not_found("no receipt for this key"))?;
    Ok(([(header::CONTENT_TYPE, "application/json")], stored.receipt_json).into_response())
}

pub async fn by_address(State(app): State<App>, Path(address): Path<String>) -> Result<Response, ApiError> {
    let address =
        Address::parse(&address).ok_or_else(|| ApiError::bad_request("address must be base58 of 32 bytes"))?;
    receipt_response(app.store.receipt_by_address(&address.to_string()).await?)
}

pub async fn by_hash(State(app): State<App>, Path(hash): Path<String>) -> Result<Response, ApiError> {
    let hash = decode_hex32(&hash.to_ascii_lowercase())
        .ok_or_else(|| ApiError::bad_request("encryptedPromptHash must be 64 hex characters"))?;
    receipt_response(app.store.receipt_by_hash(&hex::encode(hash)).await?)
}

pub async fn by_tx(State(app): State<App>, Path(signature): Path<String>) -> Result<Response, ApiError> {
    let signature_bytes = shared::ledger::parse_id(&signature)
        .ok_or_else(|| ApiError::bad_request("signature must be base58 of 64 bytes"))?;
    let canonical = shared::ledger::format_id(&signature_bytes);
    let tx = app.store.commit_by_signature(&canonical).await?.ok_or_else(|| ApiError::not_found("no such commit"))?;
    // Trust nothing stored: re-verify the commit and re-derive the address from its data.
    let commit = shared::ledger::parse_and_verify(&tx).map_err(|e| {
        tracing::error!(error = %e, "stored commit does not verify");
        ApiError::internal()
    })?;
    if commit.payer != app.ledger.public_key() || commit.program_id != *app.ledger.program_id() {
        tracing::error!("stored commit was not made by this ledger");
        return Err(ApiError::internal());
    }
    let address = receipt_address(&commit.prompt_hash, &commit.program_id);
    let stored = app.store.receipt_by_address(&address.to_string()).await?;
    if stored.as_ref().is_some_and(|s| s.tx_signature != canonical) {
        tracing::error!("receipt and commit disagree");
        return Err(ApiError::internal());
    }
    receipt_response(stored)
}
