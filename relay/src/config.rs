//! Relay configuration: a JSON file, every field defaulted, plus two environment overrides:
//! `DATABASE_URL` (PostgreSQL instead of the embedded SQLite file) and `SVC_API_KEYS`
//! (comma-separated keys, until accounts exist).

use std::path::PathBuf;

use serde::Deserialize;
use shared::address::{Address, default_program_id};

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct RelayConfig {
    pub listen: String,
    /// The enclave's internal API (one enclave).
    pub enclave_url: String,
    /// Several enclaves: their internal APIs (replaces `enclaveUrl` when not empty). Requests go
    /// to the enclave whose key the envelope names (DESIGN §10).
    pub enclaves: Vec<String>,
    /// How often each enclave's current key is asked for.
    pub enclave_refresh_secs: u64,
    pub enclave_timeout_secs: u64,
    /// Requests in flight to each enclave at most (and so its connections); more wait their turn.
    pub enclave_max_in_flight: usize,
    /// What `teeEndpoint` says in `tee_unreachable` answers; default the enclave's own URL
    /// (an internal address an operator may not want to publish).
    pub tee_endpoint_shown: Option<String>,
    /// Seconds after which a usage row still `pending` belongs to a call no relay runs any
    /// more (a relay killed mid-call) and is refunded; default the enclave timeout plus 60.
    pub abandoned_usage_secs: Option<u64>,
    /// Holds the SQLite file and the ledger key unless configured elsewhere.
    pub data_dir: PathBuf,
    /// `sqlite://…` or `postgres://…`; default: `<dataDir>/relay.sqlite3`.
    pub database_url: Option<String>,
    /// Accepted API keys (`sk_svc_…`).
    pub api_keys: Vec<String>,
    /// Must equal the enclave's: receipts are checked against it.
    pub program_id: String,
    /// Base of `explorerUrl` links; default `http://<listen>`.
    pub public_url: Option<String>,
    /// Ledger signing key (32 raw bytes); created on first start. Default `<dataDir>/ledger-key`.
    pub ledger_key_file: Option<PathBuf>,
    /// Catalog id → price per million tokens, in base units of the stablecoin (6 decimals).
    pub price_per_million_tokens: std::collections::BTreeMap<String, u64>,
    /// Price of one `/agent` call (plaintext or encrypted), stablecoin base units.
    pub agent_price_per_call: u64,
    /// Price of one `/tee/process` call, stablecoin base units.
    pub tee_process_price_per_call: u64,
    /// Currency (`svc`) → what the calls above cost in it; a key with a balance there pays
    /// from it (docs/billing.md "Currencies").
    pub currency_prices: std::collections::BTreeMap<String, crate::billing::metering::PriceTable>,
    /// Free `/agent` messages per network address and UTC day for callers without a key.
    pub free_messages_per_day: u32,
    /// Peers whose `X-Forwarded-For` is believed (the load balancer's addresses).
    pub trusted_proxies: Vec<std::net::IpAddr>,
    /// Leading bits of an IPv6 address counted as one caller for the free trial and the
    /// per-address limits (default 64: one subscriber's /64).
    pub guest_ipv6_prefix: u8,
    /// The SIWS `domain`, `uri` and `chainId` sign-in messages name (default: from the public
    /// URL, and `mainnet`).
    pub sign_in: SignInConfig,
    /// Catalog id → GPU-node endpoint for the plaintext `/agent` path, which the relay runs.
    pub models: std::collections::BTreeMap<String, agent::model::EndpointConfig>,
    /// Per model call, retries included.
    pub model_timeout_secs: u64,
    pub warmup_attempts: u32,
    /// Upstreams and limits of the eighteen tools of the plaintext path.
    pub tools: relay_tools::ToolsConfig,
    /// Prior turns of a chat sent as context.
    pub max_history_turns: u32,
    /// x402 pay-per-call (docs/billing.md).
    pub x402: crate::x402::X402Config,
    /// Requests per minute per key and per address (docs/billing.md).
    pub rate_limits: crate::billing::rate_limit::RateLimitConfig,
    /// The Agent Privacy API (`/agents/v1`, docs/swaps.md).
    pub agents: crate::agents::AgentsConfig,
    /// How the service names itself in the card and the documents (docs/discovery.md).
    pub discovery: crate::discovery::DiscoveryConfig,
    /// Deposits from the chain (docs/billing.md "Deposits").
    pub deposits: crate::billing::deposits::DepositsConfig,
    /// Timeouts and the connection cap of the HTTP server (docs/operations.md).
    pub server: crate::http::serve::ServerConfig,
    /// Where commits go: the embedded log only, or also the chain (docs/log.md "Ledger writer").
    pub ledger: crate::receipts::ledger_writer::LedgerConfig,
    /// The transparency log: anchoring interval (docs/log.md).
    pub log: crate::receipts::log::LogConfig,
    /// The web app's development trust (docs/web.md).
    pub web: crate::web::WebConfig,
    /// Intel's collateral for quotes that carry none (real TDX), on `/tee/attestation`.
    pub collateral: crate::enclaves::collateral::CollateralConfig,
}

