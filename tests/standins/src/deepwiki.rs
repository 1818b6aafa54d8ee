//! Stand-in for DeepWiki's public MCP server (<https://mcp.deepwiki.com/mcp>): JSON-RPC 2.0
//! over the MCP "Streamable HTTP" transport, protocol 2025-03-26.
//!
//! ```ignore
//! pub async fn start(mode: Mode) -> (Running, Log)
//! ```
//!
//! Starts the server; the endpoint is `/mcp`, so point the `deepwiki` upstream's base URL at
//! `format!("{}/mcp", running.base_url)`. [`Mode::Json`] answers requests with one
//! `application/json` body; [`Mode::Sse`] answers with `text/event-stream`, sending a
//! `notifications/message` event before the response to a `tools/call`. The [`Log`] records
//! every request (method, raw path, query, headers, body).
//!
//! Checked like the reference server does: POSTs must accept both `application/json` and
//! `text/event-stream` (else 406) and be `application/json` (else 415); `initialize` opens a
//! session and returns its id in `Mcp-Session-Id`; every later request must send that id back
//! (missing: 400, unknown: 404); `tools/call` before `notifications/initialized` is a JSON-RPC
//! error; an `MCP-Protocol-Version` header, when sent, must be `2025-03-26` (else 400).
//!
//! `tools/call` of `ask_question` with `{repoName: "owner/repo", question}` answers
//! `{content: [{type: "text", text}]}`. Triggers: `repoName` `nobody/nothing` answers a tool
//! error (`isError: true`), `big/answer` a 10 000-character answer, `fail/http500` HTTP 500.
//! An unknown tool is JSON-RPC error -32602.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::State;
use axum::http::{Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::{Incoming, Running};

/// How responses are framed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Json,
    Sse,
}

pub use crate::{Log, Seen};

struct Stand {
    mode: Mode,
    log: Log,
    next_session: AtomicU64,
    /// Session id → whether `notifications/initialized` arrived.
    sessions: Mutex<HashMap<String, bool>>,
}

pub async fn start(mode: Mode) -> (Running, Log) {
    let log: Log = Arc::default();
    let stand = Arc::new(Stand { mode, log: log.clone(), next_session: AtomicU64::new(1), sessions: Mutex::default() });
    let running = crate::serve(Router::new().fallback(handle).with_state(stand)).await;
    (running, log)
}

fn rpc_error(status: StatusCode, code: i64, message: &str, id: Value) -> Response {
    (status, axum::Json(json!({"jsonrpc": "2.0", "error": {"code": code, "message": message}, "id": id})))
        .into_response()
}

