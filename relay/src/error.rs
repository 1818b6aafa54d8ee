//! The relay's errors and their one mapping to HTTP status and JSON body.
//!
//! Routes with a `success` field (`/tee/process`) answer `{success: false, error, message}`;
//! the others answer `{error, message}` (contract §1 rule 8 and §4). `tee_unreachable` adds
//! `teeEndpoint`. Messages never contain request or reply bodies.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};
use shared::wire::codes;

#[derive(Debug, Clone)]
pub struct ApiError {
    pub status: u16,
    pub code: &'static str,
    pub message: String,
    pub tee_endpoint: Option<String>,
    /// Add `success: false` (routes whose success bodies carry `success`).
    pub with_success: bool,
    /// More fields of the body (e.g. `/agent`'s `freeMessagesRemaining`).
    pub extra: Vec<(&'static str, Value)>,
}

impl ApiError {
    pub fn new(status: u16, code: &'static str, message: impl Into<String>) -> Self {
        ApiError { status, code, message: message.into(), tee_endpoint: None, with_success: false, extra: Vec::new() }
    }
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, codes::BAD_REQUEST, message)
    }
    pub fn unauthorized(message: impl Into<String>) -> Self {
        Self::new(401, codes::UNAUTHORIZED, message)
    }
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(404, codes::NOT_FOUND, message)
    }
    pub fn internal() -> Self {
        Self::new(500, codes::INTERNAL, "internal error")
    }
    pub fn tee_unreachable(endpoint: &str) -> Self {
        ApiError {
            tee_endpoint: Some(endpoint.to_string()),
            ..Self::new(502, codes::TEE_UNREACHABLE, "the enclave did not answer; retry, and refetch its key")
        }
    }
    pub fn with_success(mut self) -> Self {
        self.with_success = true;
        self
    }
    pub fn with_field(mut self, key: &'static str, value: Value) -> Self {
        self.extra.push((key, value));
        self
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut body = Map::new();
        if self.with_success {
            body.insert("success".into(), json!(false));
        }
        body.insert("error".into(), json!(self.code));
        body.insert("message".into(), json!(self.message));
        if let Some(endpoint) = self.tee_endpoint {
            body.insert("teeEndpoint".into(), json!(endpoint));
        }
        for (key, value) in self.extra {
            body.insert(key.into(), value);
        }
        let status = StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        (status, Json(Value::Object(body))).into_response()
    }
}

impl From<crate::store::StoreError> for ApiError {
    fn from(e: crate::store::StoreError) -> Self {
        tracing::error!(error = %e, "storage error");
        ApiError::internal()
    }
}

impl From<crate::metering::ChargeError> for ApiError {
    fn from(e: crate::metering::ChargeError) -> Self {
        use crate::metering::ChargeError;
        match e {
            ChargeError::Insufficient => {
                ApiError::new(402, codes::INSUFFICIENT_BALANCE, "the prepaid balance does not cover this call")
            }
            // `/agent` answers exhaustion with its own 200 body before this mapping.
            ChargeError::FreeTrialExhausted => {
                ApiError::new(402, "free_trial_exhausted", "no free messages left today")
            }
            ChargeError::Store(e) => e.into(),
        }
    }
}
