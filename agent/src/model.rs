//! A small OpenAI-compatible chat-completions client (`POST {base}/chat/completions`).
//!
//! Only what the service needs: messages in, text and token usage out. An idle GPU node may
//! answer "GPU node is warming up" (contract §7 rule 1), and llama.cpp answers 503 "Loading
//! model" while it starts; both are retried with bounded exponential backoff. Error values
//! never carry upstream bodies, which could echo the prompt.

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

#[derive(Serialize)]
struct WireRequest<'a> {
    model: &'a str,
    messages: &'a [Message],
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

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum EndpointError {
    #[error("endpoint `{0}` is not an http(s) URL")]
    BadUrl(String),
    #[error("https endpoint `{0}` needs a TLS key pin (tlsPinSha256)")]
    MissingPin(String),
    #[error("plain http is only allowed to loopback (development); `{0}` needs https and a pin")]
    PlainHttpRemote(String),
}

/// Checks an endpoint against the transport rules: `https` with a pinned key, or plain
/// `http` to loopback only (a local development model server).
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
        "http" if matches!(host, "127.0.0.1" | "localhost" | "::1") => Ok(()),
        "http" => Err(EndpointError::PlainHttpRemote(base_url.into())),
        _ => Err(bad()),
    }
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
        let mut builder = reqwest::Client::builder().timeout(timeout).connect_timeout(Duration::from_secs(10));
        if let Some(pin) = endpoint.tls_pin {
            builder = builder.use_preconfigured_tls(crate::pin::pinned_tls_config(pin));
        }
        let http = builder.build().expect("static reqwest configuration is valid");
        Ok(ModelClient { http, retry })
    }

    pub async fn chat(&self, endpoint: &Endpoint, request: &ChatRequest) -> Result<ChatReply, ModelError> {
        let mut delay = self.retry.first_delay;
        for attempt in 1..=self.retry.attempts {
            match self.chat_once(endpoint, request).await {
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

    async fn chat_once(&self, endpoint: &Endpoint, request: &ChatRequest) -> Result<ChatReply, Attempt> {
        let url = format!("{}/chat/completions", endpoint.base_url.trim_end_matches('/'));
        let body = WireRequest {
            model: &endpoint.upstream_model,
            messages: &request.messages,
            max_tokens: request.max_tokens,
            temperature: request.temperature,
            stream: false,
        };
        let mut req = self.http.post(url).json(&body);
        if let Some(key) = &endpoint.api_key {
            req = req.bearer_auth(key.as_str());
        }
        let response = req.send().await.map_err(transport_error)?;
        let status = response.status();
        let bytes = response.bytes().await.map_err(transport_error)?;
        if !status.is_success() {
            if is_warming_up(status.as_u16(), &bytes) {
                return Err(Attempt::WarmingUp);
            }
            return Err(Attempt::Failed(ModelError::Status(status.as_u16())));
        }
        let wire: WireResponse = serde_json::from_slice(&bytes).map_err(|_| Attempt::Failed(ModelError::Malformed))?;
        let choice = wire.choices.into_iter().next().ok_or(Attempt::Failed(ModelError::Malformed))?;
        let usage = wire.usage.map_or(Usage::default(), |u| Usage {
            prompt_tokens: u.prompt_tokens,
            completion_tokens: u.completion_tokens,
            total_tokens: u.total_tokens.max(u.prompt_tokens + u.completion_tokens),
        });
        Ok(ChatReply { content: choice.message.content.unwrap_or_default(), usage })
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
