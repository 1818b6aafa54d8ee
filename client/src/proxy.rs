//! `svc proxy`: a localhost OpenAI-compatible server (`POST /v1/chat/completions`,
//! `GET /v1/models`) in front of the private path, so any OpenAI SDK talks to the enclave
//! unchanged. Each request is sealed to the verified enclave ([`Client::chat_completion`]), the
//! reply opened and its receipt checked; the answer is plain OpenAI JSON with the receipt's
//! address in `x-receipt-address`. Nothing leaves the proxy unsealed: the only bodies it sends
//! to the relay are the sealed envelope and the model id.
//!
//! The service does not stream; `stream: true` is answered as server-sent events in the
//! OpenAI chunk format once the whole verified answer is in.
//!
//! It spends the user's API key on whoever reaches it, so it serves local programs only
//! ([`Access`]): a web page the user visits can send requests to a loopback port (a form POST
//! needs no preflight) or rebind its own name to 127.0.0.1, and both are refused with 403. A
//! `--token` makes every caller show it as the OpenAI API key.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
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

/// The longest a relay's `Retry-After` is waited out at start, in one wait.
const MAX_START_WAIT: Duration = Duration::from_secs(300);

/// Verifies the enclave, then serves the proxy on `listener` until the process ends. Refuses to
/// start (the error) when the enclave fails verification. A relay that answers 429 (its rate
/// limit) is waited out for the `Retry-After` it names, then asked again.
pub async fn serve(
    client: Client,
    listener: tokio::net::TcpListener,
    access: Access,
    page: crate::proxy_page::PageRelay,
) -> Result<(), ClientError> {
    loop {
        match client.enclave_key().await {
            Ok(_) => break,
            Err(ClientError::Refused { status: 429, retry_after, .. }) => {
                let wait = Duration::from_secs(retry_after.unwrap_or(1).max(1)).min(MAX_START_WAIT);
                eprintln!("svc proxy: the relay is rate limiting; asking again in {} s", wait.as_secs());
                tokio::time::sleep(wait).await;
            }
            Err(e) => return Err(e),
        }
    }
    let access = Arc::new(access);
    let page = crate::proxy_page::routes(page).layer(axum::middleware::from_fn_with_state(access.clone(), admit_page));
    axum::serve(listener, router(client, access).merge(page))
        .await
        .map_err(|e| ClientError::Malformed(format!("proxy server: {e}")))
}

/// The proxy's routes over `client` (which must verify the enclave: built with attestation).
pub fn router(client: Client, access: Arc<Access>) -> Router {
    Router::new()
        .route("/v1/chat/completions", post(completions))
        .route("/v1/models", get(models))
        .fallback(|| async { openai_error(StatusCode::NOT_FOUND, "not_found", "unknown route") })
        .layer(axum::middleware::from_fn_with_state(access, admit))
        .with_state(Arc::new(client))
}

/// Who the proxy serves: requests addressed to the loopback address it listens on, sent by a
/// local program rather than a web page, and showing the token when one is set.
pub struct Access {
    /// What `Host` may say: the listen address, or `localhost` on its port.
    hosts: [String; 2],
    origins: [String; 2],
    /// sha256 of the token: compared by digest, so the comparison says nothing about the token.
    token: Option<[u8; 32]>,
}

impl Access {
    pub fn new(listen: SocketAddr, token: Option<&str>) -> Self {
        let hosts = [listen.to_string(), format!("localhost:{}", listen.port())];
        let origins = hosts.clone().map(|h| format!("http://{h}"));
        Access { hosts, origins, token: token.map(|t| shared::sha256(t.as_bytes())) }
    }

    /// Why `request` is refused, if it is: (status, code, message). The web app's routes
    /// (`proxy_page`) spend no key of the proxy's (the page sends its own), so they need no
    /// token; every other rule holds for them too.
    fn refusal(
        &self,
        method: &Method,
        headers: &HeaderMap,
        needs_token: bool,
    ) -> Option<(StatusCode, &'static str, &'static str)> {
        let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
        // A name other than ours is a page that rebound its own name to this address.
        if !text("host").is_some_and(|h| self.hosts.iter().any(|ours| ours == h)) {
            return Some((
                StatusCode::FORBIDDEN,
                "forbidden_host",
                "the Host header must name the address the proxy listens on",
            ));
        }
        // Browsers say where a request comes from; programs do not.
        let cross_site = text("origin").is_some_and(|o| !self.origins.iter().any(|ours| ours == o))
            || text("sec-fetch-site").is_some_and(|s| !matches!(s, "same-origin" | "none"));
        if cross_site {
            return Some((StatusCode::FORBIDDEN, "forbidden_origin", "requests from web pages are not served"));
        }
        if let Some(expected) = self.token.as_ref().filter(|_| needs_token) {
            let shown = text("authorization").and_then(|a| a.strip_prefix("Bearer "));
            if shown.map(|t| shared::sha256(t.as_bytes())).as_ref() != Some(expected) {
                return Some((StatusCode::UNAUTHORIZED, "invalid_api_key", "show the proxy's --token as the API key"));
            }
        }
        let json = text("content-type")
            .and_then(|c| c.split(';').next())
            .is_some_and(|c| c.trim().eq_ignore_ascii_case("application/json"));
        if method == Method::POST && !json {
            return Some((
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported_media_type",
                "POST bodies must be application/json",
            ));
        }
        None
    }
}

