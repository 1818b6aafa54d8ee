//! Every way `process` can fail, and the one place that maps each to an HTTP status and a
//! contract error code. Messages never contain prompt or reply text.

use agent::model::ModelError;
use shared::envelope::{EnvelopeError, PlaintextError};
use shared::wire::codes;

#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    #[error("request body is not a JSON object with an `encryptedPrompt` string")]
    BadRequest,
    #[error("{0}")]
    InvalidEnvelope(EnvelopeError),
    #[error("{0}")]
    DecryptFailed(&'static str),
    #[error("{0}")]
    InvalidPrompt(PlaintextError),
    #[error("this envelope (client key and nonce) was already used")]
    Replayed,
    #[error("envelope timestamp is outside the accepted window")]
    Stale,
    #[error("envelopes without a timestamp are no longer accepted in this boot; send `timestamp`")]
    TimestampRequired,
    #[error("model `{0}` has no configured GPU-node endpoint")]
    GpuNotConfigured(String),
    #[error("model call failed: {0}")]
    Model(ModelError),
    #[error("internal error")]
    Internal,
}

impl ProcessError {
    pub fn status_and_code(&self) -> (u16, &'static str) {
        match self {
            ProcessError::BadRequest => (400, codes::BAD_REQUEST),
            ProcessError::InvalidEnvelope(_) => (400, codes::INVALID_ENVELOPE),
            ProcessError::DecryptFailed(_) => (400, codes::DECRYPT_FAILED),
            ProcessError::InvalidPrompt(_) => (400, codes::INVALID_PROMPT),
            ProcessError::Replayed => (409, codes::REPLAY_DETECTED),
            ProcessError::Stale | ProcessError::TimestampRequired => (400, codes::STALE_TIMESTAMP),
            ProcessError::GpuNotConfigured(_) => (501, codes::GPU_NOT_CONFIGURED),
            ProcessError::Model(ModelError::Timeout) => (504, codes::MODEL_ERROR),
            ProcessError::Model(ModelError::ContextExceeded) => (400, codes::CONTEXT_LENGTH_EXCEEDED),
            ProcessError::Model(_) => (502, codes::MODEL_ERROR),
            ProcessError::Internal => (500, codes::INTERNAL),
        }
    }
}
