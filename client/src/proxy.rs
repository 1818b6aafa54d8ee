//! `svc proxy`: a localhost OpenAI-compatible server (`POST /v1/chat/completions`,
//! `GET /v1/models`) in front of the private path, so any OpenAI SDK talks to the enclave
//! unchanged. Each request is sealed to the verified enclave ([`Client::chat_completion`]), the
//! reply opened and its receipt checked; the answer is plain OpenAI JSON with the receipt's
//! address in `x-receipt-address`. Nothing leaves the proxy unsealed: the only bodies it sends
//! to the relay are the sealed envelope and the model id.
//!
//! The service does not stream; `stream: true` is answered as server-sent events in the
//! OpenAI chunk format once the whole verified answer is in.

use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};
use shared::envelope::{Message, Role};
use shared::wire::ChatCompletion;

use crate::api::Client;
use crate::completions::CompletionRequest;
use crate::error::ClientError;

/// The header naming the receipt of the answer.
pub const RECEIPT_HEADER: &str = "x-receipt-address";
/// The model when a request names none.
const DEFAULT_MODEL: &str = "gpt-oss:20b";

/// Verifies the enclave, then serves the proxy on `listener` until the process ends. Refuses to
/// start (the error) when the enclave fails verification.
pub async fn serve(client: Client, listener: tokio::net::TcpListener) -> Result<(), ClientError> {
    client.enclave_key().await?;
    axum::serve(listener, router(client)).await.map_err(|e| ClientError::Malformed(format!("proxy server: {e}")))
}

/// The proxy's routes over `client` (which must verify the enclave: built with attestation).
pub fn router(client: Client) -> Router {
    Router::new()
        .route("/v1/chat/completions", post(completions))
        .route("/v1/models", get(models))
        .fallback(|| async { openai_error(StatusCode::NOT_FOUND, "not_found", "unknown route") })
        .with_state(Arc::new(client))
}

/// An OpenAI error object: `{error: {message, type, param, code}}`.
fn openai_error(status: StatusCode, code: &str, message: &str) -> Response {
    let kind = match status.as_u16() {
        400 | 404 | 413 | 415 => "invalid_request_error",
        401 | 403 => "authentication_error",
        402 => "insufficient_quota",
        429 => "rate_limit_error",
        _ => "api_error",
    };
    let body = json!({"error": {"message": message, "type": kind, "param": null, "code": code}});
    (status, Json(body)).into_response()
}

fn from_client_error(e: &ClientError) -> Response {
    match e {
        ClientError::Refused { status, code, message } => {
            openai_error(StatusCode::from_u16(*status).unwrap_or(StatusCode::BAD_GATEWAY), code, message)
        }
        ClientError::RelayUnreachable(_) | ClientError::TeeUnreachable { .. } => {
            openai_error(StatusCode::BAD_GATEWAY, "upstream_unreachable", &e.to_string())
        }
        // A failed verification or a reply that does not check out: nothing unverified is
        // returned as an answer.
        _ => openai_error(StatusCode::BAD_GATEWAY, "verification_failed", &e.to_string()),
    }
}

/// Reads an OpenAI chat request into what is sealed, and whether it asks for a stream; `Err`
/// says why it is a 400.
pub fn parse(body: &[u8]) -> Result<(CompletionRequest, bool), String> {
    let request: Value = serde_json::from_slice(body).map_err(|_| "the body must be a JSON object")?;
    let messages = request.get("messages").and_then(Value::as_array).ok_or("`messages` is required")?;
    if messages.is_empty() {
        return Err("`messages` must not be empty".into());
    }
    let messages = messages.iter().map(message).collect::<Result<Vec<_>, _>>()?;
    let number = |name: &str| request.get(name).and_then(Value::as_u64).and_then(|n| u32::try_from(n).ok());
    let completion = CompletionRequest {
        model: request.get("model").and_then(Value::as_str).unwrap_or(DEFAULT_MODEL).to_string(),
        messages,
        max_tokens: number("max_completion_tokens").or_else(|| number("max_tokens")),
        temperature: request.get("temperature").and_then(Value::as_f64).map(|t| t as f32),
    };
    let stream = request.get("stream").and_then(Value::as_bool).unwrap_or(false);
    Ok((completion, stream))
}

