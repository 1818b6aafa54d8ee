//! Accounts: bearer API keys (from configuration, or issued by wallet sign-in), their scopes,
//! and the routes that issue, list, rotate and revoke them.

pub mod keys;
pub mod routes;
pub mod sign_in;

pub use keys::{ApiKeys, Authorized, Caller, key_id, well_formed};
pub use sign_in::AccountError;

use crate::http::error::RelayError;

impl From<AccountError> for RelayError {
    fn from(e: AccountError) -> Self {
        match e {
            AccountError::BadWallet | AccountError::BadSignatureFormat => RelayError::BadRequest(e.to_string()),
            AccountError::BadChallenge => RelayError::Unauthorized("unknown, expired or already used challenge"),
            AccountError::BadSignature => {
                RelayError::Unauthorized("signature does not verify for this wallet and challenge")
            }
            AccountError::NotFound => RelayError::NotFound("no such key for this wallet"),
            AccountError::BadScopes => RelayError::input(shared::wire::codes::INVALID_FIELD, e.to_string()),
            AccountError::Store(err) => err.into(),
        }
    }
}

/// Wallet sign-in and the account's API keys.
pub fn routes() -> axum::Router<crate::state::App> {
    use axum::routing::{delete, get, post};
    axum::Router::new()
        .route("/api/v1/auth/challenge", post(routes::challenge))
        .route("/api/v1/auth/verify", post(routes::sign_in))
        .route("/api/v1/keys", get(routes::list_keys))
        .route("/api/v1/keys/{id}", delete(routes::revoke_key))
        .route("/api/v1/keys/{id}/rotate", post(routes::rotate_key))
}
