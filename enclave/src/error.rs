//! Every way a request to the enclave's API can be refused, and the one place that maps each
//! to an HTTP status, a contract error code and the failure body. Messages never contain
//! prompt or reply text.

use agent::model::ModelError;
use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use shared::envelope::{EnvelopeError, PlaintextError};
use shared::wire::{FailureBody, codes};

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("request body is not a JSON object with an `encryptedPrompt` string")]
    BadRequest,
    #[error("the enclave is at its limit of requests in flight; retry shortly")]
    Busy,
    #[error("the request took too long")]
    TimedOut,
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
    /// The model's GPU node did not prove itself; nothing was sent to it.
    #[error("{0}")]
    GpuNotAttested(#[from] crate::inference::gpu_node::GateError),
    #[error("the model outside the envelope is not the one sealed inside it")]
    ModelMismatch,
    #[error("model call failed: {0}")]
    Model(ModelError),
    #[error("{0}")]
    Custody(#[from] crate::keys::custody::CustodyError),
    #[error("{0}")]
    Swap(#[from] crate::funds::swap::SwapError),
    #[error("{0}")]
    Funds(#[from] crate::funds::pool::FundsError),
    #[error("internal error")]
    Internal,
}

fn custody_status_and_code(e: &crate::keys::custody::CustodyError) -> (u16, &'static str) {
    use crate::keys::custody::CustodyError as C;
    match e {
        C::NotProvisioned => (503, codes::NOT_PROVISIONED),
        C::Malformed(_) => (400, codes::MALFORMED_BUNDLE),
        C::WrongEnclaveKey => (400, codes::WRONG_ENCLAVE_KEY),
        C::DecryptFailed => (400, codes::DECRYPT_FAILED),
        C::UnknownProvisioner => (403, codes::UNKNOWN_PROVISIONER),
        C::BadSignature => (403, codes::BAD_BUNDLE_SIGNATURE),
        C::Stale { .. } => (409, codes::STALE_BUNDLE),
        C::Sealed(_) => (400, codes::SEALED_OBJECT_INVALID),
        C::UnknownKind => (400, codes::UNKNOWN_OBJECT_KIND),
    }
}

fn swap_status_and_code(e: &crate::funds::swap::SwapError) -> (u16, &'static str) {
    use crate::funds::swap::SwapError as S;
    use crate::funds::swap_check::CheckError as C;
    match e {
        S::NotConfigured => (501, codes::SWAPS_NOT_CONFIGURED),
        S::BadTerms(_) | S::MinOutBelowQuote(_) => (400, codes::INVALID_FIELD),
        S::Check(C::FundingFailed) => (400, codes::FUNDING_FAILED),
        S::Check(C::FundingWrongPayer) => (400, codes::FUNDING_WRONG_PAYER),
        S::Check(C::FundingNotForThisSession) => (400, codes::FUNDING_NOT_FOR_THIS_SESSION),
        S::Check(C::FundingWrongMint) => (400, codes::FUNDING_WRONG_MINT),
        S::Check(C::FundingWrongAmount { .. }) => (400, codes::FUNDING_WRONG_AMOUNT),
        S::Check(C::RouterTransaction(_) | C::Jupiter(_)) => (502, codes::ROUTER_TRANSACTION_REFUSED),
        S::Check(C::OutputBelowMinimum { .. }) => (502, codes::SLIPPAGE_EXCEEDED),
        S::FundingNotFound => (404, codes::FUNDING_NOT_FOUND),
        S::Chain(_) => (502, codes::CHAIN_UNREACHABLE),
        S::Router(_) => (502, codes::ROUTER_ERROR),
        S::NothingToDo(_) => (409, codes::NOTHING_TO_DO),
        S::Sealed => (400, codes::SEALED_OBJECT_INVALID),
    }
}

impl ApiError {
    pub fn status_and_code(&self) -> (u16, &'static str) {
        match self {
            ApiError::BadRequest => (400, codes::BAD_REQUEST),
            ApiError::Busy => (503, codes::ENCLAVE_BUSY),
            ApiError::TimedOut => (504, codes::ENCLAVE_TIMEOUT),
            ApiError::InvalidEnvelope(_) => (400, codes::INVALID_ENVELOPE),
            ApiError::DecryptFailed(_) => (400, codes::DECRYPT_FAILED),
            ApiError::InvalidPrompt(_) => (400, codes::INVALID_PROMPT),
            ApiError::Replayed => (409, codes::REPLAY_DETECTED),
            ApiError::Stale | ApiError::TimestampRequired => (400, codes::STALE_TIMESTAMP),
            ApiError::GpuNotConfigured(_) => (501, codes::GPU_NOT_CONFIGURED),
            ApiError::GpuNotAttested(_) => (502, codes::GPU_NOT_ATTESTED),
            ApiError::ModelMismatch => (400, codes::MODEL_MISMATCH),
            ApiError::Model(ModelError::Timeout) => (504, codes::MODEL_ERROR),
            ApiError::Model(ModelError::ContextExceeded) => (400, codes::CONTEXT_LENGTH_EXCEEDED),
            ApiError::Model(_) => (502, codes::MODEL_ERROR),
            ApiError::Custody(e) => custody_status_and_code(e),
            ApiError::Swap(e) => swap_status_and_code(e),
            ApiError::Funds(crate::funds::pool::FundsError::Swap(e)) => swap_status_and_code(e),
            ApiError::Funds(e) => e.status_and_code().unwrap_or((500, codes::INTERNAL)),
            ApiError::Internal => (500, codes::INTERNAL),
        }
    }
}

/// The contract code of a refused request, kept on its response for the request log.
#[derive(Debug, Clone, Copy)]
pub struct Refusal(pub &'static str);

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, code) = self.status_and_code();
        let body = FailureBody { success: false, error: code.into(), message: self.to_string() };
        let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut response = (status, Json(body)).into_response();
        response.extensions_mut().insert(Refusal(code));
        response
    }
}
