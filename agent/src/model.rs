//! A small OpenAI-compatible chat-completions client (`POST {base}/chat/completions`).
//!
//! Only what the service needs: messages in, text and token usage out. An idle GPU node may
//! answer "GPU node is warming up" (contract §7 rule 1), and llama.cpp answers 503 "Loading
//! model" while it starts; both are retried with bounded exponential backoff. Error values
//! never carry upstream bodies, which could echo the prompt.
//!
//! The node is reached only where the configuration says: no redirect is followed (a
//! redirect from a pinned node could send the next prompt in plaintext anywhere), plain `http`
//! only to a literal loopback address (a name resolves wherever the resolver says), and no
//! more than [`MAX_RESPONSE_BYTES`] of an answer is read.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use shared::envelope::Message;
use shared::wire::Usage;
use zeroize::Zeroizing;

/// Where one catalog model is served.
#[derive(Clone)]
pub struct Endpoint {
    /// Base URL ending in `/v1`.
    pub base_url: String,
    /// The model name the node expects.
    pub upstream_model: String,
    pub api_key: Option<Zeroizing<String>>,
    /// sha256 of the node's TLS SubjectPublicKeyInfo; required for `https` endpoints.
    pub tls_pin: Option<[u8; 32]>,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("base_url", &self.base_url)
            .field("upstream_model", &self.upstream_model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("tls_pin", &self.tls_pin.map(|p| format!("{p:02x?}")))
            .finish()
    }
}

/// The most of one answer read: far above any completion this service asks for (the largest
/// `maxTokens` at several bytes per token), far below what would strain the enclave's memory.
pub const MAX_RESPONSE_BYTES: usize = 8 << 20;

#[derive(Debug, Clone, Copy)]
pub struct RetryPolicy {
    /// Total attempts, the first included.
    pub attempts: u32,
    pub first_delay: Duration,
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy { attempts: 6, first_delay: Duration::from_millis(250), max_delay: Duration::from_secs(4) }
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ModelError {
    #[error("GPU node unreachable")]
    Unreachable,
    #[error("GPU node timed out")]
    Timeout,
    #[error("GPU node still warming up after {0} attempts")]
    WarmingUp(u32),
    #[error("GPU node answered HTTP {0}")]
    Status(u16),
    #[error("GPU node answered with an unexpected body")]
    Malformed,
    #[error("the prompt does not fit the model's context window")]
    ContextExceeded,
    /// llama.cpp's HTTP 500 when it cannot parse what the model wrote as a tool call.
    #[error("the GPU node could not parse the model's output")]
    UnparsedOutput,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ChatRequest {
    pub messages: Vec<Message>,
    pub max_tokens: Option<u32>,
    pub temperature: Option<f32>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatReply {
    pub content: String,
    pub usage: Usage,
}

/// One message of a tool-calling conversation, in the OpenAI wire shape.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatMessage {
    pub role: ChatRole,
    /// Always sent as a string (some chat templates reject `null`).
    #[serde(default, deserialize_with = "null_as_empty")]
    pub content: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCallRequest>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChatRole {
    System,
    User,
    Assistant,
    Tool,
}

impl ChatMessage {
    pub fn new(role: ChatRole, content: impl Into<String>) -> Self {
        ChatMessage { role, content: content.into(), tool_calls: Vec::new(), tool_call_id: None }
    }
}

impl From<&Message> for ChatMessage {
    fn from(m: &Message) -> Self {
        let role = match m.role {
            shared::envelope::Role::System => ChatRole::System,
            shared::envelope::Role::User => ChatRole::User,
            shared::envelope::Role::Assistant => ChatRole::Assistant,
        };
        ChatMessage::new(role, m.content.clone())
    }
}

/// A tool call as the model asked for it. `arguments` is the model's raw JSON text: it may
/// be malformed, and the loop, not the client, decides what to do about that.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCallRequest {
    #[serde(default)]
    pub id: String,
    #[serde(rename = "type", default = "function_type")]
    pub kind: String,
    pub function: FunctionCall,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FunctionCall {
    #[serde(default)]
    pub name: String,
    /// Some servers send an object instead of a JSON string; both are accepted.
    #[serde(default, deserialize_with = "string_or_json")]
    pub arguments: String,
}

fn function_type() -> String {
    "function".into()
}

fn null_as_empty<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(Option::<String>::deserialize(d)?.unwrap_or_default())
}

fn string_or_json<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(match serde_json::Value::deserialize(d)? {
        serde_json::Value::String(s) => s,
        serde_json::Value::Null => String::new(),
        other => other.to_string(),
    })
}

/// One completion with tools offered.
#[derive(Debug, Clone, Copy)]
pub struct Completion<'a> {
    pub messages: &'a [ChatMessage],
    /// The OpenAI `tools` array; empty = no tools offered.
    pub tools: &'a [serde_json::Value],
    pub max_tokens: Option<u32>,
    pub temperature: Option<f32>,
}

