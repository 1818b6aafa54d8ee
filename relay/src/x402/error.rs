//! Typed x402 failures and their one mapping to HTTP (the x402 HTTP transport's status map):
//! 402 with the x402 body and a reason code when a payment is refused (verification, settlement,
//! reuse, requirements that were not offered), 400 for a payload that cannot be read, 502 when
//! the facilitator cannot be used, 501 when x402 is not configured. Messages never contain the
//! payment payload.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use super::facilitator::FacilitatorError;
use super::payment::PaymentError;
use super::requirements::Offer;
use crate::http::error::RelayError;
use crate::store::StoreError;
use shared::wire::codes;

#[derive(Debug, thiserror::Error)]
pub enum X402Error {
    #[error("x402 payments are not configured on this relay")]
    NotConfigured,
    #[error("{error}")]
    Malformed { error: PaymentError, offer: Box<Offer> },
    #[error("the payment does not match the offered requirements (scheme, network, amount, asset, payTo, fee payer)")]
    Mismatch { offer: Box<Offer> },
    #[error("this payment was already used; sign a new one")]
    Replay { offer: Box<Offer> },
    #[error("{message}")]
    Refused { reason: String, message: String, offer: Box<Offer> },
    #[error("the facilitator could not settle the payment; nothing was delivered")]
    SettleFailed { reason: String, offer: Box<Offer>, settlement: (&'static str, String) },
    #[error("{0}")]
    Facilitator(FacilitatorError),
    #[error("storage error: {0}")]
    Store(#[from] StoreError),
}

impl X402Error {
    pub fn status(&self) -> StatusCode {
        match self {
            X402Error::NotConfigured => StatusCode::NOT_IMPLEMENTED,
            X402Error::Malformed { .. } => StatusCode::BAD_REQUEST,
            X402Error::Mismatch { .. }
            | X402Error::Replay { .. }
            | X402Error::Refused { .. }
            | X402Error::SettleFailed { .. } => StatusCode::PAYMENT_REQUIRED,
            X402Error::Facilitator(_) => StatusCode::BAD_GATEWAY,
            X402Error::Store(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// The reason code the body's `error` carries.
    pub fn code(&self) -> &str {
        match self {
            X402Error::NotConfigured => codes::X402_NOT_CONFIGURED,
            X402Error::Malformed { error, .. } => error.code(),
            X402Error::Mismatch { .. } => codes::INVALID_PAYMENT_REQUIREMENTS,
            X402Error::Replay { .. } => codes::DUPLICATE_SETTLEMENT,
            X402Error::Refused { reason, .. } | X402Error::SettleFailed { reason, .. } => reason,
            X402Error::Facilitator(FacilitatorError::Unreachable) => codes::FACILITATOR_UNREACHABLE,
            X402Error::Facilitator(_) => codes::FACILITATOR_ERROR,
            X402Error::Store(_) => codes::INTERNAL,
        }
    }
}

impl IntoResponse for X402Error {
    fn into_response(self) -> Response {
        let status = self.status();
        let code = self.code().to_string();
        let message = self.to_string();
        match self {
            X402Error::Malformed { offer, .. }
            | X402Error::Mismatch { offer }
            | X402Error::Replay { offer }
            | X402Error::Refused { offer, .. } => offer.response(status, &code, &message, None),
            X402Error::SettleFailed { offer, settlement, .. } => {
                offer.response(status, &code, &message, Some(settlement))
            }
            X402Error::NotConfigured | X402Error::Facilitator(_) => {
                if let X402Error::Facilitator(e) = &self {
                    tracing::warn!(error = %e, "x402 facilitator failure");
                }
                let body = crate::http::error::ErrorBody {
                    success: None,
                    error: code,
                    message,
                    tee_endpoint: None,
                    free_messages_remaining: None,
                };
                (status, axum::Json(body)).into_response()
            }
            X402Error::Store(e) => RelayError::from(e).into_response(),
        }
    }
}