async fn admit(State(access): State<Arc<Access>>, request: Request, next: Next) -> Response {
    match access.refusal(request.method(), request.headers(), true) {
        Some((status, code, message)) => openai_error(status, code, message),
        None => next.run(request).await,
    }
}

async fn admit_page(State(access): State<Arc<Access>>, request: Request, next: Next) -> Response {
    match access.refusal(request.method(), request.headers(), false) {
        Some((status, code, message)) => (status, Json(json!({"error": code, "message": message}))).into_response(),
        None => next.run(request).await,
    }
}

/// An OpenAI error object: `{error: {message, type, param, code}}`.
fn openai_error(status: StatusCode, code: &str, message: &str) -> Response {
    let kind = match status.as_u16() {
        400 | 404 | 413 | 415 => "invalid_request_error",
        403 => "permission_error",
        401 => "authentication_error",
        402 => "insufficient_quota",
        429 => "rate_limit_error",
        _ => "api_error",
    };
    let body = json!({"error": {"message": message, "type": kind, "param": null, "code": code}});
    (status, Json(body)).into_response()
}

fn from_client_error(e: &ClientError) -> Response {
    match e {
        ClientError::Refused { status, code, message, .. } => {
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
    fn only_local_programs_with_the_token_get_through() {
        let access = Access::new("127.0.0.1:8000".parse().unwrap(), Some("s3cret"));
        let verdict = |method: Method, pairs: &[(&str, &str)]| {
            let mut headers = HeaderMap::new();
            for (name, value) in pairs {
                headers.insert(header::HeaderName::from_bytes(name.as_bytes()).unwrap(), value.parse().unwrap());
            }
            access.refusal(&method, &headers, true).map(|(status, code, _)| (status.as_u16(), code))
        };
        let program =
            [("host", "127.0.0.1:8000"), ("authorization", "Bearer s3cret"), ("content-type", "application/json")];
        assert_eq!(verdict(Method::POST, &program), None);
        assert_eq!(verdict(Method::GET, &[("host", "localhost:8000"), ("authorization", "Bearer s3cret")]), None);
        let with = |name: &'static str, value: &'static str| {
            let mut h: Vec<(&str, &str)> = program.iter().filter(|(n, _)| *n != name).copied().collect();
            h.push((name, value));
            verdict(Method::POST, &h)
        };
        // DNS rebinding: a page's own name, resolved to 127.0.0.1.
        assert_eq!(with("host", "attacker.example:8000"), Some((403, "forbidden_host")));
        assert_eq!(with("host", "127.0.0.1:8001"), Some((403, "forbidden_host")));
        // A page on another origin, and what browsers add to every cross-site request.
        assert_eq!(with("origin", "https://attacker.example"), Some((403, "forbidden_origin")));
        assert_eq!(with("sec-fetch-site", "cross-site"), Some((403, "forbidden_origin")));
        assert_eq!(with("origin", "http://127.0.0.1:8000"), None);
        assert_eq!(with("authorization", "Bearer s3cre"), Some((401, "invalid_api_key")));
        assert_eq!(with("content-type", "text/plain"), Some((415, "unsupported_media_type")));
        assert_eq!(with("content-type", "application/json; charset=utf-8"), None);
        // The web app's routes need no token (the page shows its own key); the rest holds.
        let page = |pairs: &[(&str, &str)]| {
            let headers =
                pairs.iter().map(|(n, v)| (header::HeaderName::from_bytes(n.as_bytes()).unwrap(), v.parse().unwrap()));
            access.refusal(&Method::GET, &headers.collect(), false).map(|(status, code, _)| (status.as_u16(), code))
        };
        assert_eq!(page(&[("host", "127.0.0.1:8000"), ("sec-fetch-site", "same-origin")]), None);
        assert_eq!(
            page(&[("host", "127.0.0.1:8000"), ("sec-fetch-site", "cross-site")]),
            Some((403, "forbidden_origin"))
        );
        assert_eq!(page(&[("host", "attacker.example:8000")]), Some((403, "forbidden_host")));
        let open = Access::new("[::1]:9".parse().unwrap(), None);
        assert_eq!(
            open.refusal(&Method::GET, &[(header::HOST, "[::1]:9".parse().unwrap())].into_iter().collect(), true),
            None
        );
    }

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
