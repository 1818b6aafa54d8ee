//! The internal HTTP API the relay calls. Handlers are thin: parse, call, map errors.

use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use ed25519_dalek::Signer;
use shared::envelope::MAX_ENVELOPE_JSON;
use shared::wire::{FailureBody, NewObject, PrivateRequest, ProvisionRequest, PublicKeyResponse, StoredBlob, codes};
use shared::{b64, sha256};

use crate::error::ProcessError;
use crate::process::{Enclave, ReplyFormat};

/// A book step carries its mint's sealed book: 16 MiB holds 100,000 wallets and a day of
/// 100,000 credits (crate::funds::Book, 40 bytes each, base64) with room to spare.
pub(crate) const MAX_BOOK_STEP_BODY: usize = 16 << 20;

/// Bounds on the routes that do work: requests in flight, and each one's time.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub max_concurrent: usize,
    pub request_timeout: std::time::Duration,
}

/// The internal API. The two reads stay outside the limits, so the relay's key refresh
/// still answers while the work routes are full.
pub fn router(enclave: Arc<Enclave>, limits: Limits) -> Router {
    let reads = Router::new().route("/public-key", get(public_key)).route("/attestation", get(attestation));
    let permits = Arc::new(tokio::sync::Semaphore::new(limits.max_concurrent));
    let work = Router::new()
        .route("/process", post(process))
        .route("/agent", post(agent))
        .route("/chat/completions", post(chat_completions))
        .route("/provision", post(provision))
        .route("/objects", post(new_object))
        .route("/objects/open", post(open_object))
        .route("/swaps/sessions", post(open_session))
        .route("/swaps/step", post(swap_step))
        .route("/wallets", post(new_wallet))
        .route("/privacy/pool", post(new_pool))
        .route("/privacy/step", post(privacy_step).layer(DefaultBodyLimit::max(MAX_BOOK_STEP_BODY)))
        .layer(axum::middleware::from_fn(move |request, next| bounded(permits.clone(), limits, request, next)));
    reads.merge(work).layer(DefaultBodyLimit::max(MAX_ENVELOPE_JSON + 4096)).with_state(enclave)
}

/// Runs a work request only with a permit and within the time limit. Without a permit the
/// answer is immediate, so excess requests hold no memory while they wait.
async fn bounded(
    permits: Arc<tokio::sync::Semaphore>,
    limits: Limits,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let Ok(_permit) = permits.try_acquire_owned() else {
        let message = "the enclave is at its limit of requests in flight; retry shortly";
        return failure(StatusCode::SERVICE_UNAVAILABLE, codes::ENCLAVE_BUSY, message);
    };
    match tokio::time::timeout(limits.request_timeout, next.run(request)).await {
        Ok(response) => response,
        Err(_) => failure(StatusCode::GATEWAY_TIMEOUT, codes::ENCLAVE_TIMEOUT, "the request took too long"),
    }
}

fn failure(status: StatusCode, code: &str, message: &str) -> Response {
    (status, Json(FailureBody { success: false, error: code.into(), message: message.into() })).into_response()
}

async fn public_key(State(enclave): State<Arc<Enclave>>) -> Json<PublicKeyResponse> {
    let key = enclave.keys.tee_public();
    Json(PublicKeyResponse {
        public_key: b64::encode(key),
        public_key_sha256: hex::encode(sha256(&key)),
        algorithm: "x25519".into(),
        tee_type: shared::wire::TEE_TYPE.into(),
    })
}

/// `GET /attestation[?nonce=<64 hex>]`: the boot attestation, and with a nonce, the nonce
/// signed by the enclave key that the binding quote covers.
async fn attestation(State(enclave): State<Arc<Enclave>>, RawQuery(query): RawQuery) -> Response {
    let mut response = enclave.attestation.public.clone();
    response.provisioning = enclave.provisioning_state();
    response.gpu_nodes = enclave.gpu_nodes();
    match shared::freshness::nonce_from_query(query.as_deref()) {
        None => Json(response).into_response(),
        Some(Err(())) => {
            let body = serde_json::json!({"error": codes::BAD_REQUEST, "message": "nonce must be 64 hex characters"});
            (StatusCode::BAD_REQUEST, Json(body)).into_response()
        }
        Some(Ok(nonce)) => {
            let message = shared::freshness::nonce_message(&nonce, &enclave.keys.tee_public());
            response.nonce = Some(hex::encode(nonce));
            response.nonce_signature = Some(b64::encode(enclave.keys.signer().sign(&message).to_bytes()));
            Json(response).into_response()
        }
    }
}

async fn process(State(enclave): State<Arc<Enclave>>, body: Bytes) -> Response {
    let started = std::time::Instant::now();
    let result = match serde_json::from_slice::<PrivateRequest>(&body) {
        Ok(request) => enclave.process(&request, ReplyFormat::Reply).await,
        Err(_) => Err(ProcessError::BadRequest),
    };
    answer("process", started, result.map(|r| (r.model.clone(), r)))
}

