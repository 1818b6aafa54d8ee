//! x402 routes. SKELETON: to be written.

use axum::http::StatusCode;

pub async fn manifest() -> StatusCode {
    StatusCode::NOT_IMPLEMENTED
}

pub async fn chat_completions() -> StatusCode {
    StatusCode::NOT_IMPLEMENTED
}
