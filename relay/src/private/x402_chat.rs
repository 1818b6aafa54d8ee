//! `POST /api/v1/x402/chat/completions` (contract §4.1): keyless private chat paid per call
//! with x402.
//!
//! The body is checked first (400 `missing_required_fields`, 400 `invalid_envelope`), so a
//! client is never asked to pay for a call that cannot run; then the payment (the 402 challenge
//! when none is sent); then the pipeline, which settles the payment only after the enclave
//! answered and its receipt was checked and committed, and releases it when any of that failed.

use axum::Json;
use axum::body::Body;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::{Map, Value};
use shared::wire::{OnchainAttestation, OpenAiUsage, ProcessResponse, codes};

use super::{Call, EnclaveRoute, SealedRequest};
use crate::billing::metering::{Payer, Price};
use crate::http::body;
use crate::http::error::{ErrorBody, RelayError};
use crate::state::App;
use crate::x402::manifest::PricedRoute;

/// The x402 chat route.
pub const CHAT_PATH: &str = "/api/v1/x402/chat/completions";

/// How the x402 manifest lists it.
pub const PRICED: PricedRoute = PricedRoute {
    method: "POST",
    path: CHAT_PATH,
    description: crate::x402::DEFAULT_DESCRIPTION,
    input: &[
        ("encryptedPrompt", "string: the prompt envelope JSON (DESIGN.md §4.1), or its base64"),
        ("model", "string: a catalog model id, e.g. gpt-oss:20b"),
        ("maxTokens", "integer: upper bound on generated tokens"),
    ],
};

/// The request (contract §4.1): all three fields required.
#[derive(Debug, serde::Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct X402ChatRequest {
    /// The prompt envelope JSON (DESIGN §4.1), or its base64.
    pub encrypted_prompt: String,
    /// A catalog model id.
    pub model: String,
    /// Upper bound on generated tokens.
    #[schema(minimum = 1)]
    pub max_tokens: u32,
}

/// The answer (contract §4.1): the sealed reply as a string, OpenAI token counts, the price.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PaidChat {
    pub encrypted_response: String,
    pub usage: OpenAiUsage,
    /// Whole units of the asset.
    pub cost: f64,
    pub onchain_attestation: OnchainAttestation,
}

#[utoipa::path(post, path = "/api/v1/x402/chat/completions", tag = "private",
    summary = "Private inference paid per call with x402 (no account)",
    security(("X402" = [])), request_body = X402ChatRequest,
    responses((status = 200, description = "Settled: `X-PAYMENT-RESPONSE` (v1) or `PAYMENT-RESPONSE` (v2) says how", body = PaidChat),
              (status = 400, description = "`missing_required_fields` (named), `invalid_field`, `invalid_envelope`", body = ErrorBody),
              (status = 402, description = "x402 payment required or refused: `{x402Version, error, message, accepts}`", body = ErrorBody),
              (status = 501, description = "`x402_not_configured`, `gpu_not_configured`", body = ErrorBody),
              (status = "default", body = ErrorBody)))]
pub async fn handle(State(app): State<App>, headers: HeaderMap, body: Body) -> Response {
    match paid_chat(&app, &headers, body).await {
        Ok(response) => response,
        Err(e) => e.into_response(),
    }
}

async fn paid_chat(app: &App, headers: &HeaderMap, body: Body) -> Result<Response, RelayError> {
    let request = parse(&body::read(body, body::MAX_PRIVATE_BODY).await?)?;
    let resource = format!("{}{CHAT_PATH}", app.public_url);
    let Some(payer) = Payer::x402(headers, resource.clone()) else {
        return Ok(app.x402.challenge(&resource, crate::x402::DEFAULT_DESCRIPTION).await);
    };
    let call = Call {
        route: EnclaveRoute::Process,
        usage_route: CHAT_PATH,
        request,
        payer,
        price: Price::PerCall(app.x402.price()),
    };
    let done = super::run::<ProcessResponse>(app, call).await?;
    let encrypted_response = serde_json::to_string(&done.value.enclave.encrypted_response)
        .map_err(|_| RelayError::Internal("a value did not serialize"))?;
    let body = PaidChat {
        encrypted_response,
        usage: done.value.enclave.usage.into(),
        cost: app.x402.price_in_units(),
        onchain_attestation: done.value.onchain,
    };
    let mut answer = Json(body).into_response();
    if let Some(settlement) = done.settlement {
        settlement.attach(&mut answer);
    }
    Ok(answer)
}

