//! `/tee/*`: the enclave's key and attestation, and private chat. Ciphertext only.

use axum::Json;
use axum::body::Body;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use shared::envelope::{Envelope, MAX_ENVELOPE_JSON};
use shared::wire::{OnchainAttestation, ProcessRequest, codes};

use crate::app::App;
use crate::error::ApiError;
use crate::metering::{self, Payer};
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
    let caller = app.keys.check(headers, "chat").await?;
    let bytes = axum::body::to_bytes(body, MAX_PROCESS_BODY).await.map_err(|_| {
        ApiError::new(413, codes::PAYLOAD_TOO_LARGE, format!("request body exceeds {MAX_PROCESS_BODY} bytes"))
    })?;
    let request: ProcessRequest = serde_json::from_slice(&bytes)
        .map_err(|_| ApiError::bad_request("body must be a JSON object with an `encryptedPrompt` string"))?;
    let prompt_hash = Envelope::parse(&request.encrypted_prompt)
        .map_err(|e| ApiError::new(400, codes::INVALID_ENVELOPE, e.to_string()))?
        .ciphertext_hash();
    let model = shared::catalog::resolve(request.model.as_deref().unwrap_or(shared::catalog::DEFAULT_MODEL));
    let usage = crate::billing::NewUsage { route: "/tee/process", model: &model };
    let now = crate::unix_now();
    let mut charge = metering::charge(&app.store, &Payer::Key(caller), app.tee_process_price, 0, usage, now).await?;
    // Forward only the fields the enclave knows.
    let (mut response, signature) = match crate::forward::chat(app, "/process", &request, &prompt_hash).await {
        Ok(done) => done,
        Err(e) => {
            metering::refund(&app.store, &charge, crate::unix_now()).await;
            return Err(e);
        }
    };
    metering::complete(&app.store, &mut charge, response.usage, None, now).await?;
    response.onchain_attestation = Some(OnchainAttestation {
        address: response.receipt.address.clone(),
        encrypted_prompt_hash: response.receipt.encrypted_prompt_hash.clone(),
        explorer_url: crate::forward::explorer_url(app, &signature),
        signature,
    });
    Ok(Json(response).into_response())
}
