//! `deepwiki`: asks DeepWiki (Devin's AI documentation of public GitHub repositories) a
//! question about one repository, through its public MCP server.
//!
//! Provider id `deepwiki`; the base URL is the MCP endpoint itself, e.g.
//! `https://mcp.deepwiki.com/mcp` (no authentication; a configured key is sent as
//! `Authorization: Bearer`, which Devin's private MCP server uses). Documented at
//! <https://docs.devin.ai/work-with-devin/deepwiki-mcp> (tools `read_wiki_structure`,
//! `read_wiki_contents`, `ask_question`), transport per the MCP "Streamable HTTP" spec
//! (<https://modelcontextprotocol.io/specification/2025-03-26/basic/transports>).
//!
//! One call is three POSTs of JSON-RPC 2.0 to the endpoint, each with
//! `Accept: application/json, text/event-stream`:
//! 1. `initialize` (`protocolVersion` 2025-03-26); an `Mcp-Session-Id` response header, if
//!    any, is sent back on the next two requests, with `MCP-Protocol-Version`;
//! 2. the `notifications/initialized` notification (answered 202, no body);
//! 3. `tools/call` of `ask_question` with `{repoName: "owner/repo", question}`.
//!
//! A response is either one `application/json` body or a `text/event-stream` whose `data:`
//! lines carry JSON-RPC messages; the one whose `id` matches the request is the answer
//! (server notifications on the stream are skipped). The result is the text content.

use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderValue};
use serde_json::{Value, json};

use super::github;
use crate::api::{Statuses, status_error};
use crate::http::{cut, read_capped, transport_error};
use agent::tool::{Args, Tool, ToolError, ToolFuture, str_arg};
use agent::tools::{ToolContext, Upstream};

const PROVIDER: &str = "deepwiki";
const PROTOCOL_VERSION: &str = "2025-03-26";
const ACCEPT_BOTH: &str = "application/json, text/event-stream";
const MAX_BODY_BYTES: usize = 2 * 1024 * 1024;
const MAX_ANSWER_CHARS: usize = 6000;
const MAX_QUESTION_CHARS: usize = 2000;

pub struct Deepwiki {
    http: reqwest::Client,
    upstream: Option<Upstream>,
}

impl Deepwiki {
    pub fn new(ctx: &ToolContext) -> Self {
        Deepwiki { http: ctx.http.clone(), upstream: ctx.upstream(PROVIDER).cloned() }
    }
}

impl Tool for Deepwiki {
    fn name(&self) -> &'static str {
        "deepwiki"
    }
    fn call<'a>(&'a self, args: &'a Args) -> ToolFuture<'a> {
        Box::pin(async move {
            let upstream = self.upstream.as_ref().ok_or(ToolError::NotConfigured("deepwiki"))?;
            let repo = repo_arg(args)?;
            let question = str_arg(args, "question")?.trim();
            if question.chars().count() > MAX_QUESTION_CHARS {
                return Err(ToolError::BadArguments(format!(
                    "`question` must be at most {MAX_QUESTION_CHARS} characters"
                )));
            }
            let url = reqwest::Url::parse(&upstream.base_url).map_err(|_| ToolError::NotConfigured("deepwiki"))?;
            if !matches!(url.scheme(), "http" | "https") {
                return Err(ToolError::NotConfigured("deepwiki"));
            }
            let mut session = Session { http: &self.http, upstream, url, id: None, version: None };
            let result = session.ask(&repo, question).await?;
            answer(&repo, &result)
        })
    }
}

/// `owner/repo`: exactly two GitHub names.
fn repo_arg(args: &Args) -> Result<String, ToolError> {
    let repo = str_arg(args, "repo")?.trim();
    let bad = || ToolError::BadArguments("`repo` must be a GitHub repository as `owner/repo`".into());
    let (owner, name) = repo.split_once('/').ok_or_else(bad)?;
    if !github::is_name(owner) || !github::is_name(name) {
        return Err(bad());
    }
    Ok(format!("{owner}/{name}"))
}

