//! x402 routes (contract §4.1, §4.4, §5.2): the keyless, paid private chat
//! `POST /api/v1/x402/chat/completions` and the paywall manifest `GET /.well-known/x402`.
//!
//! Order of the chat route: the body is checked first (400 `missing_required_fields`, 400
//! `invalid_envelope`), so a client is never asked to pay for a call that cannot run; then the
//! payment (402 challenge when none is sent); then the enclave; the payment is settled only
//! after the enclave answered and its receipt was checked and committed, and released (nothing
//! charged) when any of that failed.

use axum::Json;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use shared::envelope::Envelope;
use shared::wire::{OnchainAttestation, ProcessRequest, ProcessResponse, codes};

use crate::app::App;
use crate::error::ApiError;
use crate::routes::tee::MAX_PROCESS_BODY;
use crate::x402::requirements::{self, MIME_TYPE};

pub const CHAT_PATH: &str = "/api/v1/x402/chat/completions";
pub const CHAT_DESCRIPTION: &str = crate::x402::DEFAULT_DESCRIPTION;
/// 400 when a required body field is absent (contract §7).
pub const MISSING_REQUIRED_FIELDS: &str = "missing_required_fields";

/// A route priced per call with x402, as the manifest lists it.
pub struct PricedRoute {
    pub method: &'static str,
    pub path: &'static str,
    pub description: &'static str,
    /// Body fields and their types.
    pub input: &'static [(&'static str, &'static str)],
}

/// Every route the manifest lists (a route that starts taking x402 payments belongs here).
pub const PRICED_ROUTES: &[PricedRoute] = &[
    PricedRoute {
        method: "POST",
        path: CHAT_PATH,
        description: CHAT_DESCRIPTION,
        input: &[
            ("encryptedPrompt", "string: the prompt envelope JSON (DESIGN.md §4.1), or its base64"),
            ("model", "string: a catalog model id, e.g. gpt-oss:20b"),
            ("maxTokens", "integer: upper bound on generated tokens"),
        ],
    },
    PricedRoute {
        method: "POST",
        path: "/agent",
        description: "One agent call (tool loop, BRAID, or encrypted mode); x402 for callers without a key",
        input: &[
            ("prompt", "string: the question (plaintext path), or"),
            ("encryptedPrompt", "string: the prompt envelope JSON (encrypted mode)"),
            ("model", "string, optional: a catalog model id (default gpt-oss:20b)"),
        ],
    },
];

/// `GET /.well-known/x402`: the x402scan discovery shape `{version: 1, resources: [...]}`, plus
/// the payment terms of each priced route and the facilitator (contract §5 rule 2: the
/// configured one). A relay without x402 lists no resources and says `enabled: false`.
pub async fn manifest(State(app): State<App>) -> Response {
    let x402 = &app.x402;
    let settings = x402.settings();
    let routes: Vec<Value> = match settings {
        None => Vec::new(),
        Some(s) => PRICED_ROUTES
            .iter()
            .map(|r| {
                let input: serde_json::Map<String, Value> =
                    r.input.iter().map(|(k, v)| (k.to_string(), json!(v))).collect();
                json!({
                    "resource": format!("{}{}", app.public_url, r.path),
                    "method": r.method,
                    "description": r.description,
                    "mimeType": MIME_TYPE,
                    "price": s.price.to_string(),
                    "priceInUnits": s.price_in_units(),
                    "asset": s.asset.to_string(),
                    "network": s.network,
                    "payTo": s.pay_to.to_string(),
                    "input": input,
                })
            })
            .collect(),
    };
    let resources: Vec<Value> = routes.iter().map(|r| r["resource"].clone()).collect();
    let network = settings.map_or(x402.config.network.as_str(), |s| s.network);
    let body = json!({
        "version": 1,
        "resources": resources,
        "instructions": "Each resource costs one x402 payment per call (scheme exact, Solana). Call it without \
                         payment to receive the 402 requirements; pay with X-PAYMENT (x402 v1) or \
                         PAYMENT-SIGNATURE (x402 v2). The payment is settled only after a successful answer.",
        "x402": {
            "enabled": x402.enabled(),
            "x402Versions": [1, 2],
            "scheme": requirements::SCHEME,
            "network": network,
            "caip2": settings.map(|s| s.caip2),
            "asset": x402.config.asset,
            "assetDecimals": x402.config.asset_decimals,
            "payTo": settings.map(|s| s.pay_to.to_string()),
            "pricePerCall": x402.price().to_string(),
            "maxTimeoutSeconds": x402.config.max_timeout_seconds,
            "facilitator": settings.map(|s| s.facilitator_url.clone()),
            "paymentHeaders": {"v1": "X-PAYMENT", "v2": "PAYMENT-SIGNATURE"},
            "responseHeaders": {"v1": requirements::X_PAYMENT_RESPONSE, "v2": requirements::PAYMENT_RESPONSE},
        },
        "routes": routes,
    });
    let mut response = Json(body).into_response();
    response.headers_mut().insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
    response
}

