//! A scripted OpenAI-compatible model server (`POST /v1/chat/completions`).
//!
//! `start(script)` serves one scripted turn per request, in order; once the script is used
//! up the last turn repeats (so "always call a tool" scripts test the iteration cap). Every
//! request body is recorded. Usage of request n (from 1) is `prompt_tokens = 100 + n`,
//! `completion_tokens = 10 + n`, so tests can check sums.
//!
//! Answers follow the Chat Completions shape: `choices[0].message` with `content` and, for
//! tool turns, `tool_calls[{id, type: "function", function: {name, arguments}}]` where
//! `arguments` is a JSON string, `finish_reason` `tool_calls` or `stop`.

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};

/// One scripted answer.
#[derive(Debug, Clone)]
pub enum Turn {
    /// A final text answer.
    Text(String),
    /// Tool calls: `(name, raw arguments text)`, exactly as the model would send them.
    ToolCalls(Vec<(String, String)>),
    /// An HTTP error with this body.
    Fail(u16, String),
    /// This turn, after a delay (a slow GPU node).
    Slow(std::time::Duration, Box<Turn>),
}

impl Turn {
    pub fn text(s: &str) -> Turn {
        Turn::Text(s.into())
    }
    pub fn call(name: &str, args: Value) -> Turn {
        Turn::ToolCalls(vec![(name.into(), args.to_string())])
    }
}

#[derive(Clone)]
struct Script {
    turns: Arc<Vec<Turn>>,
    seen: Arc<Mutex<Vec<Value>>>,
}

/// Requests the server has seen, as parsed JSON bodies.
#[derive(Clone)]
pub struct Seen(Arc<Mutex<Vec<Value>>>);

impl Seen {
    pub fn all(&self) -> Vec<Value> {
        self.0.lock().map(|v| v.clone()).unwrap_or_default()
    }
    pub fn count(&self) -> usize {
        self.all().len()
    }
}

/// Starts the server; the base URL to configure is `{running.base_url}/v1`.
pub async fn start(turns: Vec<Turn>) -> (crate::Running, Seen) {
    assert!(!turns.is_empty(), "a script needs at least one turn");
    let seen = Arc::new(Mutex::new(Vec::new()));
    let script = Script { turns: Arc::new(turns), seen: seen.clone() };
    let router = Router::new().route("/v1/chat/completions", post(complete)).with_state(script);
    (crate::serve(router).await, Seen(seen))
}

async fn complete(State(script): State<Script>, body: String) -> Response {
    let Ok(request) = serde_json::from_str::<Value>(&body) else {
        let error = json!({"error": {"message": "invalid JSON", "type": "invalid_request_error"}});
        return (StatusCode::BAD_REQUEST, axum::Json(error)).into_response();
    };
    let n = {
        let Ok(mut seen) = script.seen.lock() else {
            return StatusCode::INTERNAL_SERVER_ERROR.into_response();
        };
        seen.push(request.clone());
        seen.len()
    };
    let mut turn = script.turns.get(n - 1).or(script.turns.last()).cloned().unwrap_or(Turn::text(""));
    while let Turn::Slow(delay, inner) = turn {
        tokio::time::sleep(delay).await;
        turn = *inner;
    }
    let usage = json!({"prompt_tokens": 100 + n, "completion_tokens": 10 + n, "total_tokens": 110 + 2 * n});
    let (message, finish) = match turn {
        Turn::Text(text) => (json!({"role": "assistant", "content": text}), "stop"),
        Turn::ToolCalls(calls) => {
            let calls: Vec<Value> = calls
                .into_iter()
                .enumerate()
                .map(|(i, (name, args))| {
                    json!({"id": format!("call_{n}_{i}"), "type": "function",
                           "function": {"name": name, "arguments": args}})
                })
                .collect();
            (json!({"role": "assistant", "content": "", "tool_calls": calls}), "tool_calls")
        }
        Turn::Fail(status, body) => {
            let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            return (status, body).into_response();
        }
        Turn::Slow(..) => unreachable!("delays were taken above"),
    };
    axum::Json(json!({
        "id": format!("chatcmpl-{n}"),
        "object": "chat.completion",
        "created": 1_700_000_000 + n,
        "model": request.get("model").cloned().unwrap_or(Value::Null),
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": usage,
    }))
    .into_response()
}