/// The text of a `tools/call` result.
fn answer(repo: &str, result: &Value) -> Result<Value, ToolError> {
    let parts = result["content"]
        .as_array()
        .ok_or_else(|| ToolError::Upstream(format!("{PROVIDER}: the answer has no content")))?;
    let text = parts.iter().filter(|p| p["type"] == "text").filter_map(|p| p["text"].as_str()).collect::<Vec<_>>();
    let text = text.join("\n\n");
    if result["isError"] == true {
        // A tool-level error (e.g. a repository DeepWiki has not indexed): MCP reports these in
        // the result precisely so the model can read them.
        let (message, _) = cut(&text, 500);
        return Ok(json!({"repo": repo, "isError": true, "message": message}));
    }
    let (text, truncated) = cut(&text, MAX_ANSWER_CHARS);
    Ok(json!({"repo": repo, "answer": text, "truncated": truncated}))
}

/// One MCP session over the Streamable HTTP transport.
struct Session<'a> {
    http: &'a reqwest::Client,
    upstream: &'a Upstream,
    url: reqwest::Url,
    /// `Mcp-Session-Id` from the initialize response, if the server gave one.
    id: Option<HeaderValue>,
    /// The protocol version the server chose.
    version: Option<HeaderValue>,
}

impl Session<'_> {
    async fn ask(&mut self, repo: &str, question: &str) -> Result<Value, ToolError> {
        let init = json!({
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "svc-agent", "version": env!("CARGO_PKG_VERSION")}
            }
        });
        let response = self.post(&init).await?;
        if let Some(id) = response.headers().get("mcp-session-id") {
            let visible = id.as_bytes().iter().all(|b| (0x21..=0x7e).contains(b));
            if !visible || id.len() > 256 {
                return Err(ToolError::Upstream(format!("{PROVIDER}: invalid session id")));
            }
            self.id = Some(id.clone());
        }
        let result = rpc_result(response, 1).await?;
        self.version = result["protocolVersion"]
            .as_str()
            .filter(|v| v.len() <= 32 && v.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'))
            .and_then(|v| HeaderValue::from_str(v).ok());

        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let response = self.post(&initialized).await?;
        drop(response);

        let call = json!({
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "ask_question", "arguments": {"repoName": repo, "question": question}}
        });
        let response = self.post(&call).await?;
        rpc_result(response, 2).await
    }

    /// POSTs one JSON-RPC message; a non-2xx status is an error.
    async fn post(&self, message: &Value) -> Result<reqwest::Response, ToolError> {
        let mut request = self.http.post(self.url.clone()).header(ACCEPT, ACCEPT_BOTH).json(message);
        if let Some(id) = &self.id {
            request = request.header("Mcp-Session-Id", id.clone());
        }
        if let Some(version) = &self.version {
            request = request.header("MCP-Protocol-Version", version.clone());
        }
        if let Some(key) = &self.upstream.api_key {
            request = request.bearer_auth(key.as_str());
        }
        let response = request.send().await.map_err(|e| transport_error(PROVIDER, &e))?;
        let status = response.status();
        if !status.is_success() {
            return Err(status_error(PROVIDER, STATUSES, status));
        }
        Ok(response)
    }
}

/// What a status means here (500: any 5xx).
const STATUSES: Statuses = &[
    (400, "request rejected"),
    (401, "access refused"),
    (403, "access refused"),
    (404, "session or endpoint not found"),
    (406, "transport negotiation failed"),
    (415, "transport negotiation failed"),
    (429, "rate limited"),
    (500, "server error"),
];

