//! `POST /tee/process` (contract §4.1): a key pays per call; the answer is the enclave's, plus
//! `onchainAttestation`.

use axum::Json;
use axum::body::Body;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use shared::wire::{PrivateRequest, ProcessResponse};

use super::{Call, EnclaveRoute, SealedRequest};
use crate::billing::metering::{Payer, Price};
use crate::http::body;
use crate::http::error::{ErrorBody, RelayError, Surface};
use crate::state::App;

#[utoipa::path(post, path = "/tee/process", tag = "private",
    summary = "Private inference: the sealed prompt in, the sealed reply and its receipt out; per call",
    security(("ApiKey" = [])), request_body = PrivateRequest,
    responses((status = 200, body = ProcessResponse),
              (status = 400, description = "`bad_request`, `invalid_envelope`, `decrypt_failed`, `stale_timestamp` (with `success: false`)", body = ErrorBody),
              (status = 401, body = ErrorBody), (status = 402, description = "`insufficient_balance`", body = ErrorBody),
              (status = 409, description = "`replay_detected`", body = ErrorBody),
              (status = 501, description = "`gpu_not_configured`", body = ErrorBody),
              (status = 502, description = "`tee_unreachable`, `model_error`, `gpu_not_attested`", body = ErrorBody),
              (status = "default", body = ErrorBody)))]
pub async fn handle(State(app): State<App>, headers: HeaderMap, body: Body) -> Response {
    match process(&app, &headers, body).await {
        Ok(response) => Json(response).into_response(),
        Err(e) => e.respond(Surface::SUCCESS),
    }
}

async fn process(app: &App, headers: &HeaderMap, body: Body) -> Result<ProcessResponse, RelayError> {
    let caller = app.keys.check::<crate::accounts::keys::Chat>(headers).await?;
    let request = parse(&body::read(body, body::MAX_PRIVATE_BODY).await?)?;
    let call = Call {
        route: EnclaveRoute::Process,
        usage_route: "/tee/process",
        request,
        payer: Payer::Key(caller),
        price: Price::PerCall(app.prices.tee_process_call),
    };
    let done = super::run::<ProcessResponse>(app, call).await?;
    Ok(ProcessResponse { onchain_attestation: Some(done.value.onchain), ..done.value.enclave })
}

/// Reads and checks a body: `shared::wire::PrivateRequest` (400 `bad_request` otherwise), the
/// envelope's form and the model.
pub fn parse(bytes: &[u8]) -> Result<SealedRequest, RelayError> {
    let request: PrivateRequest = serde_json::from_slice(bytes)
        .map_err(|_| RelayError::BadRequest("body must be a JSON object with an `encryptedPrompt` string".into()))?;
    SealedRequest::new(&request.encrypted_prompt, request.model.as_deref(), request.max_tokens)
}
