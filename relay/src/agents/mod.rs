//! What the two modes of the Agent Privacy API (`/agents/v1`, contract §4.3) share: the
//! `agents` configuration, the relay's chain and router clients, and the session records both
//! modes run on (a one-shot swap, and a managed wallet's swap, encrypt or shield).
//!
//! Below `swaps/` and `wallets/`, which import it and never the other way; `worker.rs`, above
//! both, advances every session.

pub mod config;
pub mod sessions;
pub mod step;
pub mod wallets_config;

use std::time::Duration;

use chain::{Router, RpcChain};
use shared::address::Address;

use crate::http::error::RelayError;
use crate::state::AppState;
pub use config::{AgentsConfig, MintConfig};
pub use wallets_config::WalletsConfig;

/// The Agent Privacy API's shared side, when configured (`agents.rpcUrl` and `agents.routerUrl`).
pub struct Agents {
    pub config: AgentsConfig,
    /// The relay's own view of the chain: blockhashes for funding transactions, sending what
    /// the enclave signed, confirmations. The enclave checks everything on its own RPC.
    pub chain: RpcChain,
    pub router: Router,
    /// Wakes an idle session worker when a session becomes workable.
    pub wake: tokio::sync::Notify,
}

impl Agents {
    /// `None` when no chain or router is configured (every swap and wallet route then answers 501).
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
        Ok(Some(Agents { config: config.clone(), chain, router, wake: tokio::sync::Notify::new() }))
    }

    /// The mint's configuration, or 400 `invalid_mint` for a mint this service does not swap.
    pub fn mint(&self, field: &str, mint: &Address) -> Result<&MintConfig, RelayError> {
        self.config.mint(mint).ok_or_else(|| {
            RelayError::input(shared::wire::codes::INVALID_MINT, format!("`{field}` is not a mint this service swaps"))
        })
    }
}

/// The configured Agent Privacy API, or 501 `swaps_not_configured`.
pub fn agents(app: &AppState) -> Result<&Agents, RelayError> {
    app.agents.as_deref().ok_or(RelayError::SwapsNotConfigured)
}

/// Wakes one idle session worker (a session just became workable).
pub fn wake(app: &AppState) {
    if let Some(agents) = &app.agents {
        agents.wake.notify_one();
    }
}