impl Default for RelayConfig {
    fn default() -> Self {
        RelayConfig {
            listen: "127.0.0.1:8787".into(),
            enclave_url: "http://127.0.0.1:7070".into(),
            enclaves: Vec::new(),
            enclave_refresh_secs: 2,
            enclave_timeout_secs: 330,
            enclave_max_in_flight: 64,
            tee_endpoint_shown: None,
            abandoned_usage_secs: None,
            data_dir: PathBuf::from("data"),
            database_url: None,
            api_keys: Vec::new(),
            program_id: default_program_id().to_string(),
            public_url: None,
            ledger_key_file: None,
            // Defaults until an operator sets prices: 0.20 and 0.60 stablecoin per million tokens.
            price_per_million_tokens: [("gpt-oss:20b".to_string(), 200_000), ("gemma4:31b".to_string(), 600_000)]
                .into(),
            agent_price_per_call: 1_000,
            tee_process_price_per_call: 1_000,
            currency_prices: Default::default(),
            free_messages_per_day: 5,
            trusted_proxies: Vec::new(),
            guest_ipv6_prefix: 64,
            sign_in: SignInConfig::default(),
            models: Default::default(),
            model_timeout_secs: 120,
            warmup_attempts: 6,
            tools: Default::default(),
            max_history_turns: 20,
            x402: Default::default(),
            rate_limits: Default::default(),
            agents: Default::default(),
            discovery: Default::default(),
            deposits: Default::default(),
            server: Default::default(),
            ledger: Default::default(),
            log: Default::default(),
            web: Default::default(),
            collateral: Default::default(),
        }
    }
}

/// The `signIn` section.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SignInConfig {
    pub domain: Option<String>,
    pub uri: Option<String>,
    pub chain_id: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {0}: {1}")]
    Read(PathBuf, std::io::Error),
    #[error("invalid configuration: {0}")]
    Invalid(String),
}

impl RelayConfig {
    pub fn load(path: Option<&std::path::Path>) -> Result<Self, ConfigError> {
        let mut config: RelayConfig = match path {
            None => RelayConfig::default(),
            Some(p) => {
                let text = std::fs::read_to_string(p).map_err(|e| ConfigError::Read(p.into(), e))?;
                serde_json::from_str(&text).map_err(|e| ConfigError::Invalid(e.to_string()))?
            }
        };
        if let Ok(url) = std::env::var("DATABASE_URL")
            && !url.is_empty()
        {
            config.database_url = Some(url);
        }
        if let Ok(keys) = std::env::var("SVC_API_KEYS") {
            config.api_keys.extend(keys.split(',').map(str::trim).filter(|k| !k.is_empty()).map(String::from));
        }
        config.program_id()?;
        if let Some(url) = config.collateral.pccs_url.as_deref().filter(|u| !u.is_empty())
            && !(url.starts_with("https://") || url.starts_with("http://"))
        {
            return Err(ConfigError::Invalid("collateral.pccsUrl must be an http(s) URL".into()));
        }
        config.ledger.check().map_err(ConfigError::Invalid)?;
        config.server.check().map_err(ConfigError::Invalid)?;
        if config.guest_ipv6_prefix > 128 {
            return Err(ConfigError::Invalid("guestIpv6Prefix must be 0 to 128".into()));
        }
        for currency in config.currency_prices.keys() {
            if currency == crate::billing::metering::CALL_CURRENCY
                || !crate::currency::CURRENCIES.contains(&currency.as_str())
            {
                return Err(ConfigError::Invalid(format!(
                    "currencyPrices: `{currency}` must be a currency other than the stablecoin: {:?}",
                    crate::currency::CURRENCIES
                )));
            }
        }
        for (id, m) in &config.models {
            if shared::catalog::resolve(id) != *id {
                return Err(ConfigError::Invalid(format!("model key `{id}` is not a catalog id")));
            }
            m.to_endpoint(id).map_err(|e| ConfigError::Invalid(format!("model `{id}`: {e}")))?;
        }
        if let Some(bad) = config.api_keys.iter().find(|k| !crate::accounts::well_formed(k)) {
            let shown: String = bad.chars().take(8).collect();
            return Err(ConfigError::Invalid(format!("API key starting `{shown}` does not start with sk_svc_")));
        }
        Ok(config)
    }

    /// Every enclave's internal API.
    pub fn enclave_urls(&self) -> Vec<String> {
        if self.enclaves.is_empty() { vec![self.enclave_url.clone()] } else { self.enclaves.clone() }
    }

    pub fn program_id(&self) -> Result<Address, ConfigError> {
        Address::parse(&self.program_id).ok_or_else(|| ConfigError::Invalid("programId is not a base58 address".into()))
    }

    pub fn database_url(&self) -> String {
        self.database_url
            .clone()
            .unwrap_or_else(|| format!("sqlite://{}?mode=rwc", self.data_dir.join("relay.sqlite3").display()))
    }

    pub fn ledger_key_file(&self) -> PathBuf {
        self.ledger_key_file.clone().unwrap_or_else(|| self.data_dir.join("ledger-key"))
    }

    /// The origin of sign-in messages: `signIn` when set, else from the public URL.
    pub fn sign_in_origin(&self) -> crate::accounts::sign_in::Origin {
        let uri = self.public_url();
        let from_url = uri.split_once("://").map_or(uri.as_str(), |(_, rest)| rest).split('/').next().unwrap_or("");
        crate::accounts::sign_in::Origin {
            domain: self.sign_in.domain.clone().unwrap_or_else(|| from_url.to_string()),
            uri: self.sign_in.uri.clone().unwrap_or(uri.clone()),
            chain_id: self.sign_in.chain_id.clone().unwrap_or_else(|| "mainnet".into()),
        }
    }

    pub fn public_url(&self) -> String {
        self.public_url.clone().unwrap_or_else(|| format!("http://{}", self.listen)).trim_end_matches('/').to_string()
    }
}
