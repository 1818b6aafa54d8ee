//! What can go wrong talking to an RPC node. No variant carries a request body or a URL (a
//! URL may hold an API key); RPC messages are the node's own words.

#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum ChainError {
    /// No answer: connection refused, timeout, TLS failure, or an HTTP error without a JSON-RPC body.
    #[error("RPC node unreachable: {0}")]
    Unreachable(String),
    /// A JSON-RPC error not classified below.
    #[error("RPC error {code}: {message}")]
    Rpc { code: i64, message: String },
    /// `sendTransaction` of a transaction the chain has already seen (a replay or a resend).
    #[error("transaction already processed")]
    AlreadyProcessed,
    /// The transaction's blockhash is unknown or expired: rebuild with a fresh one.
    #[error("blockhash not found")]
    BlockhashNotFound,
    /// Not enough lamports for the fee or rent, or not enough tokens; the node's message.
    #[error("insufficient funds: {0}")]
    InsufficientFunds(String),
    /// An answer that is not the JSON-RPC shape expected for the method.
    #[error("malformed RPC answer to {method}: {detail}")]
    Malformed { method: &'static str, detail: String },
    /// A caller's input this crate refuses before sending (e.g. a URL that does not parse).
    #[error("invalid request: {0}")]
    Invalid(&'static str),
}

impl ChainError {
    pub(crate) fn malformed(method: &'static str, detail: impl std::fmt::Display) -> Self {
        ChainError::Malformed { method, detail: detail.to_string() }
    }
}