/// `{encryptedPrompt: string, model: string, maxTokens: integer}`, all three required.
pub fn parse(bytes: &[u8]) -> Result<SealedRequest, RelayError> {
    let shape = "body must be a JSON object {encryptedPrompt: string, model: string, maxTokens: integer}";
    let body: Map<String, Value> = serde_json::from_slice(bytes).map_err(|_| RelayError::BadRequest(shape.into()))?;
    let present = |k: &str| body.get(k).is_some_and(|v| !v.is_null() && v.as_str() != Some(""));
    let missing: Vec<&'static str> =
        ["encryptedPrompt", "model", "maxTokens"].into_iter().filter(|k| !present(k)).collect();
    if !missing.is_empty() {
        return Err(RelayError::MissingFields(missing));
    }
    let invalid = |message: &str| RelayError::input(codes::INVALID_FIELD, message);
    let prompt = body["encryptedPrompt"].as_str().ok_or_else(|| invalid("encryptedPrompt must be a string"))?;
    let model = body["model"].as_str().ok_or_else(|| invalid("model must be a string"))?;
    let max_tokens = body["maxTokens"]
        .as_u64()
        .and_then(|n| u32::try_from(n).ok())
        .filter(|n| *n > 0)
        .ok_or_else(|| invalid("maxTokens must be a positive integer"))?;
    SealedRequest::new(prompt, Some(model), Some(max_tokens))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use shared::envelope::Envelope;

    fn envelope() -> Envelope {
        Envelope { enc: [1; 32], nonce: [2; 16], ciphertext: vec![3; 40], key_id: None }
    }

    fn parse_json(body: Value) -> Result<SealedRequest, RelayError> {
        parse(body.to_string().as_bytes())
    }

    fn code(e: RelayError) -> String {
        e.status_and_code().1.to_string()
    }

    #[test]
    fn missing_fields_are_named() {
        let e = parse_json(json!({"model": "gpt-oss:20b"})).unwrap_err();
        assert_eq!(e.status_and_code(), (400, codes::MISSING_REQUIRED_FIELDS));
        assert_eq!(e.to_string(), "missing: encryptedPrompt, maxTokens");
        let e = parse_json(json!({"encryptedPrompt": "", "model": null, "maxTokens": 5})).unwrap_err();
        assert_eq!(e.to_string(), "missing: encryptedPrompt, model");
        assert_eq!(code(parse(b"not json").unwrap_err()), codes::BAD_REQUEST);
        assert_eq!(code(parse(b"[1]").unwrap_err()), codes::BAD_REQUEST);
    }

    #[test]
    fn types_and_envelope_are_checked() {
        let env = envelope().to_json_string();
        let e = parse_json(json!({"encryptedPrompt": env, "model": "m", "maxTokens": -1})).unwrap_err();
        assert_eq!(code(e), codes::INVALID_FIELD);
        let e = parse_json(json!({"encryptedPrompt": env, "model": 7, "maxTokens": 5})).unwrap_err();
        assert_eq!(code(e), codes::INVALID_FIELD);
        let e = parse_json(json!({"encryptedPrompt": "{\"x\": 1}", "model": "m", "maxTokens": 5})).unwrap_err();
        assert_eq!(code(e), codes::INVALID_ENVELOPE);
        let e = parse_json(json!({"encryptedPrompt": "not an envelope", "model": "m", "maxTokens": 5})).unwrap_err();
        assert_eq!(code(e), codes::INVALID_ENVELOPE);
        let ok = parse_json(json!({"encryptedPrompt": env, "model": "m", "maxTokens": 5})).unwrap();
        assert_eq!(ok.forward.max_tokens, Some(5));
    }
}