/// The model's answer: text, or tool calls (or both), and the tokens it took.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completed {
    pub content: String,
    pub tool_calls: Vec<ToolCallRequest>,
    pub usage: Usage,
}

#[derive(Serialize)]
struct WireRequest<'a> {
    model: &'a str,
    messages: &'a [ChatMessage],
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    tools: &'a [serde_json::Value],
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f32>,
    stream: bool,
}

#[derive(Deserialize)]
struct WireResponse {
    choices: Vec<WireChoice>,
    #[serde(default)]
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
struct WireChoice {
    message: WireMessage,
}

#[derive(Deserialize)]
struct WireMessage {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<ToolCallRequest>>,
}

#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
    #[serde(default)]
    total_tokens: u64,
}

/// One model's GPU-node endpoint as a configuration file gives it (enclave and relay alike).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EndpointConfig {
    /// OpenAI-compatible base URL, ending in `/v1`.
    pub endpoint: String,
    /// Model name the node expects; defaults to the catalog id.
    #[serde(default)]
    pub upstream_model: Option<String>,
    /// Upper bound on generated tokens per model call.
    #[serde(default = "default_max_tokens")]
    pub max_tokens: u32,
    /// Hex sha256 of the GPU node's TLS SubjectPublicKeyInfo. Required for `https`; plain
    /// `http` is accepted only to loopback (a local development server).
    #[serde(default)]
    pub tls_pin_sha256: Option<String>,
}

fn default_max_tokens() -> u32 {
    512
}

impl EndpointConfig {
    pub fn tls_pin(&self) -> Result<Option<[u8; 32]>, EndpointError> {
        self.tls_pin_sha256
            .as_deref()
            .map(|p| shared::receipt::decode_hex32(p).ok_or(EndpointError::BadPin))
            .transpose()
    }

    /// The endpoint for catalog model `id`, checked against the transport rules.
    pub fn to_endpoint(&self, id: &str) -> Result<Endpoint, EndpointError> {
        let tls_pin = self.tls_pin()?;
        check_endpoint(&self.endpoint, tls_pin)?;
        Ok(Endpoint {
            base_url: self.endpoint.clone(),
            upstream_model: self.upstream_model.clone().unwrap_or_else(|| id.to_string()),
            api_key: None,
            tls_pin,
        })
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum EndpointError {
    #[error("tlsPinSha256 must be 64 lowercase hex")]
    BadPin,
    #[error("endpoint `{0}` is not an http(s) URL")]
    BadUrl(String),
    #[error("https endpoint `{0}` needs a TLS key pin (tlsPinSha256)")]
    MissingPin(String),
    #[error("plain http is only allowed to loopback (development); `{0}` needs https and a pin")]
    PlainHttpRemote(String),
}

/// Checks an endpoint against the transport rules: `https` with a pinned key, or plain
/// `http` to a literal loopback address only (a local development model server).
pub fn check_endpoint(base_url: &str, tls_pin: Option<[u8; 32]>) -> Result<(), EndpointError> {
    let bad = || EndpointError::BadUrl(base_url.chars().take(100).collect());
    let (scheme, rest) = base_url.split_once("://").ok_or_else(bad)?;
    let authority = rest.split('/').next().unwrap_or_default();
    let host = match authority.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or_default(),
        None => authority.rsplit_once(':').map_or(authority, |(h, _)| h),
    };
    match scheme {
        "https" if tls_pin.is_some() => Ok(()),
        "https" => Err(EndpointError::MissingPin(base_url.into())),
        "http" if host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback()) => Ok(()),
        "http" => Err(EndpointError::PlainHttpRemote(base_url.into())),
        _ => Err(bad()),
    }
}

