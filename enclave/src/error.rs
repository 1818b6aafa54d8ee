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
    /// The model's GPU node did not prove itself; nothing was sent to it.
    #[error("{0}")]
    GpuNotAttested(#[from] crate::gpu_node::GateError),
    #[error("the model outside the envelope is not the one sealed inside it")]
    ModelMismatch,
    #[error("model call failed: {0}")]
    Model(ModelError),
    #[error("{0}")]
    Custody(#[from] crate::custody::CustodyError),
    #[error("{0}")]
    Swap(#[from] crate::swap::SwapError),
    #[error("{0}")]
    Funds(#[from] crate::funds::FundsError),
    #[error("internal error")]
    Internal,
}

fn custody_status_and_code(e: &crate::custody::CustodyError) -> (u16, &'static str) {
    use crate::custody::CustodyError as C;
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

fn swap_status_and_code(e: &crate::swap::SwapError) -> (u16, &'static str) {
    use crate::swap::SwapError as S;
    use crate::swap_check::CheckError as C;
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
            ProcessError::GpuNotAttested(_) => (502, codes::GPU_NOT_ATTESTED),
            ProcessError::ModelMismatch => (400, codes::MODEL_MISMATCH),
            ProcessError::Model(ModelError::Timeout) => (504, codes::MODEL_ERROR),
            ProcessError::Model(ModelError::ContextExceeded) => (400, codes::CONTEXT_LENGTH_EXCEEDED),
            ProcessError::Model(_) => (502, codes::MODEL_ERROR),
            ProcessError::Custody(e) => custody_status_and_code(e),
            ProcessError::Swap(e) => swap_status_and_code(e),
            ProcessError::Funds(crate::funds::FundsError::Swap(e)) => swap_status_and_code(e),
            ProcessError::Funds(e) => e.status_and_code().unwrap_or((500, codes::INTERNAL)),
            ProcessError::Internal => (500, codes::INTERNAL),
        }
    }
}
