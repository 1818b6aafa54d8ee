//! The `agents` section of the relay configuration: the Agent Privacy API (`/agents/v1`).

use std::collections::BTreeMap;

use serde::Deserialize;
use shared::address::Address;

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct AgentsConfig {
    /// `network` in answers (the contract's service is `mainnet`).
    pub network: String,
    /// Solana JSON-RPC the relay reads and sends through (the enclave reads its own).
    pub rpc_url: Option<String>,
    /// A router speaking the Jupiter Swap API v1 wire, for quotes.
    pub router_url: Option<String>,
    /// Environment variable holding the router's API key (keyed hosts).
    pub router_api_key_env: Option<String>,
    /// The service's margin on quotes: `expectedOut` is the router's output less this.
    pub spread_bps: u16,
    pub default_slippage_bps: u16,
    /// Price of one quote for a key (stablecoin base units); x402 callers pay the x402 price.
    pub quote_price_per_call: u64,
    /// Price of starting one one-shot session, the same way.
    pub session_price_per_call: u64,
    /// How long a one-shot session waits for its funding (at most the funding transaction's
    /// blockhash lifetime).
    pub session_ttl_secs: u64,
    /// How long a fresh blockhash stays usable: 150 blocks, about 60 s on mainnet.
    pub blockhash_lifetime_secs: u64,
    /// `expectedSeconds` of a session start and `estimatedSeconds` of execute.
    pub expected_seconds: u64,
    /// Mint (base58) → its buckets and bounds. A mint not listed is not swapped.
    pub mints: BTreeMap<String, MintConfig>,
    /// Window of `GET /agents/v1/anonymity-set` when none is asked.
    pub anonymity_window_hours: u64,
    /// Lamports a session needs beyond its two token accounts' rent: every fee it pays.
    pub session_fee_lamports: u64,
    /// How long a relay holds a session it works on before another may take it over.
    pub lease_secs: u64,
    /// Session workers in this relay.
    pub workers: usize,
    /// Tries of a step that failed (router refusals, a swap that failed on chain) before the
    /// session is refunded.
    pub max_attempts: u32,
    /// Per call to the chain or the router.
    pub timeout_secs: u64,
    /// Explorer link of a chain transaction; `{signature}` is replaced.
    pub explorer_tx_url: String,
    /// Managed wallets: webhook destinations and retries.
    pub wallets: super::WalletsConfig,
}

/// One mint the swap API accepts.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MintConfig {
    /// E.g. `USDC`.
    pub symbol: String,
    pub decimals: u8,
    /// Standard denominations, base units: an amount equal to one is `bucketed`.
    pub buckets: Vec<u64>,
    pub min_amount: u64,
    pub max_amount: u64,
}

impl Default for AgentsConfig {
    fn default() -> Self {
        AgentsConfig {
            network: "mainnet".into(),
            rpc_url: None,
            router_url: None,
            router_api_key_env: None,
            spread_bps: 30,
            default_slippage_bps: 50,
            quote_price_per_call: 1_000,
            session_price_per_call: 10_000,
            session_ttl_secs: 600,
            blockhash_lifetime_secs: 60,
            expected_seconds: 20,
            mints: BTreeMap::new(),
            anonymity_window_hours: 24,
            session_fee_lamports: 50_000,
            lease_secs: 30,
            workers: 4,
            max_attempts: 3,
            timeout_secs: 20,
            explorer_tx_url: "https://explorer.solana.com/tx/{signature}".into(),
            wallets: Default::default(),
        }
    }
}

impl AgentsConfig {
    /// Checks mints and bounds; an error names the field.
    pub fn check(&self) -> Result<(), String> {
        for (mint, m) in &self.mints {
            Address::parse(mint).ok_or_else(|| format!("agents.mints: `{mint}` is not base58 of 32 bytes"))?;
            if m.min_amount == 0 || m.min_amount > m.max_amount {
                return Err(format!("agents.mints.{mint}: minAmount must be positive and at most maxAmount"));
            }
            if m.buckets.iter().any(|b| *b < m.min_amount || *b > m.max_amount) {
                return Err(format!("agents.mints.{mint}: every bucket must lie within the bounds"));
            }
        }
        if self.spread_bps >= 10_000 || self.default_slippage_bps >= 10_000 {
            return Err("agents.spreadBps and defaultSlippageBps must be below 10000".into());
        }
        if self.lease_secs <= self.timeout_secs {
            return Err("agents.leaseSecs must exceed timeoutSecs (a step must end within its lease)".into());
        }
        self.wallets.check()
    }

    pub fn mint(&self, mint: &Address) -> Option<&MintConfig> {
        self.mints.get(&mint.to_string())
    }
}