/// `scheme://authority` of a base URL (where the node agent serves `/attest`).
fn origin(base_url: &str) -> &str {
    let after_scheme = base_url.find("://").map_or(0, |i| i + 3);
    match base_url[after_scheme..].find('/') {
        Some(path) => &base_url[..after_scheme + path],
        None => base_url,
    }
}

/// The answer's body, at most [`MAX_RESPONSE_BYTES`]: a longer one is refused as malformed
/// as soon as it passes the bound (its declared length, or what has arrived).
async fn read_bounded(mut response: reqwest::Response) -> Result<Vec<u8>, Attempt> {
    if response.content_length().is_some_and(|n| n > MAX_RESPONSE_BYTES as u64) {
        return Err(Attempt::Failed(ModelError::Malformed));
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(transport_error)? {
        if body.len() + chunk.len() > MAX_RESPONSE_BYTES {
            return Err(Attempt::Failed(ModelError::Malformed));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// A client for one endpoint: pinned TLS when the endpoint has a pin.
#[derive(Clone)]
pub struct ModelClient {
    http: reqwest::Client,
    retry: RetryPolicy,
}

impl ModelClient {
    pub fn for_endpoint(endpoint: &Endpoint, timeout: Duration, retry: RetryPolicy) -> Result<Self, EndpointError> {
        check_endpoint(&endpoint.base_url, endpoint.tls_pin)?;
        let mut builder = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(Duration::from_secs(10))
            .redirect(reqwest::redirect::Policy::none());
        if let Some(pin) = endpoint.tls_pin {
            builder = builder.use_preconfigured_tls(crate::pin::pinned_tls_config(pin));
        }
        let http = builder.build().expect("static reqwest configuration is valid");
        Ok(ModelClient { http, retry })
    }

    /// The node agent's attestation for `nonce` (`GET {origin}/attest?nonce=<hex>`, docs/gpu.md),
    /// over the same pinned transport and connection pool as the completions; the body is
    /// returned unread, for the caller to verify.
    pub async fn attestation(&self, endpoint: &Endpoint, nonce: &[u8; 32]) -> Result<Vec<u8>, ModelError> {
        let nonce: String = nonce.iter().map(|b| format!("{b:02x}")).collect();
        let url = format!("{}/attest?nonce={nonce}", origin(&endpoint.base_url));
        let failed = |a: Attempt| match a {
            Attempt::Failed(e) => e,
            Attempt::WarmingUp => ModelError::Malformed,
        };
        let response = self.http.get(url).send().await.map_err(|e| failed(transport_error(e)))?;
        let status = response.status().as_u16();
        let body = read_bounded(response).await.map_err(failed)?;
        match status {
            200 => Ok(body),
            _ => Err(ModelError::Status(status)),
        }
    }

    /// A plain chat: messages in, text out (no tools).
    pub async fn chat(&self, endpoint: &Endpoint, request: &ChatRequest) -> Result<ChatReply, ModelError> {
        let messages: Vec<ChatMessage> = request.messages.iter().map(ChatMessage::from).collect();
        let completion = Completion {
            messages: &messages,
            tools: &[],
            max_tokens: request.max_tokens,
            temperature: request.temperature,
        };
        let completed = self.complete(endpoint, completion).await?;
        Ok(ChatReply { content: completed.content, usage: completed.usage })
    }

    /// One completion, tools offered when `completion.tools` is not empty.
    pub async fn complete(&self, endpoint: &Endpoint, completion: Completion<'_>) -> Result<Completed, ModelError> {
        let mut delay = self.retry.first_delay;
        for attempt in 1..=self.retry.attempts {
            match self.complete_once(endpoint, completion).await {
                Err(Attempt::WarmingUp) if attempt < self.retry.attempts => {
                    tracing::info!(attempt, delay_ms = delay.as_millis() as u64, "GPU node warming up; retrying");
                    tokio::time::sleep(delay).await;
                    delay = (delay * 2).min(self.retry.max_delay);
                }
                Err(Attempt::WarmingUp) => return Err(ModelError::WarmingUp(attempt)),
                Err(Attempt::Failed(e)) => return Err(e),
                Ok(reply) => return Ok(reply),
            }
        }
        Err(ModelError::WarmingUp(self.retry.attempts))
    }

    async fn complete_once(&self, endpoint: &Endpoint, completion: Completion<'_>) -> Result<Completed, Attempt> {
        let url = format!("{}/chat/completions", endpoint.base_url.trim_end_matches('/'));
        let body = WireRequest {
            model: &endpoint.upstream_model,
            messages: completion.messages,
            tools: completion.tools,
            max_tokens: completion.max_tokens,
            temperature: completion.temperature,
            stream: false,
        };
        let mut req = self.http.post(url).json(&body);
        if let Some(key) = &endpoint.api_key {
            req = req.bearer_auth(key.as_str());
        }
        let response = req.send().await.map_err(transport_error)?;
        let status = response.status();
        let bytes = read_bounded(response).await?;
        if !status.is_success() {
            if is_warming_up(status.as_u16(), &bytes) {
                return Err(Attempt::WarmingUp);
            }
            if is_context_overflow(status.as_u16(), &bytes) {
                return Err(Attempt::Failed(ModelError::ContextExceeded));
            }
            if is_unparsed_output(status.as_u16(), &bytes) {
                return Err(Attempt::Failed(ModelError::UnparsedOutput));
            }
            return Err(Attempt::Failed(ModelError::Status(status.as_u16())));
        }
        let wire: WireResponse = serde_json::from_slice(&bytes).map_err(|_| Attempt::Failed(ModelError::Malformed))?;
        let choice = wire.choices.into_iter().next().ok_or(Attempt::Failed(ModelError::Malformed))?;
        let usage = wire.usage.map_or(Usage::default(), |u| Usage {
            prompt_tokens: u.prompt_tokens,
            completion_tokens: u.completion_tokens,
            total_tokens: u.total_tokens.max(u.prompt_tokens.saturating_add(u.completion_tokens)),
        });
        Ok(Completed {
            content: choice.message.content.unwrap_or_default(),
            tool_calls: choice.message.tool_calls.unwrap_or_default(),
            usage,
        })
    }
}

enum Attempt {
    WarmingUp,
    Failed(ModelError),
}

fn transport_error(e: reqwest::Error) -> Attempt {
    Attempt::Failed(if e.is_timeout() { ModelError::Timeout } else { ModelError::Unreachable })
}

/// The retryable answers of an idle node: the contract's message, or llama.cpp's 503 while
/// it loads the model.
fn is_warming_up(status: u16, body: &[u8]) -> bool {
    let text = String::from_utf8_lossy(&body[..body.len().min(4096)]).to_ascii_lowercase();
    text.contains("gpu node is warming up") || (status == 503 && text.contains("loading model"))
}

#[cfg(test)]
mod tests;

/// llama.cpp answers 400 `exceed_context_size_error`; OpenAI-style servers say
/// `context_length_exceeded`.
fn is_context_overflow(status: u16, body: &[u8]) -> bool {
    let text = String::from_utf8_lossy(&body[..body.len().min(4096)]).to_ascii_lowercase();
    status == 400 && (text.contains("exceed_context_size") || text.contains("context_length_exceeded"))
}

/// llama.cpp answers 500 `Failed to parse input at pos …` when the model's output looks like a
/// tool call its parser rejects.
fn is_unparsed_output(status: u16, body: &[u8]) -> bool {
    let text = String::from_utf8_lossy(&body[..body.len().min(4096)]).to_ascii_lowercase();
    status == 500 && text.contains("failed to parse input")
}
