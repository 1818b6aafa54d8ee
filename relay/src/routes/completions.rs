//! `POST /api/v1/chat/completions` (contract §4.1): an OpenAI `chat.completion` whose message
//! content is the sealed reply; opened, it is a complete `chat.completion` (with the receipt).
//! Billed per token: the most the call can cost is taken first, the rest given back after.

use axum::Json;
use axum::body::Body;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use shared::catalog::{self, PROVIDER};
use shared::envelope::Envelope;
use shared::wire::{OnchainAttestation, ProcessRequest, codes};

use crate::app::App;
use crate::error::ApiError;
use crate::metering::{self, Payer};
use crate::routes::tee::MAX_PROCESS_BODY;

pub async fn chat_completions(State(app): State<App>, headers: HeaderMap, body: Body) -> Response {
    match handle(&app, &headers, body).await {
        Ok(response) => response,
        Err(e) => e.into_response(),
    }
}

/// Base units for `tokens` at `per_million`, rounded up (a call is never free by rounding).
pub fn token_price(per_million: u64, tokens: u64) -> u64 {
    (u128::from(per_million) * u128::from(tokens)).div_ceil(1_000_000).try_into().unwrap_or(u64::MAX)
}

async fn handle(app: &App, headers: &HeaderMap, body: Body) -> Result<Response, ApiError> {
    let caller = app.keys.check(headers, "chat").await?;
    let bytes = axum::body::to_bytes(body, MAX_PROCESS_BODY).await.map_err(|_| {
        ApiError::new(413, codes::PAYLOAD_TOO_LARGE, format!("request body exceeds {MAX_PROCESS_BODY} bytes"))
    })?;
    let fields: serde_json::Map<String, Value> = serde_json::from_slice(&bytes)
        .map_err(|_| ApiError::bad_request("the body must be a JSON object with `model` and `encryptedPrompt`"))?;
    let (Some(Value::String(model)), Some(Value::String(envelope))) =
        (fields.get("model"), fields.get("encryptedPrompt"))
    else {
        return Err(ApiError::bad_request("`model` and `encryptedPrompt` (strings) are required"));
    };
    let model = catalog::resolve(model);
    let prompt_hash = Envelope::parse(envelope)
        .map_err(|e| ApiError::new(400, codes::INVALID_ENVELOPE, e.to_string()))?
        .ciphertext_hash();
    let per_million = *app.prices.get(&model).ok_or_else(|| {
        ApiError::new(501, codes::GPU_NOT_CONFIGURED, format!("model `{model}` has no price or endpoint configured"))
    })?;
    // The most the call can cost: the whole context window at the model's price.
    let context = u64::from(catalog::context_length(&model).unwrap_or(8192));
    let reserve = token_price(per_million, context);
    let usage = crate::billing::NewUsage { route: "/api/v1/chat/completions", model: &model };
    let now = crate::unix_now();
    let mut charge = metering::charge(&app.store, &Payer::Key(caller), reserve, 0, usage, now).await?;
    let request = ProcessRequest { encrypted_prompt: envelope.clone(), model: Some(model.clone()), max_tokens: None };
    let (response, signature) = match crate::forward::chat(app, "/chat/completions", &request, &prompt_hash).await {
        Ok(done) => done,
        Err(e) => {
            metering::refund(&app.store, &charge, crate::unix_now()).await;
            return Err(e);
        }
    };
    let cost = token_price(per_million, response.usage.total_tokens);
    metering::complete(&app.store, &mut charge, response.usage, Some(i64::try_from(cost).unwrap_or(i64::MAX)), now)
        .await?;
    let content = serde_json::to_string(&response.encrypted_response).map_err(|_| ApiError::internal())?;
    let onchain = OnchainAttestation {
        address: response.receipt.address.clone(),
        encrypted_prompt_hash: response.receipt.encrypted_prompt_hash.clone(),
        explorer_url: crate::forward::explorer_url(app, &signature),
        signature,
    };
    Ok(Json(json!({
        "id": format!("chatcmpl-{}", response.receipt.address),
        "object": "chat.completion",
        "created": now,
        "model": catalog::prefixed(&model),
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": content},
            "finish_reason": "stop",
        }],
        "usage": {
            "prompt_tokens": response.usage.prompt_tokens,
            "completion_tokens": response.usage.completion_tokens,
            "total_tokens": response.usage.total_tokens,
        },
        "encrypted": true,
        "provider": PROVIDER,
        "receipt": response.receipt,
        "attestation": response.attestation,
        "onchainAttestation": onchain,
        "billing": charge.report(),
    }))
    .into_response())
}

#[cfg(test)]
mod tests {
    use super::token_price;

    #[test]
    fn per_token_prices_round_up() {
        assert_eq!(token_price(200_000, 1_000_000), 200_000);
        assert_eq!(token_price(200_000, 1), 1, "0.2 base units is charged as 1");
        assert_eq!(token_price(200_000, 8192), 1639);
        assert_eq!(token_price(0, 500), 0);
        assert_eq!(token_price(u64::MAX, u64::MAX), u64::MAX);
    }
}