async fn handle(State(stand): State<Arc<Stand>>, request: Incoming) -> Response {
    crate::record(&stand.log, request.seen());
    let Incoming { method, uri, headers, body } = request;

    if uri.path() != "/mcp" {
        return (StatusCode::NOT_FOUND, "Not found").into_response();
    }
    let session = headers.get("mcp-session-id").and_then(|v| v.to_str().ok()).map(str::to_string);
    if method == Method::DELETE {
        return match session.and_then(|s| stand.sessions.lock().unwrap_or_else(|e| e.into_inner()).remove(&s)) {
            Some(_) => StatusCode::OK.into_response(),
            None => rpc_error(StatusCode::NOT_FOUND, -32001, "Session not found", Value::Null),
        };
    }
    if method != Method::POST {
        return rpc_error(StatusCode::METHOD_NOT_ALLOWED, -32000, "Method not allowed.", Value::Null);
    }
    let accept = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()).unwrap_or("");
    if !(accept.contains("application/json") && accept.contains("text/event-stream")) {
        return rpc_error(
            StatusCode::NOT_ACCEPTABLE,
            -32000,
            "Not Acceptable: Client must accept both application/json and text/event-stream",
            Value::Null,
        );
    }
    let content_type = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
    if !content_type.starts_with("application/json") {
        return rpc_error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            -32000,
            "Unsupported Media Type: Content-Type must be application/json",
            Value::Null,
        );
    }
    let Ok(message) = serde_json::from_slice::<Value>(&body) else {
        return rpc_error(StatusCode::BAD_REQUEST, -32700, "Parse error", Value::Null);
    };
    if message["jsonrpc"] != "2.0" || !message["method"].is_string() {
        return rpc_error(StatusCode::BAD_REQUEST, -32600, "Invalid Request", Value::Null);
    }
    let id = message.get("id").cloned().unwrap_or(Value::Null);
    let rpc_method = message["method"].as_str().unwrap_or("");

    if rpc_method == "initialize" {
        if session.is_some() {
            return rpc_error(StatusCode::BAD_REQUEST, -32600, "Invalid Request: Server already initialized", id);
        }
        let session = format!("dw-{:016x}", stand.next_session.fetch_add(1, Ordering::Relaxed) * 0x9e37_79b9);
        stand.sessions.lock().unwrap_or_else(|e| e.into_inner()).insert(session.clone(), false);
        let result = json!({
            "protocolVersion": "2025-03-26",
            "capabilities": {"tools": {"listChanged": true}},
            "serverInfo": {"name": "DeepWiki", "version": "0.0.1"}
        });
        let mut response = reply(stand.mode, vec![json!({"jsonrpc": "2.0", "id": id, "result": result})]);
        if let Ok(value) = session.parse() {
            response.headers_mut().insert("mcp-session-id", value);
        }
        return response;
    }

    let Some(session) = session else {
        return rpc_error(
            StatusCode::BAD_REQUEST,
            -32000,
            "Bad Request: Mcp-Session-Id header is required",
            Value::Null,
        );
    };
    let initialized = match stand.sessions.lock().unwrap_or_else(|e| e.into_inner()).get(&session) {
        Some(initialized) => *initialized,
        None => return rpc_error(StatusCode::NOT_FOUND, -32001, "Session not found", Value::Null),
    };
    if let Some(version) = headers.get("mcp-protocol-version").and_then(|v| v.to_str().ok())
        && version != "2025-03-26"
    {
        return rpc_error(
            StatusCode::BAD_REQUEST,
            -32000,
            &format!("Bad Request: Unsupported protocol version: {version}"),
            Value::Null,
        );
    }

    match rpc_method {
        "notifications/initialized" => {
            stand.sessions.lock().unwrap_or_else(|e| e.into_inner()).insert(session, true);
            StatusCode::ACCEPTED.into_response()
        }
        _ if id.is_null() => StatusCode::ACCEPTED.into_response(),
        _ if !initialized => rpc_error(StatusCode::OK, -32002, "Server not initialized", id),
        "tools/list" => reply(
            stand.mode,
            vec![json!({"jsonrpc": "2.0", "id": id, "result": {"tools": [
                {"name": "read_wiki_structure", "inputSchema": {"type": "object", "properties": {"repoName": {"type": "string"}}}},
                {"name": "read_wiki_contents", "inputSchema": {"type": "object", "properties": {"repoName": {"type": "string"}}}},
                {"name": "ask_question", "inputSchema": {"type": "object", "properties": {"repoName": {"type": "string"}, "question": {"type": "string"}}, "required": ["repoName", "question"]}}
            ]}})],
        ),
        "tools/call" => tools_call(stand.mode, id, &message["params"]),
        _ => rpc_error(StatusCode::OK, -32601, "Method not found", id),
    }
}

fn tools_call(mode: Mode, id: Value, params: &Value) -> Response {
    if params["name"] != "ask_question" {
        return rpc_error(StatusCode::OK, -32602, &format!("MCP error -32602: Tool {} not found", params["name"]), id);
    }
    let (Some(repo), Some(question)) =
        (params["arguments"]["repoName"].as_str(), params["arguments"]["question"].as_str())
    else {
        return rpc_error(StatusCode::OK, -32602, "Invalid arguments for tool ask_question", id);
    };
    let (text, is_error) = match repo {
        "fail/http500" => {
            return (StatusCode::INTERNAL_SERVER_ERROR, "internal failure: secret-stack-trace").into_response();
        }
        "nobody/nothing" => (
            "Error fetching wiki for nobody/nothing: Repository not found. Visit https://deepwiki.com to index it."
                .to_string(),
            true,
        ),
        "big/answer" => ("All work and no play. ".repeat(500), false),
        _ => (
            format!(
                "{repo} is documented on DeepWiki. Answer to \"{question}\": the entry point is `src/main.rs`, \
                 which wires the runtime.\n\nWiki pages:\n- Overview\n- Architecture"
            ),
            false,
        ),
    };
    let mut messages = Vec::new();
    if mode == Mode::Sse {
        messages.push(json!({
            "jsonrpc": "2.0",
            "method": "notifications/message",
            "params": {"level": "info", "data": "searching the wiki"}
        }));
    }
    messages.push(json!({
        "jsonrpc": "2.0",
        "id": id,
        "result": {"content": [{"type": "text", "text": text}], "isError": is_error}
    }));
    reply(mode, messages)
}

/// The messages as one JSON body (the last one) or as a server-sent event stream.
fn reply(mode: Mode, messages: Vec<Value>) -> Response {
    match mode {
        Mode::Json => {
            let last = messages.into_iter().last().unwrap_or(Value::Null);
            axum::Json(last).into_response()
        }
        Mode::Sse => {
            let mut stream = String::new();
            for message in messages {
                stream.push_str("event: message\ndata: ");
                stream.push_str(&message.to_string());
                stream.push_str("\n\n");
            }
            ([(header::CONTENT_TYPE, "text/event-stream"), (header::CACHE_CONTROL, "no-cache")], stream).into_response()
        }
    }
}
