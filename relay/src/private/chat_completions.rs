//! `POST /api/v1/chat/completions` (contract §4.1): an OpenAI `chat.completion` whose message
//! content is the sealed reply; opened, it is a complete `chat.completion` (with the receipt).
//! Billed per token: the most the call can cost is taken first, the rest given back after.

use axum::Json;
use axum::body::Body;
use axum::extract::State;
use serde::{Deserialize, Serialize};
use shared::catalog::{self, PROVIDER};
use shared::receipt::Receipt;
use shared::wire::{
    BindingAttestation, ChatCompletionChoice, ChatCompletionMessage, OnchainAttestation, OpenAiUsage, ProcessResponse,
};

use super::{Call, EnclaveRoute, SealedRequest};
use crate::accounts::keys::{Authorized, Chat};
use crate::billing::metering::{BillingReport, Payer, Price};
use crate::http::body;
use crate::http::error::{ErrorBody, RelayError};
use crate::state::App;

/// The request: both fields are required (contract §4.1: 400 `bad_request` otherwise).
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChatCompletionRequest {
    /// A catalog model id, bare or prefixed (e.g. `gpt-oss:20b`).
    model: Option<String>,
    /// The prompt envelope (DESIGN §4.1) as a JSON string, sealed to the attested key.
    encrypted_prompt: Option<String>,
}

/// Reads and checks a body: `{model, encryptedPrompt}`, both strings (400 `bad_request`
/// otherwise), the envelope's form and the model.
pub fn parse(bytes: &[u8]) -> Result<SealedRequest, RelayError> {
    let shape = "the body must be a JSON object with `model` and `encryptedPrompt` strings";
    let request: ChatCompletionRequest =
        serde_json::from_slice(bytes).map_err(|_| RelayError::BadRequest(shape.into()))?;
    let (Some(model), Some(envelope)) = (request.model, request.encrypted_prompt) else {
        return Err(RelayError::BadRequest("`model` and `encryptedPrompt` (strings) are required".into()));
    };
    SealedRequest::new(&envelope, Some(&model), None)
}

/// The answer: OpenAI's `chat.completion` fields, plus the proofs and the bill.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SealedChatCompletion {
    pub id: String,
    pub object: &'static str,
    pub created: i64,
    pub model: String,
    pub choices: Vec<ChatCompletionChoice>,
    pub usage: OpenAiUsage,
    pub encrypted: bool,
    pub provider: &'static str,
    pub receipt: Receipt,
    pub attestation: BindingAttestation,
    pub onchain_attestation: OnchainAttestation,
    pub billing: BillingReport,
}

#[utoipa::path(post, path = "/api/v1/chat/completions", tag = "private",
    summary = "Private chat completion: an OpenAI chat.completion whose content is the sealed reply; billed per token",
    security(("ApiKey" = [])), request_body = ChatCompletionRequest,
    responses((status = 200, body = SealedChatCompletion),
              (status = 400, description = "`bad_request` without `encryptedPrompt` or `model`; `invalid_envelope`; `decrypt_failed`", body = ErrorBody),
              (status = 401, body = ErrorBody), (status = 402, description = "`insufficient_balance`", body = ErrorBody),
              (status = 501, description = "`gpu_not_configured`", body = ErrorBody),
              (status = 502, description = "`tee_unreachable`, `model_error`, `gpu_not_attested`", body = ErrorBody),
              (status = "default", body = ErrorBody)))]
pub async fn handle(
    State(app): State<App>,
    Authorized { caller, .. }: Authorized<Chat>,
    body: Body,
) -> Result<Json<SealedChatCompletion>, RelayError> {
    let request = parse(&body::read(body, body::MAX_PRIVATE_BODY).await?)?;
    let model = request.model().to_string();
    let per_million =
        *app.prices.per_million_tokens.get(&model).ok_or_else(|| RelayError::GpuNotConfigured(model.clone()))?;
    // The most the call can cost: the whole context window at the model's price.
    let context = u64::from(catalog::context_length(&model).unwrap_or(8192));
    let price = Price::PerToken { per_million, max_tokens: context };
    let call = Call {
        route: EnclaveRoute::ChatCompletions,
        usage_route: "/api/v1/chat/completions",
        request,
        payer: Payer::Key(caller),
        price,
    };
    let done = super::run::<ProcessResponse>(&app, call).await?;
    let answer = done.value.enclave;
    let content = serde_json::to_string(&answer.encrypted_response)
        .map_err(|_| RelayError::Internal("a value did not serialize"))?;
    Ok(Json(SealedChatCompletion {
        id: format!("chatcmpl-{}", answer.receipt.address),
        object: "chat.completion",
        created: crate::unix_now(),
        model: catalog::prefixed(&model),
        choices: vec![ChatCompletionChoice {
            index: 0,
            message: ChatCompletionMessage { role: "assistant".into(), content },
            finish_reason: "stop".into(),
        }],
        usage: answer.usage.into(),
        encrypted: true,
        provider: PROVIDER,
        receipt: answer.receipt,
        attestation: answer.attestation,
        onchain_attestation: done.value.onchain,
        billing: done.billing,
    }))
}
