//! Forwarding a sealed chat to the enclave and keeping its receipt: one implementation for
//! every private chat route (`/tee/process`, `/api/v1/chat/completions`, the x402 route, and
//! encrypted `/agent` for the receipt part).

use axum::body::Bytes;
use serde_json::Value;
use shared::receipt::Receipt;
use shared::wire::{ProcessRequest, ProcessResponse, codes};

use crate::app::App;
use crate::error::ApiError;
use crate::ledger::LedgerError;

fn unexpected() -> ApiError {
    ApiError::new(502, codes::ENCLAVE_ERROR, "the enclave answered with an unexpected body")
}

/// Posts `request` to the enclave's `path` and returns its 200 body, or the error it named
/// (its status and a known code; anything else is `enclave_error`), or `tee_unreachable`.
pub async fn post_to_enclave(app: &App, path: &str, request: &ProcessRequest) -> Result<Bytes, ApiError> {
    let forward = Bytes::from(serde_json::to_vec(request).map_err(|_| ApiError::internal())?);
    let answer = app.tee.post_json(path, forward).await.map_err(|_| ApiError::tee_unreachable(&app.tee.endpoint))?;
    if answer.status == 200 {
        return Ok(answer.body);
    }
    let refusal: Value = serde_json::from_slice(&answer.body).map_err(|_| unexpected())?;
    let code = refusal.get("error").and_then(Value::as_str).ok_or_else(unexpected)?;
    let code = codes::known(code).unwrap_or(codes::ENCLAVE_ERROR);
    let message: String = refusal
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("the enclave refused the request")
        .chars()
        .take(300)
        .collect();
    let status = if (400..600).contains(&answer.status) { answer.status } else { 502 };
    Err(ApiError::new(status, code, message))
}

/// Checks that `receipt` verifies and is for the ciphertext the relay forwarded, then commits
/// it to the ledger; returns the commit's signature. Nothing is stored unless it checks out.
pub async fn commit_receipt(app: &App, receipt: &Receipt, prompt_hash: &[u8; 32]) -> Result<String, ApiError> {
    if receipt.verify(app.ledger.program_id()).map(|v| v.body.prompt_hash) != Ok(*prompt_hash) {
        return Err(ApiError::new(502, codes::ENCLAVE_ERROR, "the enclave returned a receipt that does not verify"));
    }
    match app.ledger.commit(receipt, prompt_hash, crate::unix_now()).await {
        Ok(signature) => Ok(signature),
        Err(LedgerError::Duplicate) => {
            Err(ApiError::new(409, codes::REPLAY_DETECTED, "a receipt for this ciphertext already exists"))
        }
        Err(e) => {
            tracing::error!(error = %e, "receipt commit failed");
            Err(ApiError::internal())
        }
    }
}

/// A chat through the enclave (`path` is `/process` or `/chat/completions`): forward, check
/// and commit the receipt. Returns the enclave's answer and the commit's signature.
pub async fn chat(
    app: &App,
    path: &str,
    request: &ProcessRequest,
    prompt_hash: &[u8; 32],
) -> Result<(ProcessResponse, String), ApiError> {
    let body = post_to_enclave(app, path, request).await?;
    let response: ProcessResponse = serde_json::from_slice(&body).map_err(|_| unexpected())?;
    let signature = commit_receipt(app, &response.receipt, prompt_hash).await?;
    Ok((response, signature))
}

/// The explorer link of a commit.
pub fn explorer_url(app: &App, signature: &str) -> String {
    format!("{}/attestation/by-tx/{signature}", app.public_url)
}