/// Reads the JSON-RPC response with `id` from a JSON or event-stream body and returns its
/// `result`; a JSON-RPC `error` becomes an upstream error naming only its code.
async fn rpc_result(mut response: reqwest::Response, id: u64) -> Result<Value, ToolError> {
    let is_stream = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().to_ascii_lowercase().starts_with("text/event-stream"));
    let message = if is_stream {
        // Read until the matching message arrives: the stream may stay open after it.
        let mut body: Vec<u8> = Vec::new();
        let mut scanned = 0;
        let mut found = None;
        while found.is_none() {
            match response.chunk().await.map_err(|e| transport_error(PROVIDER, &e))? {
                Some(chunk) => {
                    if body.len() + chunk.len() > MAX_BODY_BYTES {
                        return Err(ToolError::Upstream(format!("{PROVIDER}: the answer is too large")));
                    }
                    body.extend_from_slice(&chunk);
                    found = scan_events(&body, &mut scanned, id, false);
                }
                None => {
                    found = scan_events(&body, &mut scanned, id, true);
                    break;
                }
            }
        }
        found
    } else {
        let body = read_capped(PROVIDER, response, MAX_BODY_BYTES).await?;
        let value: Value = serde_json::from_slice(&body)
            .map_err(|_| ToolError::Upstream(format!("{PROVIDER}: the answer is not valid JSON")))?;
        match value {
            Value::Array(batch) => batch.into_iter().find(|m| is_response_to(m, id)),
            single if is_response_to(&single, id) => Some(single),
            _ => None,
        }
    };
    let mut message = message.ok_or_else(|| ToolError::Upstream(format!("{PROVIDER}: no answer to the request")))?;
    if let Some(error) = message.get("error") {
        let code = error["code"].as_i64().map(|c| c.to_string()).unwrap_or_else(|| "?".into());
        return Err(ToolError::Upstream(format!("{PROVIDER}: JSON-RPC error {code}")));
    }
    match message.get_mut("result").map(Value::take) {
        Some(result @ Value::Object(_)) => Ok(result),
        _ => Err(ToolError::Upstream(format!("{PROVIDER}: malformed JSON-RPC response"))),
    }
}

fn is_response_to(message: &Value, id: u64) -> bool {
    message["jsonrpc"] == "2.0"
        && message["id"].as_u64() == Some(id)
        && (message.get("result").is_some() || message.get("error").is_some())
}

/// Parses the complete server-sent events in `body[*scanned..]` (all of it when `finished`),
/// advancing `scanned`, and returns the JSON-RPC response to `id` if one is among them.
fn scan_events(body: &[u8], scanned: &mut usize, id: u64, finished: bool) -> Option<Value> {
    loop {
        let rest = &body[*scanned..];
        let (event, consumed) = match find_event_end(rest) {
            Some((end, sep)) => (&rest[..end], end + sep),
            None if finished && !rest.is_empty() => (rest, rest.len()),
            None => return None,
        };
        *scanned += consumed;
        let text = String::from_utf8_lossy(event);
        let mut data = String::new();
        for line in text.lines() {
            if let Some(value) = line.strip_prefix("data:") {
                if !data.is_empty() {
                    data.push('\n');
                }
                data.push_str(value.strip_prefix(' ').unwrap_or(value));
            }
        }
        if let Ok(message) = serde_json::from_str::<Value>(&data) {
            let hit = match message {
                Value::Array(batch) => batch.into_iter().find(|m| is_response_to(m, id)),
                single if is_response_to(&single, id) => Some(single),
                _ => None,
            };
            if hit.is_some() {
                return hit;
            }
        }
    }
}

/// The end of the first event (a blank line: `\n\n`, `\r\n\r\n` or `\r\r`) and the
/// separator's length.
fn find_event_end(bytes: &[u8]) -> Option<(usize, usize)> {
    let mut i = 0;
    while i < bytes.len() {
        for sep in [&b"\r\n\r\n"[..], b"\n\n", b"\r\r"] {
            if bytes[i..].starts_with(sep) {
                return Some((i, sep.len()));
            }
        }
        i += 1;
    }
    None
}