/// One OpenAI message: a string content, or text parts joined.
fn message(m: &Value) -> Result<Message, String> {
    let role = match m.get("role").and_then(Value::as_str) {
        Some("system" | "developer") => Role::System,
        Some("user") => Role::User,
        Some("assistant") => Role::Assistant,
        other => return Err(format!("unsupported message role {other:?}")),
    };
    let content = match m.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .map(|p| match (p.get("type").and_then(Value::as_str), p.get("text").and_then(Value::as_str)) {
                (Some("text"), Some(t)) => Ok(t),
                _ => Err("only text content parts are supported".to_string()),
            })
            .collect::<Result<Vec<_>, _>>()?
            .join("\n"),
        Some(Value::Null) | None if role == Role::Assistant => String::new(),
        _ => return Err("each message needs a string `content`".into()),
    };
    Ok(Message { role, content })
}

async fn completions(State(client): State<Arc<Client>>, body: Bytes) -> Response {
    let (request, stream) = match parse(&body) {
        Ok(parsed) => parsed,
        Err(why) => return openai_error(StatusCode::BAD_REQUEST, "invalid_request_error", &why),
    };
    let outcome = match client.chat_completion(&request).await {
        Ok(o) => o,
        Err(e) => {
            tracing::warn!(error = %e, "completion failed");
            return from_client_error(&e);
        }
    };
    let address = outcome.completion.receipt.address.clone();
    tracing::info!(receipt = %address, "completion verified");
    let mut response = match stream {
        false => Json(plain(&outcome.completion)).into_response(),
        true => sse(&outcome.completion),
    };
    if let Ok(value) = HeaderValue::from_str(&address) {
        response.headers_mut().insert(RECEIPT_HEADER, value);
    }
    response
}

/// The enclave's completion as plain OpenAI JSON (the receipt goes in a header instead).
fn plain(completion: &ChatCompletion) -> Value {
    let mut value = serde_json::to_value(completion).unwrap_or_default();
    if let Some(object) = value.as_object_mut() {
        object.remove("receipt");
    }
    value
}

/// The whole answer as OpenAI `chat.completion.chunk` events: the role, the content, the
/// finish reason with the usage, then `[DONE]`.
fn sse(c: &ChatCompletion) -> Response {
    let chunk = |delta: Value, finish: Option<&str>, usage: Option<Value>| {
        let mut chunk = json!({"id": c.id, "object": "chat.completion.chunk", "created": c.created, "model": c.model,
                               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
        if let Some(u) = usage {
            chunk["usage"] = u;
        }
        format!("data: {chunk}\n\n")
    };
    let choice = c.choices.first();
    let content = choice.map(|ch| ch.message.content.as_str()).unwrap_or_default();
    let finish = choice.map(|ch| ch.finish_reason.as_str()).unwrap_or("stop");
    let usage = serde_json::to_value(c.usage).ok();
    let body = [
        chunk(json!({"role": "assistant", "content": ""}), None, None),
        chunk(json!({"content": content}), None, None),
        chunk(json!({}), Some(finish), usage),
        "data: [DONE]\n\n".to_string(),
    ]
    .concat();
    let mut response = body.into_response();
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

async fn models(State(client): State<Arc<Client>>) -> Response {
    match client.get_with_key::<Value>("/api/v1/models").await {
        Ok(list) => Json(list).into_response(),
        Err(e) => from_client_error(&e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openai_requests_are_read_or_refused() {
        let (r, stream) = parse(
            br#"{"model":"gpt-oss:20b","stream":true,"max_tokens":9,"messages":[
                {"role":"developer","content":"Be brief."},
                {"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}]}"#,
        )
        .unwrap();
        assert!(stream);
        assert_eq!(r.max_tokens, Some(9));
        assert_eq!(r.messages[0].role, Role::System);
        assert_eq!(r.messages[1].content, "a\nb");
        let (r, _) = parse(br#"{"messages":[{"role":"user","content":"x"}],"max_completion_tokens":4}"#).unwrap();
        assert_eq!((r.model.as_str(), r.max_tokens), (DEFAULT_MODEL, Some(4)));
        for bad in [
            &b"not json"[..],
            br#"{"model":"m"}"#,
            br#"{"messages":[]}"#,
            br#"{"messages":[{"role":"tool","content":"x"}]}"#,
            br#"{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{}}]}]}"#,
            br#"{"messages":[{"role":"user"}]}"#,
        ] {
            assert!(parse(bad).is_err(), "{}", String::from_utf8_lossy(bad));
        }
    }
}
