//! `/tee/*`: the enclave's key and attestation, and private chat. Ciphertext only.

use axum::Json;
use axum::body::{Body, Bytes};
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use shared::envelope::{Envelope, MAX_ENVELOPE_JSON};
use shared::wire::{OnchainAttestation, ProcessRequest, ProcessResponse, codes};

use crate::app::App;
use crate::error::ApiError;
use crate::ledger::LedgerError;
use crate::tee::TeeAnswer;

/// Largest `/tee/process` body: the largest envelope plus room for the other fields.
pub const MAX_PROCESS_BODY: usize = MAX_ENVELOPE_JSON + 4096;

fn passthrough(answer: TeeAnswer) -> Response {
    let status = StatusCode::from_u16(answer.status).unwrap_or(StatusCode::BAD_GATEWAY);
    (status, [(header::CONTENT_TYPE, "application/json")], answer.body).into_response()
}

pub async fn public_key(State(app): State<App>) -> Response {
    match app.tee.get("/public-key").await {
        Ok(answer) => passthrough(answer),
        Err(_) => ApiError::tee_unreachable(&app.tee.endpoint).into_response(),
    }
}

/// Passes `?nonce=` through after checking its form (the enclave checks it again).
pub async fn attestation(State(app): State<App>, RawQuery(query): RawQuery) -> Response {
    let path = match shared::freshness::nonce_from_query(query.as_deref()) {
        None => "/attestation".to_string(),
        Some(Ok(nonce)) => format!("/attestation?nonce={}", hex::encode(nonce)),
        Some(Err(())) => {
            return ApiError::bad_request("nonce must be 64 hex characters").into_response();
        }
    };
    match app.tee.get(&path).await {
        Ok(answer) => passthrough(answer),
        Err(_) => ApiError::tee_unreachable(&app.tee.endpoint).into_response(),
    }
}

pub async fn process(State(app): State<App>, headers: HeaderMap, body: Body) -> Response {
    match process_inner(&app, &headers, body).await {
        Ok(response) => response,
        Err(e) => e.with_success().into_response(),
    }
}

async fn process_inner(app: &App, headers: &HeaderMap, body: Body) -> Result<Response, ApiError> {
    app.keys.check(headers, "chat").await?;
    let bytes = axum::body::to_bytes(body, MAX_PROCESS_BODY).await.map_err(|_| {
        ApiError::new(413, codes::PAYLOAD_TOO_LARGE, format!("request body exceeds {MAX_PROCESS_BODY} bytes"))
    })?;
    let request: ProcessRequest = serde_json::from_slice(&bytes)
        .map_err(|_| ApiError::bad_request("body must be a JSON object with an `encryptedPrompt` string"))?;
    // Forward only the fields the enclave knows.
    let forward = Bytes::from(serde_json::to_vec(&request).expect("request serialises"));
    let answer =
        app.tee.post_json("/process", forward).await.map_err(|_| ApiError::tee_unreachable(&app.tee.endpoint))?;
    if answer.status != 200 {
        // The enclave's own refusal (e.g. decrypt_failed, replay_detected, gpu_not_configured).
        return match serde_json::from_slice::<serde_json::Value>(&answer.body) {
            Ok(v) if v.get("error").is_some_and(|e| e.is_string()) => Ok(passthrough(answer)),
            _ => Err(ApiError::new(502, codes::ENCLAVE_ERROR, "the enclave answered with an unexpected body")),
        };
    }
    let mut response: ProcessResponse = serde_json::from_slice(&answer.body)
        .map_err(|_| ApiError::new(502, codes::ENCLAVE_ERROR, "the enclave answered with an unexpected body"))?;

    // Check what we store: the receipt must verify and be for the ciphertext we forwarded.
    let prompt_hash = Envelope::parse(&request.encrypted_prompt).map(|e| e.ciphertext_hash()).map_err(|_| {
        ApiError::new(502, codes::ENCLAVE_ERROR, "the enclave accepted an envelope the relay cannot parse")
    })?;
    let verified = response.receipt.verify(app.ledger.program_id());
    if verified.map(|v| v.body.prompt_hash) != Ok(prompt_hash) {
        return Err(ApiError::new(502, codes::ENCLAVE_ERROR, "the enclave returned a receipt that does not verify"));
    }

    let now = crate::unix_now();
    let signature = match app.ledger.commit(&response.receipt, &prompt_hash, now).await {
        Ok(id) => id,
        Err(LedgerError::Duplicate) => {
            return Err(ApiError::new(409, codes::REPLAY_DETECTED, "a receipt for this ciphertext already exists"));
        }
        Err(e) => {
            tracing::error!(error = %e, "receipt commit failed");
            return Err(ApiError::internal());
        }
    };
    response.onchain_attestation = Some(OnchainAttestation {
        address: response.receipt.address.clone(),
        encrypted_prompt_hash: response.receipt.encrypted_prompt_hash.clone(),
        explorer_url: format!("{}/attestation/by-tx/{signature}", app.public_url),
        signature,
    });
    Ok(Json(response).into_response())
}
