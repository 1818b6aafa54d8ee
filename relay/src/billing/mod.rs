//! Money: prepaid balances and their journal, per-call and per-token metering, the free
//! trial, usage rows, deposits and rate limits.

pub mod balances;
pub mod deposits;
pub mod metering;
pub mod rate_limit;
pub mod routes;
pub mod usage_writer;

use crate::http::error::RelayError;
use balances::BillingError;

impl From<BillingError> for RelayError {
    fn from(e: BillingError) -> Self {
        match e {
            BillingError::Insufficient => RelayError::InsufficientBalance,
            BillingError::Store(e) => e.into(),
            // The relay's own charges: a fault of its code or configuration, never the caller's.
            BillingError::UnknownCurrency(_) => RelayError::Internal("a charge in a currency this relay does not list"),
            BillingError::NotPositive => RelayError::Internal("a charge of no amount"),
        }
    }
}

/// The account's balance, usage and deposits: they take the store, the keys and the
/// deposits' own state.
pub fn routes() -> axum::Router<crate::state::App> {
    use axum::routing::get;
    axum::Router::new()
        .route("/api/v1/balance", get(routes::balance))
        .route("/api/v1/usage", get(routes::usage))
        .route("/api/v1/deposits", get(deposits::routes::list))
        .route("/api/v1/deposits/address", get(deposits::routes::address))
}
