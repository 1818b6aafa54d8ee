//! Managed wallets (Mode A, contract §2.9, §4.3, §6; DESIGN §11; docs/wallets.md): create,
//! fund-intent, swap (a swap session the wallet funds), encrypt, shield and withdraw over the privacy back end (`backend`, the enclave pool),
//! private and public balances, the statement of reserves, the audit log, and webhooks from a
//! durable outbox.
//!
//! A wallet's key is a sealed object the enclave makes (kind `managed-wallet`, with the wallet
//! id and owner key inside), so the relay holds no key to a wallet's funds and cannot drop an
//! owner's signature requirement. A wallet belongs to the account (key id) that made it;
//! every route of it answers 403 to any other account.

pub mod backend;
pub mod bodies;
pub mod fund;
pub mod private;
pub mod records;
pub mod requests;
pub mod routes;
pub mod shield;
pub mod steps;
pub mod webhooks;
pub mod witness;

use axum::Router;
use axum::routing::{get, post};

use crate::agents::WalletsConfig;
use crate::state::{AgentsState, App};

pub use webhooks::Webhooks;

/// The managed wallets' own state (their configuration is `agents.wallets`).
pub struct Wallets {
    /// The webhook sender and its configuration.
    pub webhooks: Webhooks,
    /// Serializes this relay's updates of the privacy books (`backend`).
    pub books: tokio::sync::Mutex<()>,
    /// The freshness witness's messages (`witness`).
    pub witness: witness::WitnessQueue,
}

impl Wallets {
    pub fn new(config: &WalletsConfig) -> Self {
        Wallets { webhooks: Webhooks::new(config), books: tokio::sync::Mutex::new(()), witness: Default::default() }
    }
}

/// Starts the webhook sender, the payout worker and the book steps' recovery (`worker::start`
/// calls it when the Agent Privacy API is configured).
pub fn start(api: &AgentsState) {
    tokio::spawn(webhooks::run(api.clone()));
    tokio::spawn(private::run_payouts(api.clone()));
    tokio::spawn(private::run_book_steps(api.clone()));
}

/// Every wallet route (merged into the relay's table by `router.rs`).
pub fn routes() -> Router<App> {
    Router::new()
        .route("/agents/v1/wallets", post(routes::create))
        .route("/agents/v1/wallets/{id}/fund-intent", post(routes::fund_intent))
        .route("/agents/v1/wallets/{id}/balance", get(routes::balance))
        .route("/agents/v1/wallets/{id}/swap", post(routes::swap))
        .route("/agents/v1/wallets/{id}/encrypt", post(routes::encrypt))
        .route("/agents/v1/wallets/{id}/shield", post(routes::shield))
        .route("/agents/v1/wallets/{id}/withdraw", post(routes::withdraw))
        .route("/agents/v1/reserves", get(routes::reserves))
        .route("/agents/v1/wallets/{id}/audit", get(routes::audit))
        .route("/agents/v1/wallets/{id}/webhooks", get(routes::deliveries))
        .route("/agents/v1/wallets/{id}/requests/{nonce}", get(requests::get))
        .route("/agents/v1/wallets/{id}/certificate", get(routes::certificate))
        .route("/tee/witness/appends", get(witness::appends))
        .route("/tee/witness/answers", post(witness::answers))
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    shared::time::unix_now_ms() as i64
}

/// RFC 3339 with milliseconds, UTC.
pub fn iso_ms(ms: i64) -> String {
    let seconds = shared::time::rfc3339(ms.div_euclid(1000).max(0) as u64);
    match seconds.strip_suffix('Z') {
        Some(base) => format!("{base}.{:03}Z", ms.rem_euclid(1000)),
        None => seconds,
    }
}
