//! Every way a request to the enclave's API can be refused, and the one place that maps each
//! to an HTTP status, a contract error code and the failure body. Messages never contain
//! prompt or reply text.

use agent::model::ModelError;
use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use shared::envelope::{EnvelopeError, PlaintextError};
use shared::wire::{FailureBody, codes::EnclaveCode};

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

fn custody_status_and_code(e: &crate::keys::custody::CustodyError) -> (u16, EnclaveCode) {
    use crate::keys::custody::CustodyError as C;
    match e {
        C::NotProvisioned => (503, EnclaveCode::NotProvisioned),
        C::Malformed(_) => (400, EnclaveCode::MalformedBundle),
        C::WrongEnclaveKey => (400, EnclaveCode::WrongEnclaveKey),
        C::DecryptFailed => (400, EnclaveCode::DecryptFailed),
        C::UnknownProvisioner => (403, EnclaveCode::UnknownProvisioner),
        C::BadSignature => (403, EnclaveCode::BadBundleSignature),
        C::Stale { .. } => (409, EnclaveCode::StaleBundle),
        C::Sealed(_) => (400, EnclaveCode::SealedObjectInvalid),
        C::UnknownKind => (400, EnclaveCode::UnknownObjectKind),
    }
}

fn swap_status_and_code(e: &crate::funds::swap::SwapError) -> (u16, EnclaveCode) {
    use crate::funds::swap::SwapError as S;
    use crate::funds::swap_check::CheckError as C;
    match e {
        S::NotConfigured => (501, EnclaveCode::SwapsNotConfigured),
        S::BadTerms(_) | S::MinOutBelowQuote(_) => (400, EnclaveCode::InvalidField),
        S::Check(C::FundingFailed) => (400, EnclaveCode::FundingFailed),
        S::Check(C::FundingWrongPayer) => (400, EnclaveCode::FundingWrongPayer),
        S::Check(C::FundingNotForThisSession) => (400, EnclaveCode::FundingNotForThisSession),
        S::Check(C::FundingWrongMint) => (400, EnclaveCode::FundingWrongMint),
        S::Check(C::FundingWrongAmount { .. }) => (400, EnclaveCode::FundingWrongAmount),
        S::Check(C::RouterTransaction(_) | C::Jupiter(_)) => (502, EnclaveCode::RouterTransactionRefused),
        S::Check(C::OutputBelowMinimum { .. }) => (502, EnclaveCode::SlippageExceeded),
        S::FundingNotFound => (404, EnclaveCode::FundingNotFound),
        S::Chain(_) => (502, EnclaveCode::ChainUnreachable),
        S::Router(_) | S::RouterTransaction(_) => (502, EnclaveCode::RouterError),
        S::NothingToDo(_) => (409, EnclaveCode::NothingToDo),
        S::Sealed => (400, EnclaveCode::SealedObjectInvalid),
    }
}

impl ApiError {
    pub fn status_and_code(&self) -> (u16, EnclaveCode) {
        match self {
            ApiError::BadRequest => (400, EnclaveCode::BadRequest),
            ApiError::Busy => (503, EnclaveCode::EnclaveBusy),
            ApiError::TimedOut => (504, EnclaveCode::EnclaveTimeout),
            ApiError::InvalidEnvelope(_) => (400, EnclaveCode::InvalidEnvelope),
            ApiError::DecryptFailed(_) => (400, EnclaveCode::DecryptFailed),
            ApiError::InvalidPrompt(_) => (400, EnclaveCode::InvalidPrompt),
            ApiError::Replayed => (409, EnclaveCode::ReplayDetected),
            ApiError::Stale | ApiError::TimestampRequired => (400, EnclaveCode::StaleTimestamp),
            ApiError::GpuNotConfigured(_) => (501, EnclaveCode::GpuNotConfigured),
            ApiError::GpuNotAttested(_) => (502, EnclaveCode::GpuNotAttested),
            ApiError::ModelMismatch => (400, EnclaveCode::ModelMismatch),
            ApiError::Model(ModelError::Timeout) => (504, EnclaveCode::ModelError),
            ApiError::Model(ModelError::ContextExceeded) => (400, EnclaveCode::ContextLengthExceeded),
            ApiError::Model(_) => (502, EnclaveCode::ModelError),
            ApiError::Custody(e) => custody_status_and_code(e),
            ApiError::Swap(e) => swap_status_and_code(e),
            ApiError::Funds(crate::funds::pool::FundsError::Swap(e)) => swap_status_and_code(e),
            ApiError::Funds(e) => e.status_and_code().unwrap_or((500, EnclaveCode::Internal)),
            ApiError::Internal => (500, EnclaveCode::Internal),
        }
    }
}

/// The contract code of a refused request, kept on its response for the request log.
#[derive(Debug, Clone, Copy)]
pub struct Refusal(pub EnclaveCode);

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, code) = self.status_and_code();
        let body = FailureBody { success: false, error: code.as_str().into(), message: self.to_string() };
        let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut response = (status, Json(body)).into_response();
        response.extensions_mut().insert(Refusal(code));
        response
    }
}
