//! The state every handler shares. Its own module, so subsystems import it without importing
//! each other's routes.

use std::collections::BTreeMap;
use std::sync::Arc;

use ed25519_dalek::SigningKey;

use crate::accounts::ApiKeys;
use crate::billing::rate_limit::RateLimiter;
use crate::config::RelayConfig;
use crate::enclaves::EnclavePool;
use crate::plain_agent::PlainAgent;
use crate::receipts::CommitLog;
use crate::receipts::ledger_writer::LedgerWriter;
use crate::store::Store;
use crate::swaps::Agents;
use crate::x402::X402;

pub struct AppState {
    pub enclaves: Arc<EnclavePool>,
    pub keys: ApiKeys,
    pub store: Store,
    /// Paid calls' charges and completions, written in groups.
    pub usage: crate::billing::usage_writer::UsageWriter,
    pub commits: CommitLog,
    /// `solana` ledger mode: the writer that puts commits on the chain.
    pub ledger: Option<crate::receipts::ledger_writer::LedgerWriter>,
    /// The transparency log of receipts (`/log/v1`).
    pub log: crate::receipts::log::TransparencyLog,
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
    pub x402: X402,
    pub rate_limiter: RateLimiter,
    /// The Agent Privacy API, when a chain and a router are configured.
    pub agents: Option<Agents>,
    pub discovery: crate::discovery::DiscoveryConfig,
    /// Deposits from the chain, when configured.
    pub deposits: crate::billing::deposits::Deposits,
    /// The OpenAPI documents, built at start.
    pub openapi: crate::discovery::openapi::Documents,
    /// The counters `GET /metrics` shows.
    pub metrics: crate::metrics::Metrics,
    /// The web app's development trust, when configured.
    pub web: crate::web::WebConfig,
    /// Where collateral for quotes without it comes from (`collateral.pccsUrl`).
    pub collateral: Option<crate::enclaves::collateral::CollateralSource>,
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

pub type App = Arc<AppState>;

impl AppState {
    /// Everything the handlers share, from the configuration, over an open store, the ledger
    /// key and the enclaves. Starts nothing: the workers are started by whoever serves.
    pub fn new(
        config: &RelayConfig,
        store: Store,
        key: SigningKey,
        enclaves: Arc<EnclavePool>,
    ) -> Result<AppState, String> {
        let program_id = config.program_id().map_err(|e| e.to_string())?;
        // One key for commits, anchors and tree heads (docs/log.md "Keys").
        let log = crate::receipts::log::TransparencyLog::new(key.clone(), store.clone(), config.log.clone());
        let ledger = LedgerWriter::from_config(&config.ledger, key.clone(), program_id, store.clone())?;
        let commits = match ledger {
            Some(_) => CommitLog::new(key, program_id, store.clone()).queue_for_chain(),
            None => CommitLog::new(key, program_id, store.clone()),
        };
        Ok(AppState {
            enclaves,
            keys: ApiKeys::new(&config.api_keys, store.clone()),
            usage: crate::billing::usage_writer::UsageWriter::new(store.clone()),
            store,
            commits,
            ledger,
            log,
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
            x402: X402::new(&config.x402).map_err(|e| e.to_string())?,
            rate_limiter: RateLimiter::new(config.rate_limits),
            agents: Agents::from_config(&config.agents)?,
            discovery: config.discovery.clone(),
            deposits: crate::billing::deposits::Deposits::from_config(&config.deposits)?,
            openapi: crate::discovery::openapi::Documents::new(&config.public_url()),
            metrics: Default::default(),
            web: config.web.clone(),
            collateral: crate::enclaves::collateral::CollateralSource::from_config(&config.collateral),
        })
    }
}
