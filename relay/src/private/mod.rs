//! The one private pipeline. Every route that carries ciphertext (`/tee/process`, chat
//! completions, the x402 route, encrypted `/agent`) is a thin adapter over [`run`]: its body
//! is read once ([`crate::http::body`]) and parsed once into one typed request ([`request`]); then, in a task
//! of its own so a client that disconnects cannot stop it half-way: charge (key, x402 or free
//! trial), forward, verify and commit the receipt ([`forward`]), and settle or refund.
//!
//! The relay never opens what it forwards.

pub mod chat_completions;
pub mod encrypted_agent;
pub mod forward;
pub mod request;
pub mod tee_process;
pub mod x402_chat;

use shared::wire::OnchainAttestation;

use crate::billing::metering::{self, Bill, Paid, Payer, Price};
use crate::http::error::RelayError;
use crate::state::App;
pub use forward::{EnclaveReply, EnclaveRoute};
pub use request::SealedRequest;

/// One private call, checked and ready to charge.
pub struct Call {
    pub route: EnclaveRoute,
    /// The public route, for the usage row.
    pub usage_route: &'static str,
    pub request: SealedRequest,
    pub payer: Payer,
    pub price: Price,
}

/// A call that succeeded: the enclave's answer and its committed receipt.
pub struct Answer<T> {
    pub enclave: T,
    pub onchain: OnchainAttestation,
}

/// Charge, forward, check and commit the receipt, settle; refund on any failure.
pub async fn run<T: EnclaveReply>(app: &App, call: Call) -> Result<Paid<Answer<T>>, RelayError> {
    let Call { route, usage_route, request, payer, price } = call;
    let bill = Bill { payer, price, route: usage_route, model: request.model().to_string() };
    metering::paid(app, bill, move |app| async move {
        let (enclave, onchain) = forward::exchange::<T>(&app, route, &request).await?;
        let usage = enclave.usage();
        Ok((Answer { enclave, onchain }, usage))
    })
    .await
}

/// The private routes: each forwards a sealed request to the enclave through the one pipeline.
pub fn routes() -> axum::Router<App> {
    use axum::routing::post;
    axum::Router::new()
        .route("/tee/process", post(tee_process::handle))
        .route("/api/v1/chat/completions", post(chat_completions::handle))
        .route("/api/v1/x402/chat/completions", post(x402_chat::handle))
}