/// The checked body of a paid chat call.
#[derive(Debug)]
struct ChatInput {
    /// The envelope as JSON (what the enclave takes), whatever form the client sent.
    envelope_json: String,
    prompt_hash: [u8; 32],
    model: String,
    max_tokens: u32,
}

fn parse_input(bytes: &[u8]) -> Result<ChatInput, ApiError> {
    let shape = "body must be a JSON object {encryptedPrompt: string, model: string, maxTokens: integer}";
    let body: Value = serde_json::from_slice(bytes).map_err(|_| ApiError::bad_request(shape))?;
    let Value::Object(body) = body else { return Err(ApiError::bad_request(shape)) };
    let present = |k: &str| body.get(k).is_some_and(|v| !v.is_null() && v.as_str() != Some(""));
    let missing: Vec<&str> = ["encryptedPrompt", "model", "maxTokens"].into_iter().filter(|k| !present(k)).collect();
    if !missing.is_empty() {
        return Err(ApiError::new(400, MISSING_REQUIRED_FIELDS, format!("missing: {}", missing.join(", "))));
    }
    let invalid = |message: &str| ApiError::new(400, crate::agent_request::codes::INVALID_FIELD, message.to_string());
    let prompt = body["encryptedPrompt"].as_str().ok_or_else(|| invalid("encryptedPrompt must be a string"))?;
    let model = body["model"].as_str().ok_or_else(|| invalid("model must be a string"))?;
    if model.len() > 128 {
        return Err(invalid("model must be at most 128 characters"));
    }
    let max_tokens = body["maxTokens"]
        .as_u64()
        .and_then(|n| u32::try_from(n).ok())
        .filter(|n| *n > 0)
        .ok_or_else(|| invalid("maxTokens must be a positive integer"))?;
    let envelope = parse_envelope(prompt)?;
    Ok(ChatInput {
        envelope_json: envelope.to_json_string(),
        prompt_hash: envelope.ciphertext_hash(),
        model: model.to_string(),
        max_tokens,
    })
}

/// `encryptedPrompt` is the envelope JSON string; the base64 of that JSON is accepted too
/// (contract §4.1 calls the field base64).
fn parse_envelope(text: &str) -> Result<Envelope, ApiError> {
    let direct = Envelope::parse(text);
    if direct.is_ok() || text.trim_start().starts_with('{') {
        return direct.map_err(|e| ApiError::new(400, codes::INVALID_ENVELOPE, e.to_string()));
    }
    let decoded = shared::b64::decode(text.trim()).ok().and_then(|b| String::from_utf8(b).ok()).ok_or_else(|| {
        ApiError::new(400, codes::INVALID_ENVELOPE, "encryptedPrompt is neither envelope JSON nor its base64")
    })?;
    Envelope::parse(&decoded).map_err(|e| ApiError::new(400, codes::INVALID_ENVELOPE, e.to_string()))
}

