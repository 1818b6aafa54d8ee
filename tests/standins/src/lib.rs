//! Local stand-ins for third-party APIs. One module per provider; each exposes a function
//! that starts the server on an ephemeral loopback port and returns its base URL.

pub mod brave;
pub mod coingecko;
pub mod colosseum;
pub mod deepwiki;
pub mod facilitator;
pub mod github;
pub mod jupiter;
pub mod notion;
pub mod nvidia_ocsp;
pub mod openai;
pub mod paysh;
pub mod pcs;
pub mod router;
pub mod solana_rpc;
pub mod web;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

/// A running stand-in: its base URL (no trailing slash) and the server task.
pub struct Running {
    pub base_url: String,
    pub addr: SocketAddr,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The state of a stand-in that takes one bearer token and logs every request.
pub struct TokenStand {
    pub token: String,
    pub log: Log,
}

/// Serves `handle` as the fallback of a [`TokenStand`] holding `token`.
pub async fn serve_token_stand<H, T>(token: &str, handle: H) -> (Running, Log)
where
    H: axum::handler::Handler<T, Arc<TokenStand>>,
    T: 'static,
{
    let log: Log = Arc::default();
    let stand = Arc::new(TokenStand { token: token.to_string(), log: log.clone() });
    (serve(axum::Router::new().fallback(handle).with_state(stand)).await, log)
}

/// Serves `router` on 127.0.0.1 with an ephemeral port.
pub async fn serve(router: axum::Router) -> Running {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind a loopback port");
    let addr = listener.local_addr().expect("bound address");
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, router.into_make_service_with_connect_info::<SocketAddr>()).await;
    });
    Running { base_url: format!("http://{addr}"), addr, task }
}

/// One request as a stand-in received it, for tests to assert on.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: String,
    /// The path as sent, still percent-encoded.
    pub path: String,
    pub query: Option<String>,
    /// Lower-case names.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Seen {
    pub fn new(method: &Method, uri: &Uri, headers: &HeaderMap, body: &[u8]) -> Self {
        Seen {
            method: method.to_string(),
            path: uri.path().to_string(),
            query: uri.query().map(str::to_string),
            headers: headers
                .iter()
                .map(|(n, v)| (n.as_str().to_string(), String::from_utf8_lossy(v.as_bytes()).into_owned()))
                .collect(),
            body: body.to_vec(),
        }
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers.iter().find(|(n, _)| *n == name).map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }
}

/// A whole request, as the stand-ins that log every request take it.
pub(crate) struct Incoming {
    pub method: Method,
    pub uri: Uri,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Incoming {
    pub fn seen(&self) -> Seen {
        Seen::new(&self.method, &self.uri, &self.headers, &self.body)
    }
}

impl<S: Send + Sync> FromRequest<S> for Incoming {
    type Rejection = Response;

    async fn from_request(request: Request, state: &S) -> Result<Self, Response> {
        let (parts, body) = request.into_parts();
        let body = Bytes::from_request(Request::from_parts(parts.clone(), body), state)
            .await
            .map_err(IntoResponse::into_response)?;
        Ok(Incoming { method: parts.method, uri: parts.uri, headers: parts.headers, body })
    }
}

/// What a stand-in was asked, in order.
pub type Log = Arc<Mutex<Vec<Seen>>>;

/// Appends `seen` to `log` (a poisoned lock still records: a failed test must not hide requests).
pub fn record(log: &Log, seen: Seen) {
    log.lock().unwrap_or_else(|e| e.into_inner()).push(seen);
}

/// How a stand-in's later requests fail (set with [`Recorder::fail_with`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// This HTTP status, with a body the client must not repeat.
    Status(u16),
    /// 200 with a body that is not JSON.
    Garbage,
}

/// Shared with a stand-in's server: what it was asked (`S`), and how it should fail (`F`).
pub struct Recorder<S, F = Failure> {
    seen: Arc<Mutex<Vec<S>>>,
    failure: Arc<Mutex<Option<F>>>,
}

impl<S, F> Default for Recorder<S, F> {
    fn default() -> Self {
        Recorder { seen: Arc::default(), failure: Arc::new(Mutex::new(None)) }
    }
}

impl<S, F> Clone for Recorder<S, F> {
    fn clone(&self) -> Self {
        Recorder { seen: self.seen.clone(), failure: self.failure.clone() }
    }
}

impl<S: Clone, F: Copy> Recorder<S, F> {
    pub fn requests(&self) -> Vec<S> {
        self.seen.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
    pub fn fail_with(&self, failure: Option<F>) {
        *self.failure.lock().unwrap_or_else(|e| e.into_inner()) = failure;
    }
    pub(crate) fn failure(&self) -> Option<F> {
        *self.failure.lock().unwrap_or_else(|e| e.into_inner())
    }
    pub(crate) fn push(&self, seen: S) {
        self.seen.lock().unwrap_or_else(|e| e.into_inner()).push(seen);
    }
}

impl<S: Clone> Recorder<S> {
    /// The forced failure's answer, if one is set: the status with `failure_body` (a detail the
    /// client must not repeat), or 200 with a body that is not JSON. `None` means go on.
    pub(crate) fn forced_failure(&self, failure_body: &'static str) -> Option<Response> {
        match self.failure()? {
            Failure::Status(code) => {
                let status = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
                Some((status, [("content-type", "application/json")], failure_body).into_response())
            }
            Failure::Garbage => Some((StatusCode::OK, "<html>definitely not json</html>").into_response()),
        }
    }
}
