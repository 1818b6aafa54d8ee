//! The state every handler shares. Its own module, so subsystems import it without importing
//! each other's routes.

use std::collections::BTreeMap;
use std::sync::Arc;

use ed25519_dalek::SigningKey;

use crate::accounts::ApiKeys;
use crate::agents::Agents;
use crate::billing::rate_limit::RateLimiter;
use crate::config::RelayConfig;
use crate::enclaves::EnclavePool;
use crate::plain_agent::PlainAgent;
use crate::receipts::Receipts;
use crate::store::Store;
use crate::x402::X402;

pub struct AppState {
    pub enclaves: Arc<EnclavePool>,
    pub keys: Arc<ApiKeys>,
    pub store: Store,
    /// Paid calls' charges and completions, written in groups.
    pub usage: crate::billing::usage_writer::UsageWriter,
    /// Commits, the chain writer and the transparency log.
    pub receipts: Arc<Receipts>,
    /// Base of links the relay hands out (`explorerUrl`, x402 resources).
    pub public_url: String,
    pub prices: Prices,
    /// The plaintext `/agent` path (models and tools the relay calls itself).
    pub plain: PlainAgent,
    pub free_per_day: u32,
    pub peers: crate::http::peer::Peers,
    /// The origin sign-in messages name.
    pub sign_in: crate::accounts::sign_in::Origin,
    pub max_history_turns: u32,
    pub x402: Arc<X402>,
    pub rate_limiter: RateLimiter,
    /// The Agent Privacy API, when a chain and a router are configured.
    pub agents: Option<Arc<Agents>>,
    /// Managed wallets' webhooks, book lock and witness queue (used only with `agents`).
    pub wallets: Arc<crate::wallets::Wallets>,
    pub discovery: crate::discovery::DiscoveryConfig,
    /// Deposits from the chain, when configured.
    pub deposits: Arc<crate::billing::deposits::Deposits>,
    /// The OpenAPI documents, built at start.
    pub openapi: crate::discovery::openapi::Documents,
    /// The counters `GET /metrics` shows.
    pub metrics: Arc<crate::metrics::Metrics>,
    /// The web app's development trust, when configured.
    pub web: crate::web::WebConfig,
    /// Where collateral for quotes without it comes from (`collateral.pccsUrl`).
    pub collateral: Option<Arc<crate::enclaves::CollateralSource>>,
}

/// What calls cost, in stablecoin base units.
#[derive(Debug, Clone)]
pub struct Prices {
    /// Catalog id → price per million tokens (chat completions).
    pub per_million_tokens: BTreeMap<String, u64>,
    /// One `/agent` call.
    pub agent_call: u64,
    /// One `/tee/process` call.
    pub tee_process_call: u64,
    /// Currency (other than the stablecoin) → what calls cost in it.
    pub other: BTreeMap<String, crate::billing::metering::PriceTable>,
}

/// The state the router holds: shared, cheap to clone. A handler or worker that needs one
/// subsystem takes that subsystem's own state (`State<Arc<Receipts>>`, through axum's `FromRef`),
/// so what it can touch is in its signature.
#[derive(Clone)]
pub struct App(Arc<AppState>);

impl App {
    pub fn new(state: AppState) -> Self {
        App(Arc::new(state))
    }
}

impl std::ops::Deref for App {
    type Target = AppState;
    fn deref(&self) -> &AppState {
        &self.0
    }
}

/// What the Agent Privacy API's session worker, the managed wallets' workers and most of their
/// routes touch: the store, the enclaves, the receipts (a settled swap's commit and its explorer
/// link), the wallets' own state, and the chain and router when configured. Taken from the app
/// by `FromRef`; the routes that charge a call (billing) or take x402 still take the whole `App`.
#[derive(Clone)]
pub struct AgentsState {
    pub store: Store,
    pub enclaves: Arc<EnclavePool>,
    pub receipts: Arc<Receipts>,
    pub wallets: Arc<crate::wallets::Wallets>,
    /// None when no chain or router is configured (every route then answers 501).
    pub agents: Option<Arc<Agents>>,
    /// Base of the links the routes hand out (a receipt's `explorerUrl`).
    pub public_url: String,
}

impl AgentsState {
    /// The configured Agent Privacy API, or `swaps_not_configured` (501).
    pub fn configured(&self) -> Result<&Agents, crate::http::error::RelayError> {
        self.agents.as_deref().ok_or(crate::http::error::RelayError::SwapsNotConfigured)
    }
}

impl axum::extract::FromRef<App> for AgentsState {
    fn from_ref(app: &App) -> Self {
        AgentsState {
            store: app.store.clone(),
            enclaves: app.enclaves.clone(),
            receipts: app.receipts.clone(),
            wallets: app.wallets.clone(),
            agents: app.agents.clone(),
            public_url: app.public_url.clone(),
        }
    }
}

impl AppState {
    /// Everything the handlers share, from the configuration, over an open store, the ledger
    /// key and the enclaves. Starts nothing: the workers are started by whoever serves.
    pub fn new(
        config: &RelayConfig,
        store: Store,
        key: SigningKey,
        enclaves: Arc<EnclavePool>,
    ) -> Result<AppState, String> {
        let deposits = Arc::new(crate::billing::deposits::Deposits::from_config(
            &config.deposits,
            store.clone(),
            enclaves.clone(),
        )?);
        Ok(AppState {
            deposits,
            enclaves,
            keys: Arc::new(ApiKeys::new(&config.api_keys, store.clone())),
            usage: crate::billing::usage_writer::UsageWriter::new(store.clone()),
            receipts: Arc::new(Receipts::new(config, store.clone(), key)?),
            store,
            public_url: config.public_url(),
            prices: Prices {
                per_million_tokens: config.price_per_million_tokens.clone(),
                agent_call: config.agent_price_per_call,
                tee_process_call: config.tee_process_price_per_call,
                other: config.currency_prices.clone(),
            },
            plain: PlainAgent::from_config(config).map_err(|e| e.to_string())?,
            free_per_day: config.free_messages_per_day,
            sign_in: config.sign_in_origin(),
            peers: crate::http::peer::Peers {
                trusted_proxies: config.trusted_proxies.clone(),
                ipv6_prefix: config.guest_ipv6_prefix,
            },
            max_history_turns: config.max_history_turns,
            x402: Arc::new(X402::new(&config.x402).map_err(|e| e.to_string())?),
            rate_limiter: RateLimiter::new(config.rate_limits),
            agents: Agents::from_config(&config.agents)?.map(Arc::new),
            wallets: Arc::new(crate::wallets::Wallets::new(&config.agents.wallets)),
            discovery: config.discovery.clone(),
            openapi: crate::discovery::openapi::Documents::new(&config.public_url()),
            metrics: Default::default(),
            web: config.web.clone(),
            collateral: crate::enclaves::CollateralSource::from_config(&config.collateral).map(Arc::new),
        })
    }
}
