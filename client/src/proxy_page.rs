//! The web app through `svc proxy` (docs/web.md): the page's files from this `svc`'s own copy
//! of the bundle (crate `web-bundle`, the bytes whose hash is published), so a careful user runs
//! the page from bytes their verified client holds, not from whatever the relay serves. The
//! page's API calls are passed to the relay unchanged (it seals and opens everything itself);
//! the development root, if any, is this `svc`'s own (`--dev-root`), never the relay's.

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderName, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get};
use std::sync::Arc;

/// What the page may ask the relay for, by route template: nothing else passes.
const PASSED: [&str; 17] = [
    "/tee/attestation",
    "/agent",
    "/tee/process",
    "/api/v1/models",
    "/api/v1/balance",
    "/api/v1/usage",
    "/api/v1/deposits",
    "/api/v1/deposits/address",
    "/api/v1/auth/challenge",
    "/api/v1/auth/verify",
    "/api/v1/keys",
    "/api/v1/keys/{id}",
    "/api/v1/keys/{id}/rotate",
    "/.well-known/x402",
    "/attestation/{address}",
    "/log/v1/sth",
    "/log/v1/proof/inclusion",
];
/// Headers passed each way.
const REQUEST_HEADERS: [HeaderName; 3] = [header::AUTHORIZATION, header::CONTENT_TYPE, header::ACCEPT];
const RESPONSE_HEADERS: [HeaderName; 2] = [header::CONTENT_TYPE, header::RETRY_AFTER];
/// The largest body passed either way (the relay's own limit on private routes is lower).
const MAX_BODY: usize = 4 << 20;

pub struct PageRelay {
    pub base: String,
    pub http: reqwest::Client,
    /// `{rootPem, measurements}` from this svc's `--dev-root` and `--measurements`.
    pub dev_trust: Option<serde_json::Value>,
}

pub fn routes(relay: PageRelay) -> Router {
    let mut router = Router::new();
    for (path, _) in web_bundle::PAGES {
        router = router.route(path, get(file));
    }
    for path in PASSED {
        router = router.route(path, any(pass));
    }
    router.route("/assets/{file}", get(file)).route("/web/dev-trust.json", get(dev_trust)).with_state(Arc::new(relay))
}

async fn file(request: Request) -> Response {
    let Some(asset) = web_bundle::for_path(request.uri().path()) else {
        return (StatusCode::NOT_FOUND, "no such file").into_response();
    };
    let mut response = ([(header::CONTENT_TYPE, asset.content_type)], asset.bytes).into_response();
    for (name, value) in web_bundle::HEADERS {
        response.headers_mut().insert(HeaderName::from_static(name), HeaderValue::from_static(value));
    }
    response
}

async fn dev_trust(State(relay): State<Arc<PageRelay>>) -> Response {
    match &relay.dev_trust {
        Some(trust) => axum::Json(trust.clone()).into_response(),
        None => (StatusCode::NOT_FOUND, axum::Json(serde_json::json!({"error": "not_found"}))).into_response(),
    }
}

fn bad_gateway(message: &str) -> Response {
    (StatusCode::BAD_GATEWAY, axum::Json(serde_json::json!({"error": "relay_unreachable", "message": message})))
        .into_response()
}

async fn pass(State(relay): State<Arc<PageRelay>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let Ok(body) = axum::body::to_bytes(body, MAX_BODY).await else {
        return (StatusCode::PAYLOAD_TOO_LARGE, "body too large").into_response();
    };
    let path = parts.uri.path_and_query().map_or(parts.uri.path(), |p| p.as_str());
    let method = reqwest::Method::from_bytes(parts.method.as_str().as_bytes()).unwrap_or(reqwest::Method::GET);
    let mut outgoing = relay.http.request(method, format!("{}{path}", relay.base.trim_end_matches('/')));
    for name in REQUEST_HEADERS {
        if let Some(value) = parts.headers.get(&name) {
            outgoing = outgoing.header(name.as_str(), value.as_bytes());
        }
    }
    if parts.method != Method::GET {
        outgoing = outgoing.body(body);
    }
    let Ok(answer) = outgoing.send().await else { return bad_gateway("the relay could not be reached") };
    let status = StatusCode::from_u16(answer.status().as_u16()).unwrap_or(StatusCode::BAD_GATEWAY);
    let headers: Vec<(HeaderName, HeaderValue)> = RESPONSE_HEADERS
        .iter()
        .filter_map(|name| {
            let value = answer.headers().get(name.as_str())?;
            Some((name.clone(), HeaderValue::from_bytes(value.as_bytes()).ok()?))
        })
        .collect();
    let Ok(bytes) = answer.bytes().await else { return bad_gateway("the relay's answer was cut off") };
    if bytes.len() > MAX_BODY {
        return bad_gateway("the relay's answer is too large");
    }
    let mut response = Response::new(Body::from(Bytes::from(bytes.to_vec())));
    *response.status_mut() = status;
    response.headers_mut().extend(headers);
    response
}
