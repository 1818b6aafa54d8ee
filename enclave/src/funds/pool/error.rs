//! Every way a pool step fails, and its status and contract code (`crate::error` maps them).

use super::book::BookError;
use crate::funds::swap::SwapError;
use shared::wire::codes::EnclaveCode;
use shared::witness::WitnessError;

#[derive(Debug, thiserror::Error)]
pub enum FundsError {
    #[error("{0}")]
    Swap(#[from] SwapError),
    #[error("the request body is not what this step takes: {0}")]
    BadBody(&'static str),
    #[error("this wallet has an owner: the request must carry the owner's signature headers")]
    OwnerSignatureRequired,
    #[error("the owner's signature does not verify over this request")]
    OwnerSignatureInvalid,
    #[error("this request was carried out and its payout landed; the relay keeps its answer")]
    Done,
    #[error("the same request is being carried out; ask again for its answer")]
    InProgress,
    #[error("this owner nonce carried another request")]
    KeyReused,
    #[error("the owner's timestamp is outside the accepted window")]
    Stale,
    #[error("the owner signed this request before this enclave was provisioned; sign it again")]
    PredatesBoot,
    #[error("{0}")]
    Book(#[from] BookError),
    #[error("the wallet's public token account holds less than this amount")]
    InsufficientPublic,
    #[error("the witness moved on from this book; read the newest book and retry")]
    BookStale,
    #[error("this is not the book the freshness witness acknowledged last for its mint")]
    BookRollback,
    #[error("the witness answer does not verify: {0}")]
    Witness(#[from] WitnessError),
    #[error("the pool key {0} holds too little SOL for fees and token-account rent; the operator funds it")]
    PoolUnfunded(String),
    #[error("amount is below this mint's minimum of {0} base units")]
    BelowMinimum(u64),
    #[error("nothing is signed until {0} more blocks pass (what earlier boots signed must settle)")]
    WarmingUp(u64),
    #[error("internal error")]
    Internal,
}

impl FundsError {
    pub fn status_and_code(&self) -> Option<(u16, EnclaveCode)> {
        Some(match self {
            FundsError::Swap(_) => return None,
            FundsError::Book(BookError::AlreadyCredited | BookError::BeforeHorizon(_)) => {
                (409, EnclaveCode::NothingToDo)
            }
            FundsError::BadBody(_) | FundsError::Book(BookError::Overflow) => (400, EnclaveCode::InvalidField),
            FundsError::BelowMinimum(_) => (400, EnclaveCode::InvalidField),
            FundsError::Witness(_) => (400, EnclaveCode::InvalidField),
            FundsError::OwnerSignatureRequired => (401, EnclaveCode::OwnerSignatureRequired),
            FundsError::OwnerSignatureInvalid => (403, EnclaveCode::OwnerSignatureInvalid),
            FundsError::Done => (409, EnclaveCode::ReplayDetected),
            FundsError::InProgress => (409, EnclaveCode::RequestInProgress),
            FundsError::KeyReused => (422, EnclaveCode::IdempotencyKeyReused),
            FundsError::Stale => (400, EnclaveCode::StaleTimestamp),
            FundsError::PredatesBoot => (400, EnclaveCode::RequestPredatesBoot),
            FundsError::Book(BookError::Insufficient) => (409, EnclaveCode::InsufficientPrivateBalance),
            FundsError::InsufficientPublic => (409, EnclaveCode::InsufficientPublicBalance),
            FundsError::Book(BookError::Short { .. }) => (409, EnclaveCode::ReservesShort),
            FundsError::BookStale => (409, EnclaveCode::BookStale),
            FundsError::BookRollback => (409, EnclaveCode::BookRollback),
            FundsError::WarmingUp(_) => (503, EnclaveCode::PoolWarmingUp),
            FundsError::PoolUnfunded(_) => (503, EnclaveCode::PoolUnfunded),
            FundsError::Internal => (500, EnclaveCode::Internal),
        })
    }
}

pub(super) fn sealed() -> FundsError {
    FundsError::Swap(SwapError::Sealed)
}

impl From<chain::ChainError> for FundsError {
    fn from(e: chain::ChainError) -> Self {
        FundsError::Swap(SwapError::Chain(e))
    }
}

pub(super) fn nothing(why: &'static str) -> FundsError {
    FundsError::Swap(SwapError::NothingToDo(why))
}
