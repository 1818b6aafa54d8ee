//! Public receipt lookups (contract §4.2): by address, by ciphertext hash, and by commit
//! transaction (in the commit log, or in `solana` ledger mode on the chain), which re-derives
//! the address from the hash in the commit's instruction data; and a receipt's ledger status.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use shared::address::{Address, receipt_address};
use shared::api::LedgerStatus;
use shared::receipt::decode_hex32;

use crate::http::error::{ErrorBody, RelayError};
use crate::receipts::Receipts;
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
pub async fn by_address(
    State(receipts): State<Arc<Receipts>>,
    Path(address): Path<String>,
) -> Result<Response, RelayError> {
    let address =
        Address::parse(&address).ok_or_else(|| RelayError::BadRequest("address must be base58 of 32 bytes".into()))?;
    receipt_response(receipts.store.receipt_by_address(&address.to_string()).await?)
}

#[utoipa::path(get, path = "/attestation/by-hash/{hash}", tag = "receipts", summary = "A receipt by its ciphertext hash",
    params(("hash" = String, Path, description = "sha256 of the envelope's ciphertext, 64 hex characters")),
    responses((status = 200, body = shared::receipt::Receipt), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody),
              (status = "default", body = ErrorBody)))]
pub async fn by_hash(State(receipts): State<Arc<Receipts>>, Path(hash): Path<String>) -> Result<Response, RelayError> {
    let hash = decode_hex32(&hash.to_ascii_lowercase())
        .ok_or_else(|| RelayError::BadRequest("encryptedPromptHash must be 64 hex characters".into()))?;
    receipt_response(receipts.store.receipt_by_hash(&hex::encode(hash)).await?)
}

#[utoipa::path(get, path = "/attestation/by-tx/{signature}", tag = "receipts",
    summary = "A receipt by its commit transaction: the address is re-derived from the transaction's data",
    params(("signature" = String, Path, description = "base58 of 64 bytes")),
    responses((status = 200, body = shared::receipt::Receipt), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody),
              (status = "default", body = ErrorBody)))]
pub async fn by_tx(
    State(receipts): State<Arc<Receipts>>,
    Path(signature): Path<String>,
) -> Result<Response, RelayError> {
    let signature_bytes = shared::ledger::parse_id(&signature)
        .ok_or_else(|| RelayError::BadRequest("signature must be base58 of 64 bytes".into()))?;
    let canonical = shared::ledger::format_id(&signature_bytes);
    let (tx, on_chain) = match receipts.store.commit_by_signature(&canonical).await? {
        Some(tx) => (tx, false),
        None => (chain_transaction(&receipts, &canonical).await?, true),
    };
    // Trust nothing stored or fetched: re-verify the commit and re-derive the address from its data.
    if shared::ledger::anchor::parse_and_verify(&tx).is_ok() {
        return Err(RelayError::NotFound("this transaction anchors the log; see /log/v1/anchors"));
    }
    let commit = match shared::ledger::parse_and_verify(&tx) {
        Ok(c) => c,
        Err(_) if on_chain => return Err(RelayError::NotFound("this transaction is not a receipt commit")),
        Err(e) => {
            tracing::error!(error = %e, "stored commit does not verify");
            return Err(RelayError::Internal("a stored commit does not verify"));
        }
    };
    if commit.payer != receipts.commits.public_key() || commit.program_id != *receipts.commits.program_id() {
        if on_chain {
            return Err(RelayError::NotFound("this transaction was not made by this relay's ledger key"));
        }
        tracing::error!("stored commit was not made by this ledger");
        return Err(RelayError::Internal("a stored commit was not made by this ledger"));
    }
    let address = receipt_address(&commit.prompt_hash, &commit.program_id);
    let stored = receipts.store.receipt_by_address(&address.to_string()).await?;
    // A stored commit names its receipt's row; a chain transaction is a resend of that
    // commit on a real blockhash, so only its data (the address) has to agree.
    if !on_chain && stored.as_ref().is_some_and(|s| s.tx_signature != canonical) {
        tracing::error!("receipt and commit disagree");
        return Err(RelayError::Internal("a receipt and its commit disagree"));
    }
    receipt_response(stored)
}

/// In `solana` ledger mode, a commit by its chain signature: the transaction as the chain
/// holds it, if it landed without an error.
async fn chain_transaction(receipts: &Receipts, signature: &str) -> Result<Vec<u8>, RelayError> {
    let writer = receipts.ledger.as_ref().ok_or_else(|| RelayError::NotFound("no such commit"))?;
    let found = chain::Chain::transaction(writer.chain(), signature).await.map_err(RelayError::Chain)?;
    match found {
        Some(t) if t.meta.as_ref().is_some_and(|m| m.err.is_none()) => Ok(t.transaction),
        Some(_) => Err(RelayError::NotFound("this transaction failed on the ledger")),
        None => Err(RelayError::NotFound("no such commit")),
    }
}

#[utoipa::path(get, path = "/attestation/{address}/ledger", tag = "receipts",
    summary = "Where a receipt's commit is: pending until it lands on the ledger",
    params(("address" = String, Path, description = "base58 of 32 bytes")),
    responses((status = 200, body = LedgerStatus), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody),
              (status = "default", body = ErrorBody)))]
pub async fn ledger_status(
    State(receipts): State<Arc<Receipts>>,
    Path(address): Path<String>,
) -> Result<Response, RelayError> {
    let address =
        Address::parse(&address).ok_or_else(|| RelayError::BadRequest("address must be base58 of 32 bytes".into()))?;
    let address = address.to_string();
    let stored = receipts
        .store
        .receipt_by_address(&address)
        .await?
        .ok_or_else(|| RelayError::NotFound("no receipt for this key"))?;
    let status = ledger_status_of(&receipts, &address, stored.tx_signature).await?;
    Ok(axum::Json(status).into_response())
}

/// The ledger status of commit `commit_signature`.
pub async fn ledger_status_of(
    receipts: &Receipts,
    address: &str,
    commit_signature: String,
) -> Result<LedgerStatus, RelayError> {
    if !receipts.commits.queues_for_chain() {
        let landed_at = crate::receipts::outbox::commit_time(receipts.store.pool(), &commit_signature).await?;
        return Ok(LedgerStatus {
            address: address.to_string(),
            ledger_signature: Some(commit_signature.clone()),
            commit_signature,
            ledger: "embedded".into(),
            status: "landed".into(),
            landed_at,
        });
    }
    let progress = crate::receipts::outbox::progress(receipts.store.pool(), &commit_signature).await?;
    let landed = progress.as_ref().filter(|p| p.state == crate::receipts::outbox::State::Landed);
    Ok(LedgerStatus {
        address: address.to_string(),
        commit_signature,
        ledger: "solana".into(),
        status: if landed.is_some() { "landed" } else { "pending" }.into(),
        ledger_signature: landed.and_then(|p| p.chain_signature.clone()),
        landed_at: landed.and_then(|p| p.landed_at),
    })
}
