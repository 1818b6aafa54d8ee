//! The internal HTTP API the relay calls. Handlers are thin: one body extractor (`Body`), one
//! call, and every refusal mapped once (`crate::error`).

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, FromRequest, RawQuery, Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use ed25519_dalek::Signer;
use serde::de::DeserializeOwned;
use shared::envelope::MAX_ENVELOPE_JSON;
use shared::privacy::{CreatedWallet, NewWallet, PrivacyAnswer, PrivacyRequest};
use shared::swap::{OpenedSession, SessionTerms, StepAnswer, StepRequest};
use shared::wire::{
    EncryptedAgentResponse, NewObject, OpenedObject, PrivateRequest, ProcessResponse, ProvisionRequest,
    ProvisioningState, PublicKeyResponse, SealedObject, StoredBlob, codes::EnclaveCode,
};
use shared::{b64, sha256};

use crate::error::{ApiError, Refusal};
use crate::inference::chat::ReplyFormat;
use crate::service::Enclave;

/// A book step carries its mint's sealed book: 16 MiB holds 100,000 wallets and a day of
/// 100,000 credits (crate::funds::pool::Book, 40 bytes each, base64) with room to spare.
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
        .layer(axum::middleware::from_fn(move |request, next| bounded(permits.clone(), limits, request, next)))
        .layer(axum::middleware::from_fn(logged));
    reads.merge(work).layer(DefaultBodyLimit::max(MAX_ENVELOPE_JSON + 4096)).with_state(enclave)
}

/// Runs a work request only with a permit and within the time limit. Without a permit the
/// answer is immediate, so excess requests hold no memory while they wait.
async fn bounded(permits: Arc<tokio::sync::Semaphore>, limits: Limits, request: Request, next: Next) -> Response {
    let Ok(_permit) = permits.try_acquire_owned() else {
        return ApiError::Busy.into_response();
    };
    match tokio::time::timeout(limits.request_timeout, next.run(request)).await {
        Ok(response) => response,
        Err(_) => ApiError::TimedOut.into_response(),
    }
}

/// One log line per work request: its route, status, time and, for a refusal, the contract
/// code. Never a body.
async fn logged(request: Request, next: Next) -> Response {
    // Only matched routes reach this layer, and none has a path parameter: the path is the route.
    let route = request.uri().path().trim_start_matches('/').to_owned();
    let started = std::time::Instant::now();
    let response = next.run(request).await;
    let (status, elapsed_ms) = (response.status().as_u16(), started.elapsed().as_millis() as u64);
    match response.extensions().get::<Refusal>() {
        Some(Refusal(code)) => tracing::info!(route, status, code = code.as_str(), elapsed_ms, "refused"),
        None => tracing::info!(route, status, elapsed_ms),
    }
    response
}

/// A JSON request body. One that does not parse is `bad_request` on every route; one over the
/// size limit keeps axum's 413.
struct Body<T>(T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for Body<T> {
    type Rejection = Response;

    async fn from_request(request: Request, state: &S) -> Result<Self, Response> {
        let bytes = Bytes::from_request(request, state).await.map_err(IntoResponse::into_response)?;
        serde_json::from_slice(&bytes).map(Body).map_err(|_| ApiError::BadRequest.into_response())
    }
}

/// What a work route answers: its JSON, or a refusal mapped in `crate::error`.
type Answer<T> = Result<Json<T>, ApiError>;

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
            let body = serde_json::json!({"error": EnclaveCode::BadRequest.as_str(), "message": "nonce must be 64 hex characters"});
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

async fn process(State(enclave): State<Arc<Enclave>>, Body(request): Body<PrivateRequest>) -> Answer<ProcessResponse> {
    Ok(Json(enclave.process(&request, ReplyFormat::Reply).await?))
}

/// Chat whose sealed reply is a complete OpenAI `chat.completion` (same request shape).
async fn chat_completions(
    State(enclave): State<Arc<Enclave>>,
    Body(request): Body<PrivateRequest>,
) -> Answer<ProcessResponse> {
    Ok(Json(enclave.process(&request, ReplyFormat::ChatCompletion).await?))
}

/// Encrypted agent mode (same request shape as `/process`).
async fn agent(
    State(enclave): State<Arc<Enclave>>,
    Body(request): Body<PrivateRequest>,
) -> Answer<EncryptedAgentResponse> {
    Ok(Json(enclave.agent(&request).await?))
}

/// A secrets bundle, sealed to this boot's key; answers the provisioning state.
async fn provision(
    State(enclave): State<Arc<Enclave>>,
    Body(request): Body<ProvisionRequest>,
) -> Answer<ProvisioningState> {
    Ok(Json(enclave.provision(&request)?))
}

/// A new sealed object; only its blob and public half leave.
async fn new_object(State(enclave): State<Arc<Enclave>>, Body(request): Body<NewObject>) -> Answer<SealedObject> {
    Ok(Json(enclave.custody.new_object(&request.kind)?))
}

/// Opens a stored blob to prove it opens (its public half), re-sealed under the current KEK
/// when it was sealed under an earlier one.
async fn open_object(State(enclave): State<Arc<Enclave>>, Body(request): Body<StoredBlob>) -> Answer<OpenedObject> {
    Ok(Json(enclave.custody.open_object(&request.blob)?.0))
}

/// A new one-shot swap session: its sealed key and the commitment the client checks.
async fn open_session(State(enclave): State<Arc<Enclave>>, Body(terms): Body<SessionTerms>) -> Answer<OpenedSession> {
    Ok(Json(enclave.open_session(terms).await?))
}

/// One idempotent step of a session.
async fn swap_step(State(enclave): State<Arc<Enclave>>, Body(request): Body<StepRequest>) -> Answer<StepAnswer> {
    Ok(Json(enclave.swap_step(request).await?))
}

/// A new managed-wallet key sealed with its wallet id and owner key.
async fn new_wallet(State(enclave): State<Arc<Enclave>>, Body(request): Body<NewWallet>) -> Answer<CreatedWallet> {
    Ok(Json(enclave.new_wallet(&request)?))
}

/// The pool's key.
async fn new_pool(State(enclave): State<Arc<Enclave>>) -> Answer<SealedObject> {
    Ok(Json(enclave.new_pool()?))
}

/// One step of the pool (encrypt, credit, withdraw, balance, reserves).
async fn privacy_step(
    State(enclave): State<Arc<Enclave>>,
    Body(request): Body<PrivacyRequest>,
) -> Answer<PrivacyAnswer> {
    Ok(Json(enclave.privacy_step(request).await?))
}
