use shared::receipt::ReceiptError;

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("cannot reach the relay at {0}")]
    RelayUnreachable(String),
    #[error("the relay cannot reach the enclave ({endpoint})")]
    TeeUnreachable { endpoint: String },
    /// `retry_after`: the seconds a 429's `Retry-After` asks the caller to wait.
    #[error("HTTP {status} {code}: {message}")]
    Refused { status: u16, code: String, message: String, retry_after: Option<u64> },
    #[error("the relay answered with an unexpected body ({0})")]
    Malformed(String),
    /// The chain (its RPC node) failed or refused; the relay had no part in it.
    #[error("the chain: {0}")]
    Chain(#[from] chain::ChainError),
    /// A transaction this client sent did not reach `confirmed`.
    #[error("the transaction did not land: {0:?}")]
    NotLanded(chain::Confirmation),
    #[error("the reply does not decrypt with this request's key")]
    ReplyUndecryptable,
    #[error("receipt check failed: {0}")]
    Receipt(#[from] ReceiptError),
    #[error("transparency log check failed: {0}")]
    Log(#[from] crate::log::LogError),
    #[error("receipt does not match the request: {0}")]
    Mismatch(&'static str),
    #[error("enclave key check failed: {0}")]
    BadKey(&'static str),
    #[error("no attestation policy configured: refusing to send a private request unverified")]
    NoPolicy,
    #[error("secrets: {0}")]
    Secrets(String),
    #[error("the enclave failed verification ({})", .0.reason.as_deref().unwrap_or("rejected"))]
    NotAttested(Box<crate::attest::AttestationReport>),
}

impl ClientError {
    /// Errors after which the cached enclave key must be dropped and the call retried once
    /// (contract §3 rule 4, §7 rule 3).
    pub fn means_stale_key(&self) -> bool {
        match self {
            ClientError::TeeUnreachable { .. } | ClientError::ReplyUndecryptable => true,
            ClientError::Refused { code, .. } => code == shared::wire::codes::DECRYPT_FAILED,
            _ => false,
        }
    }
}
