//! One tool call as one request to the relay's own router: the caller's headers that matter
//! (its key, its x402 payment, its network address) go along; the route's JSON answer comes
//! back as the tool's result, or, for any non-2xx answer, as a tool error with the route's
//! `{error, message}` and its status.

use std::net::SocketAddr;

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{HeaderMap, HeaderValue, Method, Request, header};
use rmcp::model::{CallToolResult, ContentBlock, MetaObject};
use serde_json::{Map, Value, json};
use tower::ServiceExt;

/// Largest route answer a tool passes on.
const MAX_ANSWER: usize = 4 << 20;

/// What the tool asks of a route.
pub struct RouteCall {
    pub method: Method,
    /// Path and query.
    pub uri: String,
    pub body: Option<Value>,
    /// An x402 payment payload (JSON) to send as `X-PAYMENT`.
    pub payment: Option<Value>,
}

/// Runs `call` through `api` as the MCP request `caller` would have sent it.
pub async fn run(api: &axum::Router, caller: Option<&axum::http::request::Parts>, call: RouteCall) -> CallToolResult {
    let mut request = Request::builder().method(call.method).uri(&call.uri);
    if let Some(parts) = caller {
        if let Some(auth) = parts.headers.get(header::AUTHORIZATION) {
            request = request.header(header::AUTHORIZATION, auth.clone());
        }
        for name in ["x-forwarded-for"] {
            if let Some(v) = parts.headers.get(name) {
                request = request.header(name, v.clone());
            }
        }
    }
    if let Some(payment) = &call.payment {
        let encoded = shared::b64::encode(payment.to_string());
        match HeaderValue::from_str(&encoded) {
            Ok(v) => request = request.header("x-payment", v),
            Err(_) => return refused(400, "invalid_field", "the x402 payment does not fit a header", None),
        }
    }
    let body = match &call.body {
        Some(b) => {
            request = request.header(header::CONTENT_TYPE, "application/json");
            Body::from(b.to_string())
        }
        None => Body::empty(),
    };
    let Ok(mut request) = request.body(body) else {
        return refused(400, "invalid_field", "the tool's arguments do not make a request", None);
    };
    if let Some(peer) = caller.and_then(|p| p.extensions.get::<ConnectInfo<SocketAddr>>()) {
        request.extensions_mut().insert(*peer);
    }
    let Ok(response) = api.clone().oneshot(request).await;
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let Ok(bytes) = axum::body::to_bytes(response.into_body(), MAX_ANSWER).await else {
        return refused(502, "internal_error", "the route's answer could not be read", None);
    };
    let value: Value =
        serde_json::from_slice(&bytes).unwrap_or_else(|_| json!({"text": String::from_utf8_lossy(&bytes)}));
    let meta = settlement(&headers);
    if (200..300).contains(&status) {
        let mut result = CallToolResult::success(vec![ContentBlock::text(value.to_string())]);
        result.structured_content = Some(value);
        result.meta = meta;
        return result;
    }
    let mut error = value;
    if let Some(object) = error.as_object_mut() {
        object.insert("status".into(), json!(status));
    }
    let mut result = CallToolResult::error(vec![ContentBlock::text(error.to_string())]);
    result.structured_content = Some(error);
    result.meta = meta;
    result
}

/// A refusal made here, before any route ran, in the routes' shape.
pub fn refused(status: u16, code: &str, message: &str, meta: Option<MetaObject>) -> CallToolResult {
    let error = json!({"error": code, "message": message, "status": status});
    let mut result = CallToolResult::error(vec![ContentBlock::text(error.to_string())]);
    result.structured_content = Some(error);
    result.meta = meta;
    result
}

/// The x402 settlement of a paid route, as the MCP convention carries it:
/// `_meta["x402/payment-response"]`.
fn settlement(headers: &HeaderMap) -> Option<MetaObject> {
    let value = headers.get("x-payment-response").or_else(|| headers.get("payment-response"))?;
    let decoded = shared::b64::decode(value.to_str().ok()?).ok()?;
    let parsed: Value = serde_json::from_slice(&decoded).ok()?;
    let mut map = Map::new();
    map.insert("x402/payment-response".into(), parsed);
    Some(MetaObject(map))
}
