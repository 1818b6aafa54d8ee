//! The Agent Privacy API (`/agents/v1`, contract §4.3, DESIGN §11, docs/swaps.md): quotes,
//! anonymity sets, one-shot private swaps and their sessions and receipts.
//!
//! The relay serves HTTP, prices quotes, builds the funding transaction and keeps each session
//! as a durable state machine (`sessions`, advanced by `worker`). It holds no key that moves
//! funds: the enclave makes every session key, signs every transaction of it, and reads the
//! chain itself before it does.

pub mod anonymity;
pub mod buckets;
pub mod config;
pub mod enclave;
pub mod oneshot;
pub mod params;
pub mod quote;
pub mod sessions;
pub mod views;
pub mod worker;

use std::time::Duration;

use chain::{Router, RpcChain};
use shared::address::Address;

use crate::http::error::RelayError;
use crate::state::{App, AppState};
pub use config::{AgentsConfig, MintConfig};

/// The swap side of the relay, when configured (`agents.rpcUrl` and `agents.routerUrl`).
pub struct Agents {
    pub config: AgentsConfig,
    /// The relay's own view of the chain: blockhashes for funding transactions, sending what
    /// the enclave signed, confirmations. The enclave checks everything on its own RPC.
    pub chain: RpcChain,
    pub router: Router,
    /// Wakes an idle worker when a session becomes workable.
    pub wake: tokio::sync::Notify,
    /// Managed wallets' webhooks (the sender and its configuration).
    pub wallets: crate::wallets::Webhooks,
    /// Serializes this relay's updates of the privacy books (wallets::backend).
    pub books: tokio::sync::Mutex<()>,
    /// The freshness witness's messages (wallets::witness).
    pub witness: crate::wallets::witness::WitnessQueue,
}

impl Agents {
    /// `None` when no chain or router is configured (every swap route then answers 501).
    pub fn from_config(config: &AgentsConfig) -> Result<Option<Self>, String> {
        config.check()?;
        let (Some(rpc), Some(router)) = (&config.rpc_url, &config.router_url) else { return Ok(None) };
        let timeout = Duration::from_secs(config.timeout_secs.max(1));
        let https = |url: &str| url.starts_with("https://");
        let chain = match https(rpc) {
            true => RpcChain::with_tls(rpc, timeout, chain::web_pki()),
            false => RpcChain::new(rpc, timeout),
        }
        .map_err(|e| format!("agents.rpcUrl: {e}"))?;
        let api_key = match &config.router_api_key_env {
            Some(var) => Some(std::env::var(var).map_err(|_| format!("agents.routerApiKeyEnv: ${var} is not set"))?),
            None => None,
        };
        let router = Router::new(router, api_key, timeout, https(router).then(chain::web_pki));
        let wallets = crate::wallets::Webhooks::new(&config.wallets);
        Ok(Some(Agents {
            config: config.clone(),
            chain,
            router,
            wake: tokio::sync::Notify::new(),
            wallets,
            books: tokio::sync::Mutex::new(()),
            witness: Default::default(),
        }))
    }

    /// The mint's configuration, or 400 `invalid_mint` for a mint this service does not swap.
    pub fn mint(&self, field: &str, mint: &Address) -> Result<&MintConfig, RelayError> {
        self.config.mint(mint).ok_or_else(|| {
            RelayError::input(shared::wire::codes::INVALID_MINT, format!("`{field}` is not a mint this service swaps"))
        })
    }
}

/// The configured swap side, or 501 `swaps_not_configured`.
pub fn agents(app: &AppState) -> Result<&Agents, RelayError> {
    app.agents.as_ref().ok_or(RelayError::SwapsNotConfigured)
}

/// Starts the session workers of a relay with swaps configured.
pub fn start(app: &App) {
    if let Some(agents) = &app.agents {
        for _ in 0..agents.config.workers.max(1) {
            tokio::spawn(worker::run(app.clone()));
        }
        tokio::spawn(crate::wallets::webhooks::run(app.clone()));
        tokio::spawn(crate::wallets::private::run_payouts(app.clone()));
        tokio::spawn(crate::wallets::private::run_book_steps(app.clone()));
    }
}

/// The swap routes: quotes, anonymity sets, one-shot swaps, sessions and their receipts.
pub fn routes() -> axum::Router<App> {
    use axum::routing::{get, post};
    axum::Router::new()
        .route(quote::PATH, get(quote::handle))
        .route("/agents/v1/anonymity-set", get(anonymity::handle))
        .route(oneshot::PATH, post(oneshot::start))
        .route("/agents/v1/swaps/oneshot/{id}/execute", post(oneshot::execute))
        .route("/agents/v1/sessions/{id}", get(views::session))
        .route("/agents/v1/attestations/{id}", get(views::attestation))
}
