//! Every way a relay request fails, and the one place that maps each to an HTTP status and a
//! contract code (`shared::wire::codes`).
//!
//! Bodies are `{error, message}` (contract §4), with `success: false` first on the routes whose
//! successes carry `success` (`/tee/process`, `/agent`; contract §1 rule 8). `tee_unreachable`
//! adds `teeEndpoint`. Messages never contain a request or reply body.

use agent::model::ModelError;
use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use shared::envelope::EnvelopeError;
use shared::wire::codes::{self, EnclaveCode};

use crate::store::StoreError;
use crate::x402::X402Error;

#[derive(Debug, thiserror::Error)]
pub enum RelayError {
    #[error("{0}")]
    BadRequest(String),
    #[error("missing: {}", .0.join(", "))]
    MissingFields(Vec<&'static str>),
    /// A field of the wrong type or form; `code` names which rule (`invalid_field`,
    /// `missing_prompt`, `unknown_reasoning`, `invalid_braid_options`).
    #[error("{message}")]
    Input { code: &'static str, message: String },
    #[error("{0}")]
    InvalidEnvelope(EnvelopeError),
    #[error("{0}")]
    Unauthorized(&'static str),
    #[error("{0}")]
    Forbidden(String),
    #[error("{0}")]
    NotFound(&'static str),
    #[error("this route does not take that method")]
    MethodNotAllowed,
    #[error("the request body is larger than {0} bytes")]
    PayloadTooLarge(usize),
    #[error("send the body as application/json")]
    UnsupportedMediaType,
    #[error("too many requests; retry after {0} s")]
    RateLimited(i64),
    #[error("the prepaid balance does not cover this call")]
    InsufficientBalance,
    /// `/agent` answers this with its own 200 body (contract §2.3); elsewhere it is a 402.
    #[error("no free messages left today")]
    FreeTrialExhausted,
    #[error("model `{0}` has no configured GPU-node endpoint")]
    GpuNotConfigured(String),
    #[error("the enclave did not answer; retry, and refetch its key")]
    TeeUnreachable { endpoint: String },
    /// The enclave refused, passed on with its status and its code (`None`: a code no enclave
    /// answers, passed on as `enclave_error`).
    #[error("{message}")]
    Enclave { status: u16, code: Option<EnclaveCode>, message: String },
    /// The enclave answered something the relay cannot check; nothing was stored.
    #[error("{0}")]
    EnclaveAnswer(&'static str),
    #[error("a receipt for this ciphertext already exists")]
    DuplicateReceipt,
    #[error("model call failed: {0}")]
    Model(ModelError),
    /// The client disconnected before the answer; nobody reads this error.
    #[error("the client closed the connection")]
    ClientGone,
    /// A fault of the relay or its data, never of the request: the answer says only "internal
    /// error" (`PUBLIC_INTERNAL`), the log says which.
    #[error("internal error: {0}")]
    Internal(&'static str),
    /// The database refused or failed a statement: answered as [`RelayError::Internal`].
    #[error("storage: {0}")]
    Storage(StoreError),
    #[error("the request body did not arrive in time")]
    RequestTimeout,
    #[error("the database does not answer; retry shortly")]
    DatabaseUnavailable,
    #[error(transparent)]
    X402(#[from] X402Error),
    #[error("private swaps are not configured on this relay")]
    SwapsNotConfigured,
    /// A state conflict with its code (`invalid_state`, `funding_already_used`).
    #[error("{message}")]
    Conflict { code: &'static str, message: String },
    #[error("quote router: {0}")]
    Router(chain::RouterError),
    #[error("the chain: {0}")]
    Chain(chain::ChainError),
    #[error("the freshness witness (the key holder) did not answer; nothing moved, retry shortly")]
    WitnessUnavailable,
    #[error("this owner nonce already carried another request; sign a new one")]
    IdempotencyKeyReused,
}

impl RelayError {
    /// The one mapping to HTTP status and contract code.
    pub fn status_and_code(&self) -> (u16, &str) {
        match self {
            RelayError::BadRequest(_) => (400, codes::BAD_REQUEST),
            RelayError::MissingFields(_) => (400, codes::MISSING_REQUIRED_FIELDS),
            RelayError::Input { code, .. } => (400, code),
            RelayError::InvalidEnvelope(_) => (400, codes::INVALID_ENVELOPE),
            RelayError::Unauthorized(_) => (401, codes::UNAUTHORIZED),
            RelayError::Forbidden(_) => (403, codes::FORBIDDEN),
            RelayError::NotFound(_) => (404, codes::NOT_FOUND),
            RelayError::MethodNotAllowed => (405, codes::METHOD_NOT_ALLOWED),
            RelayError::PayloadTooLarge(_) => (413, codes::PAYLOAD_TOO_LARGE),
            RelayError::UnsupportedMediaType => (415, codes::UNSUPPORTED_MEDIA_TYPE),
            RelayError::RateLimited(_) => (429, codes::RATE_LIMITED),
            RelayError::InsufficientBalance => (402, codes::INSUFFICIENT_BALANCE),
            RelayError::FreeTrialExhausted => (402, codes::FREE_TRIAL_EXHAUSTED),
            RelayError::GpuNotConfigured(_) => (501, codes::GPU_NOT_CONFIGURED),
            RelayError::TeeUnreachable { .. } => (502, codes::TEE_UNREACHABLE),
            RelayError::Enclave { status, code, .. } => {
                (*status, code.map_or(codes::ENCLAVE_ERROR, EnclaveCode::as_str))
            }
            RelayError::EnclaveAnswer(_) => (502, codes::ENCLAVE_ERROR),
            RelayError::DuplicateReceipt => (409, codes::REPLAY_DETECTED),
            RelayError::Model(ModelError::ContextExceeded) => (400, codes::CONTEXT_LENGTH_EXCEEDED),
            RelayError::Model(ModelError::Timeout) => (504, codes::MODEL_ERROR),
            RelayError::Model(_) => (502, codes::MODEL_ERROR),
            RelayError::ClientGone | RelayError::Internal(_) | RelayError::Storage(_) => (500, codes::INTERNAL),
            RelayError::RequestTimeout => (408, codes::REQUEST_TIMEOUT),
            RelayError::DatabaseUnavailable => (503, codes::DATABASE_UNAVAILABLE),
            RelayError::X402(e) => (e.status().as_u16(), e.code()),
            RelayError::SwapsNotConfigured => (501, codes::SWAPS_NOT_CONFIGURED),
            RelayError::Conflict { code, .. } => (409, code),
            RelayError::Router(chain::RouterError::Unreachable) => (502, codes::ROUTER_UNREACHABLE),
            RelayError::Router(_) => (502, codes::ROUTER_ERROR),
            RelayError::Chain(_) => (502, codes::CHAIN_UNREACHABLE),
            RelayError::WitnessUnavailable => (503, codes::WITNESS_UNAVAILABLE),
            RelayError::IdempotencyKeyReused => (422, codes::IDEMPOTENCY_KEY_REUSED),
        }
    }

    pub fn input(code: &'static str, message: impl Into<String>) -> Self {
        RelayError::Input { code, message: message.into() }
    }

    pub fn conflict(code: &'static str, message: impl Into<String>) -> Self {
        RelayError::Conflict { code, message: message.into() }
    }

    /// The typed body of this error.
    pub fn body(&self, surface: Surface) -> ErrorBody {
        let (_, code) = self.status_and_code();
        ErrorBody {
            success: surface.success.then_some(false),
            error: code.to_string(),
            message: match self {
                RelayError::Internal(_) | RelayError::Storage(_) => PUBLIC_INTERNAL.to_string(),
                _ => self.to_string(),
            },
            tee_endpoint: match self {
                RelayError::TeeUnreachable { endpoint } => Some(endpoint.clone()),
                _ => None,
            },
            free_messages_remaining: surface.free_messages_remaining,
        }
    }

    /// The response on a route of the given surface.
    pub fn respond(self, surface: Surface) -> Response {
        if let RelayError::X402(e) = self {
            return e.into_response();
        }
        if let RelayError::Internal(_) | RelayError::Storage(_) = self {
            tracing::error!(error = %self, "answered internal_error");
        }
        let (mut status, code) = self.status_and_code();
        // Encrypted `/agent` (contract §7): every failure is 500, never a plaintext fallback;
        // a model without a GPU node stays 501, as on every route (contract §2.1).
        if surface.encrypted_agent && code != codes::GPU_NOT_CONFIGURED {
            status = 500;
        }
        let body = self.body(surface);
        let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut response = (status, Json(body)).into_response();
        if let RelayError::RateLimited(seconds) = self
            && let Ok(value) = HeaderValue::from_str(&seconds.to_string())
        {
            response.headers_mut().insert(header::RETRY_AFTER, value);
        }
        response
    }
}

/// How a route renders its errors.
#[derive(Debug, Clone, Copy, Default)]
pub struct Surface {
    /// Add `success: false` (`/tee/process`, `/agent`).
    pub success: bool,
    /// `/agent` says how many free messages are left on every answer.
    pub free_messages_remaining: Option<u32>,
    /// Encrypted `/agent`: failures are 500 (but 501 stays 501).
    pub encrypted_agent: bool,
}

impl Surface {
    /// Routes whose bodies carry `success`.
    pub const SUCCESS: Surface = Surface { success: true, free_messages_remaining: None, encrypted_agent: false };
}

/// Every error body of the relay.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[schema(example = json!({"error": "missing_required_fields", "message": "missing: toMint, amount"}))]
#[serde(rename_all = "camelCase")]
pub struct ErrorBody {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub success: Option<bool>,
    pub error: String,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tee_endpoint: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub free_messages_remaining: Option<u32>,
}

impl IntoResponse for RelayError {
    fn into_response(self) -> Response {
        self.respond(Surface::default())
    }
}

/// What an internal error's answer says: the cause stays in the relay's log.
const PUBLIC_INTERNAL: &str = "internal error";

impl From<StoreError> for RelayError {
    fn from(e: StoreError) -> Self {
        if e.is_unavailable() {
            tracing::warn!(error = %e, "database unavailable");
            return RelayError::DatabaseUnavailable;
        }
        RelayError::Storage(e)
    }
}

impl From<sqlx::Error> for RelayError {
    fn from(e: sqlx::Error) -> Self {
        StoreError::from(e).into()
    }
}

impl From<EnvelopeError> for RelayError {
    fn from(e: EnvelopeError) -> Self {
        RelayError::InvalidEnvelope(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_internal_error_keeps_its_cause_for_the_log_and_answers_without_it() {
        let storage = RelayError::from(StoreError::Corrupt("a session row without its terms"));
        assert!(matches!(storage, RelayError::Storage(StoreError::Corrupt(_))));
        for e in [storage, RelayError::Internal("a kept answer lacks its session id")] {
            let body = e.body(Surface::default());
            assert_eq!(
                (e.status_and_code(), body.error.as_str(), body.message.as_str()),
                ((500, codes::INTERNAL), codes::INTERNAL, "internal error")
            );
            assert!(e.to_string().ends_with("without its terms") || e.to_string().ends_with("its session id"), "{e}");
        }
    }

    #[test]
    fn a_database_that_does_not_answer_is_unavailable_not_internal() {
        let e = RelayError::from(StoreError::Db(sqlx::Error::PoolTimedOut));
        assert_eq!(e.status_and_code(), (503, codes::DATABASE_UNAVAILABLE));
    }
}
