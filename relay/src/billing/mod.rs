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
            other => {
                tracing::error!(error = %other, "billing error");
                RelayError::Internal("a billing error")
            }
        }
    }
}

/// The account's balance, usage and deposits.
pub fn routes() -> axum::Router<crate::state::App> {
    use axum::routing::get;
    axum::Router::new()
        .route("/api/v1/balance", get(routes::balance))
        .route("/api/v1/usage", get(routes::usage))
        .route("/api/v1/deposits", get(deposits::routes::list))
        .route("/api/v1/deposits/address", get(deposits::routes::address))
}
