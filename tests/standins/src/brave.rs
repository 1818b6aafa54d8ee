//! Stand-in for the Brave Search API: `GET /res/v1/web/search`.
//!
//! `start(token)` serves on loopback and returns `(Running, Recorder)`; point the `brave`
//! upstream's base URL at `Running::base_url`. Like the real API it answers 401
//! `{"type":"ErrorResponse","error":{"code":"SUBSCRIPTION_TOKEN_INVALID",..}}` when
//! `X-Subscription-Token` is missing or differs from `token`, and 422 (`VALIDATION`) when `q`
//! is missing, empty or over 400 characters or `count` is not 1..=20. Otherwise it returns
//! `count` (default 20) web results derived from the query, the first with `<strong>`
//! highlights as Brave sends them. `Recorder::requests` lists every request (query pairs and
//! the token); `Recorder::fail_with` makes later requests fail.

use axum::Json;
use axum::Router;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Value, json};

/// One request as the stand-in saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    pub query: Vec<(String, String)>,
    pub token: Option<String>,
}

impl Seen {
    /// The first value of query parameter `name`.
    pub fn param(&self, name: &str) -> Option<&str> {
        self.query.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }
}

pub use crate::Failure;

/// What the stand-in was asked, and how it should fail.
pub type Recorder = crate::Recorder<Seen>;

/// The body of a forced failure; tests check it never reaches the model.
pub const FAILURE_BODY: &str = r#"{"type":"ErrorResponse","error":{"detail":"brave-internal-detail-7f3a"}}"#;

#[derive(Clone)]
struct App {
    token: String,
    recorder: Recorder,
}

pub async fn start(token: &str) -> (crate::Running, Recorder) {
    let recorder = Recorder::default();
    let app = App { token: token.to_string(), recorder: recorder.clone() };
    let router = Router::new().route("/res/v1/web/search", get(search)).with_state(app);
    (crate::serve(router).await, recorder)
}

fn error(status: StatusCode, code: &str, detail: &str) -> Response {
    let body = json!({
        "type": "ErrorResponse",
        "error": {"id": "00000000-0000-0000-0000-000000000000", "status": status.as_u16(), "code": code,
                  "detail": detail, "meta": {"component": "authentication"}},
        "time": 1_700_000_000
    });
    (status, Json(body)).into_response()
}

async fn search(State(app): State<App>, headers: HeaderMap, Query(query): Query<Vec<(String, String)>>) -> Response {
    let token = headers.get("x-subscription-token").and_then(|v| v.to_str().ok()).map(str::to_string);
    let seen = Seen { query, token: token.clone() };
    app.recorder.push(seen.clone());
    if token.as_deref() != Some(app.token.as_str()) {
        return error(
            StatusCode::UNAUTHORIZED,
            "SUBSCRIPTION_TOKEN_INVALID",
            "The provided subscription token is invalid.",
        );
    }
    if let Some(failure) = app.recorder.forced_failure(FAILURE_BODY) {
        return failure;
    }
    let q = seen.param("q").unwrap_or_default().to_string();
    if q.trim().is_empty() || q.chars().count() > 400 {
        return error(StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION", "Unable to validate request parameter(s)");
    }
    let count = match seen.param("count").map(str::parse::<u32>) {
        None => 20,
        Some(Ok(n)) if (1..=20).contains(&n) => n,
        Some(_) => {
            return error(StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION", "Unable to validate request parameter(s)");
        }
    };
    let results: Vec<Value> = (1..=count)
        .map(|i| {
            let title = if i == 1 { format!("<strong>{q}</strong> explained") } else { format!("Result {i} for {q}") };
            json!({
                "type": "search_result",
                "title": title,
                "url": format!("https://result{i}.example/{}", q.replace(' ', "-")),
                "is_source_local": false,
                "description": format!("About <strong>{q}</strong> &amp; more, number {i}."),
                "page_age": "2025-01-15T00:00:00",
                "profile": {"name": format!("Site {i}"), "img": "https://imgs.search.brave.com/x.png"},
                "language": "en",
                "family_friendly": true,
                "extra_snippets": ["an extra snippet the tool should drop"]
            })
        })
        .collect();
    Json(json!({
        "type": "search",
        "query": {"original": q, "show_strict_warning": false, "is_navigational": false,
                  "more_results_available": true},
        "mixed": {"type": "mixed", "main": [{"type": "web", "index": 0, "all": false}]},
        "web": {"type": "search", "results": results, "family_friendly": true}
    }))
    .into_response()
}