/// Chat whose sealed reply is a complete OpenAI `chat.completion` (same request shape).
async fn chat_completions(State(enclave): State<Arc<Enclave>>, body: Bytes) -> Response {
    let started = std::time::Instant::now();
    let result = match serde_json::from_slice::<PrivateRequest>(&body) {
        Ok(request) => enclave.process(&request, ReplyFormat::ChatCompletion).await,
        Err(_) => Err(ProcessError::BadRequest),
    };
    answer("chat/completions", started, result.map(|r| (r.model.clone(), r)))
}

/// Encrypted agent mode (same request shape as `/process`).
async fn agent(State(enclave): State<Arc<Enclave>>, body: Bytes) -> Response {
    let started = std::time::Instant::now();
    let result = match serde_json::from_slice::<PrivateRequest>(&body) {
        Ok(request) => enclave.agent(&request).await,
        Err(_) => Err(ProcessError::BadRequest),
    };
    answer("agent", started, result.map(|r| (r.model.clone(), r)))
}

/// A secrets bundle, sealed to this boot's key; answers the provisioning state.
async fn provision(State(enclave): State<Arc<Enclave>>, body: Bytes) -> Response {
    let started = std::time::Instant::now();
    let result = match serde_json::from_slice::<ProvisionRequest>(&body) {
        Ok(request) => enclave.provision(&request),
        Err(_) => Err(ProcessError::BadRequest),
    };
    answer("provision", started, result.map(|state| (String::new(), state)))
}

/// A new sealed object; only its blob and public half leave.
async fn new_object(State(enclave): State<Arc<Enclave>>, body: Bytes) -> Response {
    let started = std::time::Instant::now();
    let result = match serde_json::from_slice::<NewObject>(&body) {
        Ok(request) => enclave.custody.new_object(&request.kind).map_err(ProcessError::from),
        Err(_) => Err(ProcessError::BadRequest),
    };
    answer("objects", started, result.map(|o| (String::new(), o)))
}

/// Opens a stored blob to prove it opens (its public half), re-sealed under the current KEK
/// when it was sealed under an earlier one.
async fn open_object(State(enclave): State<Arc<Enclave>>, body: Bytes) -> Response {
    let started = std::time::Instant::now();
    let result = match serde_json::from_slice::<StoredBlob>(&body) {
        Ok(request) => {
            enclave.custody.open_object(&request.blob).map(|(view, _secret)| view).map_err(ProcessError::from)
        }
        Err(_) => Err(ProcessError::BadRequest),
    };
    answer("objects/open", started, result.map(|o| (String::new(), o)))
}

/// A new one-shot swap session: its sealed key and the commitment the client checks.
async fn open_session(State(enclave): State<Arc<Enclave>>, body: Bytes) -> Response {
    let started = std::time::Instant::now();
    let result = match serde_json::from_slice::<shared::swap::SessionTerms>(&body) {
        Ok(terms) => enclave.open_session(terms).await,
        Err(_) => Err(ProcessError::BadRequest),
    };
    answer("swaps/sessions", started, result.map(|o| (String::new(), o)))
}

/// One idempotent step of a session.
async fn swap_step(State(enclave): State<Arc<Enclave>>, body: Bytes) -> Response {
    let started = std::time::Instant::now();
    let result = match serde_json::from_slice::<shared::swap::StepRequest>(&body) {
        Ok(request) => enclave.swap_step(request).await,
        Err(_) => Err(ProcessError::BadRequest),
    };
    answer("swaps/step", started, result.map(|a| (String::new(), a)))
}

/// A new managed-wallet key sealed with its wallet id and owner key.
async fn new_wallet(State(enclave): State<Arc<Enclave>>, body: Bytes) -> Response {
    let started = std::time::Instant::now();
    let result = match serde_json::from_slice::<shared::privacy::NewWallet>(&body) {
        Ok(request) => enclave.new_wallet(&request),
        Err(_) => Err(ProcessError::BadRequest),
    };
    answer("wallets", started, result.map(|o| (String::new(), o)))
}

/// The pool's key.
async fn new_pool(State(enclave): State<Arc<Enclave>>) -> Response {
    let started = std::time::Instant::now();
    answer("privacy/pool", started, enclave.new_pool().map(|o| (String::new(), o)))
}

/// One step of the pool (encrypt, credit, withdraw, balance, reserves).
async fn privacy_step(State(enclave): State<Arc<Enclave>>, body: Bytes) -> Response {
    let started = std::time::Instant::now();
    let result = match serde_json::from_slice::<shared::privacy::PrivacyRequest>(&body) {
        Ok(request) => enclave.privacy_step(request).await,
        Err(_) => Err(ProcessError::BadRequest),
    };
    answer("privacy/step", started, result.map(|a| (String::new(), a)))
}

/// Logs status, code, time and model only, never a body.
fn answer<T: serde::Serialize>(
    route: &str,
    started: std::time::Instant,
    result: Result<(String, T), ProcessError>,
) -> Response {
    let elapsed_ms = started.elapsed().as_millis() as u64;
    match result {
        Ok((model, response)) => {
            tracing::info!(route, status = 200, elapsed_ms, model = %model);
            Json(response).into_response()
        }
        Err(e) => {
            let (status, code) = e.status_and_code();
            tracing::info!(route, status, code, elapsed_ms, "refused");
            let body = FailureBody { success: false, error: code.into(), message: e.to_string() };
            (StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR), Json(body)).into_response()
        }
    }
}