/// `POST /api/v1/x402/chat/completions`.
pub async fn chat_completions(State(app): State<App>, headers: HeaderMap, body: Body) -> Response {
    let bytes = match axum::body::to_bytes(body, MAX_PROCESS_BODY).await {
        Ok(b) => b,
        Err(_) => {
            let message = format!("request body exceeds {MAX_PROCESS_BODY} bytes");
            return ApiError::new(413, codes::PAYLOAD_TOO_LARGE, message).into_response();
        }
    };
    let input = match parse_input(&bytes) {
        Ok(input) => input,
        Err(e) => return e.into_response(),
    };
    let resource = format!("{}{CHAT_PATH}", app.public_url);
    let payment = match app.x402.verify(&headers, &resource, &app.store).await {
        Ok(Some(payment)) => payment,
        Ok(None) => return app.x402.challenge(&resource, CHAT_DESCRIPTION).await,
        Err(e) => return e.into_response(),
    };
    let (response, signature) = match run(&app, &input).await {
        Ok(done) => done,
        Err(e) => {
            app.x402.release(&payment, &app.store).await;
            return e.into_response();
        }
    };
    let settlement = match app.x402.settle(&payment, &app.store).await {
        Ok(s) => s,
        Err(e) => return e.into_response(),
    };
    let usage = response.usage;
    let onchain = OnchainAttestation {
        address: response.receipt.address.clone(),
        encrypted_prompt_hash: response.receipt.encrypted_prompt_hash.clone(),
        explorer_url: crate::forward::explorer_url(&app, &signature),
        signature,
    };
    let encrypted_response = match serde_json::to_string(&response.encrypted_response) {
        Ok(text) => text,
        Err(_) => return ApiError::internal().into_response(),
    };
    let body = json!({
        "encryptedResponse": encrypted_response,
        "usage": {
            "prompt_tokens": usage.prompt_tokens,
            "completion_tokens": usage.completion_tokens,
            "total_tokens": usage.total_tokens,
        },
        "cost": app.x402.price_in_units(),
        "onchainAttestation": onchain,
    });
    let mut answer = Json(body).into_response();
    settlement.attach(&mut answer);
    answer
}

/// Forwards to the enclave, checks the receipt is for the ciphertext sent and commits it, as
/// every private chat route does (`crate::forward`). Returns the enclave's answer and the
/// commit's signature.
async fn run(app: &App, input: &ChatInput) -> Result<(ProcessResponse, String), ApiError> {
    let request = ProcessRequest {
        encrypted_prompt: input.envelope_json.clone(),
        model: Some(input.model.clone()),
        max_tokens: Some(input.max_tokens),
    };
    crate::forward::chat(app, "/process", &request, &input.prompt_hash).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn envelope() -> Envelope {
        Envelope { enc: [1; 32], nonce: [2; 16], ciphertext: vec![3; 40], key_id: None }
    }

    fn parse(body: Value) -> Result<ChatInput, ApiError> {
        parse_input(body.to_string().as_bytes())
    }

    #[test]
    fn missing_fields_are_named() {
        let e = parse(json!({"model": "gpt-oss:20b"})).unwrap_err();
        assert_eq!((e.status, e.code), (400, MISSING_REQUIRED_FIELDS));
        assert_eq!(e.message, "missing: encryptedPrompt, maxTokens");
        let e = parse(json!({"encryptedPrompt": "", "model": null, "maxTokens": 5})).unwrap_err();
        assert_eq!(e.message, "missing: encryptedPrompt, model");
        assert_eq!(parse_input(b"not json").unwrap_err().code, codes::BAD_REQUEST);
        assert_eq!(parse_input(b"[1]").unwrap_err().code, codes::BAD_REQUEST);
    }

    #[test]
    fn types_and_envelope_are_checked() {
        let env = envelope().to_json_string();
        let e = parse(json!({"encryptedPrompt": env, "model": "m", "maxTokens": -1})).unwrap_err();
        assert_eq!(e.code, crate::agent_request::codes::INVALID_FIELD);
        let e = parse(json!({"encryptedPrompt": env, "model": 7, "maxTokens": 5})).unwrap_err();
        assert_eq!(e.code, crate::agent_request::codes::INVALID_FIELD);
        let e = parse(json!({"encryptedPrompt": "{\"x\": 1}", "model": "m", "maxTokens": 5})).unwrap_err();
        assert_eq!(e.code, codes::INVALID_ENVELOPE);
        let e = parse(json!({"encryptedPrompt": "not an envelope", "model": "m", "maxTokens": 5})).unwrap_err();
        assert_eq!(e.code, codes::INVALID_ENVELOPE);
    }

    #[test]
    fn envelope_json_and_its_base64_are_the_same_call() {
        let env = envelope();
        let plain = parse(json!({"encryptedPrompt": env.to_json_string(), "model": "m", "maxTokens": 5})).unwrap();
        let b64 = shared::b64::encode(env.to_json_string());
        let wrapped = parse(json!({"encryptedPrompt": b64, "model": "m", "maxTokens": 5})).unwrap();
        assert_eq!(plain.envelope_json, wrapped.envelope_json);
        assert_eq!(plain.prompt_hash, env.ciphertext_hash());
        assert_eq!(wrapped.prompt_hash, env.ciphertext_hash());
        assert_eq!(wrapped.max_tokens, 5);
    }
}
