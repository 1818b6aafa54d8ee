//! Money in from the chain (docs/billing.md "Deposits"): each account (key id) has a deposit
//! owner, a key the enclave made and sealed, so the relay never holds a key to the deposited
//! funds; a watcher follows the owners' token accounts, records every transfer once (by
//! transaction signature and instruction index) and credits it once finalized, in the same
//! database transaction as the record's state change.

pub mod addresses;
pub mod records;
pub mod routes;
pub mod watcher;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::FromRef;
use serde::Deserialize;
use shared::address::Address;

use crate::enclaves::EnclavePool;
use crate::state::App;
use crate::store::Store;

/// The `deposits` section of the relay configuration.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct DepositsConfig {
    /// Solana JSON-RPC the watcher reads; none: deposits off.
    pub rpc_url: Option<String>,
    /// Mint (base58) → what it credits. Transfers of other mints are recorded, not credited.
    pub mints: BTreeMap<String, DepositMint>,
    /// Seconds between scans (default 5).
    pub poll_secs: Option<u64>,
    /// `network` in answers (default `mainnet`).
    pub network: Option<String>,
    /// Signatures asked for per `getSignaturesForAddress` page (1 to 1,000; default 1,000).
    pub page_size: Option<usize>,
}

/// One mint a deposit may be made in.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DepositMint {
    /// `usdc` (the stablecoin) or `svc` (the service token).
    pub currency: String,
    /// Base units below which a deposit is recorded as dust and not credited.
    #[serde(default)]
    pub min_amount: u64,
}

impl DepositsConfig {
    pub fn check(&self) -> Result<(), String> {
        if !(1..=1_000).contains(&self.page_size()) {
            return Err("deposits.pageSize must be 1 to 1000".into());
        }
        for (mint, m) in &self.mints {
            Address::parse(mint).ok_or_else(|| format!("deposits.mints: `{mint}` is not base58 of 32 bytes"))?;
            if !crate::currency::CURRENCIES.contains(&m.currency.as_str()) {
                return Err(format!("deposits.mints.{mint}.currency must be one of {:?}", crate::currency::CURRENCIES));
            }
        }
        Ok(())
    }

    pub fn page_size(&self) -> usize {
        self.page_size.unwrap_or(1_000)
    }

    pub fn enabled(&self) -> bool {
        self.rpc_url.is_some()
    }

    pub fn poll(&self) -> Duration {
        Duration::from_secs(self.poll_secs.unwrap_or(5).max(1))
    }

    /// The accepted mints, parsed.
    pub fn accepted(&self) -> Vec<(Address, &DepositMint)> {
        self.mints.iter().filter_map(|(m, c)| Address::parse(m).map(|a| (a, c))).collect()
    }
}

/// The deposits side of a relay: its configuration and, when on, its chain reader; the store it
/// records in, and the enclaves that make the deposit owners' keys.
pub struct Deposits {
    pub config: DepositsConfig,
    pub chain: Option<chain::RpcChain>,
    pub store: Store,
    pub enclaves: Arc<EnclavePool>,
}

impl FromRef<App> for Arc<Deposits> {
    fn from_ref(app: &App) -> Self {
        app.deposits.clone()
    }
}

impl Deposits {
    pub fn from_config(config: &DepositsConfig, store: Store, enclaves: Arc<EnclavePool>) -> Result<Self, String> {
        config.check()?;
        let chain = match &config.rpc_url {
            None => None,
            Some(url) => {
                let timeout = Duration::from_secs(20);
                let built = match url.starts_with("https://") {
                    true => chain::RpcChain::with_tls(url, timeout, chain::web_pki()),
                    false => chain::RpcChain::new(url, timeout),
                };
                Some(built.map_err(|e| format!("deposits.rpcUrl: {e}"))?)
            }
        };
        Ok(Deposits { config: config.clone(), chain, store, enclaves })
    }
}

/// Starts the watcher when deposits are configured.
pub fn start(deposits: &Arc<Deposits>) {
    if deposits.chain.is_some() {
        tokio::spawn(watcher::run(deposits.clone()));
    }
}
