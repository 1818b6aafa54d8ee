//! Public receipt lookups (contract §4.2): by address, by ciphertext hash, and by commit
//! transaction, which re-derives the address from the hash in the commit's instruction data.

use axum::extract::{Path, State};
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use shared::address::{Address, receipt_address};
use shared::receipt::decode_hex32;

use crate::error::{ErrorBody, RelayError};
use crate::state::App;
use crate::store::StoredReceipt;

pub async fn cors_open(mut response: Response) -> Response {
    response.headers_mut().insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
    response
}

fn receipt_response(stored: Option<StoredReceipt>) -> Result<Response, RelayError> {
    let stored = stored.ok_or_else(|| RelayError::NotFound("no receipt for this key"))?;
    Ok(([(header::CONTENT_TYPE, "application/json")], stored.receipt_json).into_response())
}

#[utoipa::path(get, path = "/attestation/{address}", tag = "receipts", summary = "A receipt by its ledger address (contract §2.6)",
    params(("address" = String, Path, description = "base58 of 32 bytes")),
    responses((status = 200, body = shared::receipt::Receipt), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody),
              (status = "default", body = ErrorBody)))]
pub async fn by_address(State(app): State<App>, Path(address): Path<String>) -> Result<Response, RelayError> {
    let address =
        Address::parse(&address).ok_or_else(|| RelayError::BadRequest("address must be base58 of 32 bytes".into()))?;
    receipt_response(app.store.receipt_by_address(&address.to_string()).await?)
}

#[utoipa::path(get, path = "/attestation/by-hash/{hash}", tag = "receipts", summary = "A receipt by its ciphertext hash",
    params(("hash" = String, Path, description = "sha256 of the envelope's ciphertext, 64 hex characters")),
    responses((status = 200, body = shared::receipt::Receipt), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody),
              (status = "default", body = ErrorBody)))]
pub async fn by_hash(State(app): State<App>, Path(hash): Path<String>) -> Result<Response, RelayError> {
    let hash = decode_hex32(&hash.to_ascii_lowercase())
        .ok_or_else(|| RelayError::BadRequest("encryptedPromptHash must be 64 hex characters".into()))?;
    receipt_response(app.store.receipt_by_hash(&hex::encode(hash)).await?)
}

#[utoipa::path(get, path = "/attestation/by-tx/{signature}", tag = "receipts",
    summary = "A receipt by its commit transaction: the address is re-derived from the transaction's data",
    params(("signature" = String, Path, description = "base58 of 64 bytes")),
    responses((status = 200, body = shared::receipt::Receipt), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody),
              (status = "default", body = ErrorBody)))]
pub async fn by_tx(State(app): State<App>, Path(signature): Path<String>) -> Result<Response, RelayError> {
    let signature_bytes = shared::ledger::parse_id(&signature)
        .ok_or_else(|| RelayError::BadRequest("signature must be base58 of 64 bytes".into()))?;
    let canonical = shared::ledger::format_id(&signature_bytes);
    let tx = app.store.commit_by_signature(&canonical).await?.ok_or_else(|| RelayError::NotFound("no such commit"))?;
    // Trust nothing stored: re-verify the commit and re-derive the address from its data.
    if shared::ledger::anchor::parse_and_verify(&tx).is_ok() {
        return Err(RelayError::NotFound("this transaction anchors the log; see /log/v1/anchors"));
    }
    let commit = shared::ledger::parse_and_verify(&tx).map_err(|e| {
        tracing::error!(error = %e, "stored commit does not verify");
        RelayError::Internal
    })?;
    if commit.payer != app.commits.public_key() || commit.program_id != *app.commits.program_id() {
        tracing::error!("stored commit was not made by this ledger");
        return Err(RelayError::Internal);
    }
    let address = receipt_address(&commit.prompt_hash, &commit.program_id);
    let stored = app.store.receipt_by_address(&address.to_string()).await?;
    if stored.as_ref().is_some_and(|s| s.tx_signature != canonical) {
        tracing::error!("receipt and commit disagree");
        return Err(RelayError::Internal);
    }
    receipt_response(stored)
}
