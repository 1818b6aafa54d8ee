//! One-shot private swaps (DESIGN §11): session keys only this enclave holds, sealed with their
//! terms so neither the relay nor a reboot can change them, and the transactions they sign.
//!
//! Every step is idempotent and reads the chain itself (through the RPC of the measured
//! configuration): funding is checked on chain, amounts to move are the balances the chain
//! shows. A step that signs returns the transaction for the relay to record and broadcast. The
//! session key signs only the router's swap (after `swap_check`) and transactions built here,
//! which pay the committed destination or the payer tokens, nobody else, and give the SOL
//! left back to whoever funded it (the payer; the pool for a managed swap).

mod config;
mod legs;
mod session;

use std::time::Duration;

use chain::{Chain, Router, RpcChain};
use shared::address::Address;
use shared::amount::Amount;
use shared::solana::programs::TOKEN_PROGRAM;
use shared::solana::{Transaction, token};
use shared::swap::{StepAnswer, StepRequest};

use crate::funds::swap_check::CheckError;
use crate::keys::EnclaveKeys;
use crate::keys::custody::Custody;
pub use config::{RouterApi, SwapsConfig};

/// Sealed-object kind of a session: its key's seed with its terms.
pub const SESSION_KIND: &str = "swap-session";
/// The layout of a session's plaintext, bound into its blob as the sealed header's version.
pub const SESSION_FORMAT: u32 = 1;
/// A transaction fee per signature (lamports).
const SIGNATURE_FEE: u64 = 5_000;
pub(crate) const SLIPPAGE_BPS: u16 = 100;

#[derive(Debug, thiserror::Error)]
pub enum SwapError {
    #[error("swaps are not configured in this enclave")]
    NotConfigured,
    #[error("the session terms are malformed: {0}")]
    BadTerms(&'static str),
    #[error("minOut is below {0}, the router's quote now less the most slippage this enclave allows")]
    MinOutBelowQuote(u64),
    #[error("{0}")]
    Check(#[from] CheckError),
    #[error("the funding transaction is not on chain (yet)")]
    FundingNotFound,
    #[error("the chain could not be read: {0}")]
    Chain(#[from] chain::ChainError),
    #[error("the router: {0}")]
    Router(#[from] chain::RouterError),
    /// The router's transaction, as fetched or compiled here, is not one this enclave signs.
    #[error("the router: {0}")]
    RouterTransaction(&'static str),
    #[error("there is nothing to move: {0}")]
    NothingToDo(&'static str),
    #[error("the session is sealed wrong")]
    Sealed,
}

pub struct Swaps {
    chain: RpcChain,
    router: Router,
    router_api: RouterApi,
    router_programs: Vec<Address>,
    program_id: Address,
    oneshot_max_slippage_bps: u16,
}

/// A landed transaction as the node returned it (its bytes not a transaction: a malformed answer).
pub(crate) fn landed_transaction(bytes: &[u8]) -> Result<Transaction, SwapError> {
    let detail = "unparseable transaction";
    Transaction::parse(bytes)
        .map_err(|_| SwapError::Chain(chain::ChainError::Malformed { method: "getTransaction", detail: detail.into() }))
}

impl Swaps {
    /// `router_key` and `rpc_key`: the router's and the RPC provider's API keys from the
    /// secrets bundle, if any; the RPC key replaces `{apiKey}` in `rpcUrl`, so the measured
    /// configuration names the provider and never holds the key.
    pub fn new(
        config: &SwapsConfig,
        router_key: Option<String>,
        rpc_key: Option<&str>,
        program_id: Address,
    ) -> Result<Self, String> {
        for (name, url) in [("swaps.rpcUrl", &config.rpc_url), ("swaps.routerUrl", &config.router_url)] {
            if !config::tls_or_loopback(url) {
                return Err(format!(
                    "{name}: the chain and the router are reached over https (plain http only to a literal loopback address)"
                ));
            }
        }
        let timeout = Duration::from_secs(config.timeout_secs.max(1));
        let tls = || Some(chain::web_pki());
        let rpc_url = match (config.rpc_url.contains("{apiKey}"), rpc_key) {
            (false, _) => config.rpc_url.clone(),
            (true, Some(key)) => config.rpc_url.replace("{apiKey}", key),
            (true, None) => return Err("swaps.rpcUrl names {apiKey}: the secrets bundle has no `solanaRpc` key".into()),
        };
        let chain = match rpc_url.starts_with("https://") {
            true => RpcChain::with_tls(&rpc_url, timeout, chain::web_pki()),
            false => RpcChain::new(&rpc_url, timeout),
        }
        .map_err(|e| format!("swaps.rpcUrl: {e}"))?;
        let router_tls = if config.router_url.starts_with("https://") { tls() } else { None };
        let router = Router::new(&config.router_url, router_key, timeout, router_tls);
        let router_programs = config
            .router_programs
            .iter()
            .map(|p| Address::parse(p).ok_or_else(|| format!("swaps.routerPrograms: `{p}` is not base58")))
            .collect::<Result<_, _>>()?;
        let oneshot_max_slippage_bps = config.oneshot_max_slippage_bps.min(10_000);
        let router_api = config.router_api;
        Ok(Swaps { chain, router, router_api, router_programs, program_id, oneshot_max_slippage_bps })
    }

    /// One step of a session.
    pub async fn step(
        &self,
        custody: &Custody,
        keys: &EnclaveKeys,
        request: StepRequest,
        now: u64,
    ) -> Result<StepAnswer, SwapError> {
        match request {
            StepRequest::CheckFunding { blob, funding_tx_sig } => {
                let s = self.open(custody, &blob)?;
                self.check_funding(&s, &funding_tx_sig).await?;
                Ok(StepAnswer::Funded { amount: Amount(s.terms.amount), expired: now > s.terms.expires_at })
            }
            StepRequest::Swap { blob } => self.swap(&self.open(custody, &blob)?).await,
            StepRequest::Deliver { blob } => self.sweep(&self.open(custody, &blob)?, true).await,
            StepRequest::Refund { blob } => self.sweep(&self.open(custody, &blob)?, false).await,
            StepRequest::Attest { blob, funding_tx_sig, final_tx_sig } => {
                let s = self.open(custody, &blob)?;
                self.attest(&s, keys, &funding_tx_sig, &final_tx_sig, now).await
            }
        }
    }

    /// The router's output for `amount` now, less `slippage_bps`: a managed swap's least output.
    pub(crate) async fn least_out(
        &self,
        from_mint: &Address,
        to_mint: &Address,
        amount: u64,
        slippage_bps: u16,
    ) -> Result<u64, SwapError> {
        let quote = self.router.quote(from_mint, to_mint, amount, slippage_bps).await?;
        Ok((u128::from(quote.out_amount) * u128::from(10_000 - slippage_bps.min(10_000)) / 10_000) as u64)
    }

    /// The enclave's own view of the chain.
    pub(crate) fn chain(&self) -> &RpcChain {
        &self.chain
    }

    pub(crate) async fn decimals(&self, mint: &Address) -> Result<u8, SwapError> {
        let account = self.chain.account(mint).await?;
        // A mint's decimals sit at offset 44 of its 82 bytes.
        account
            .filter(|a| a.owner == TOKEN_PROGRAM && a.data.len() == token::MINT_LEN)
            .map(|a| a.data[44])
            .ok_or(SwapError::NothingToDo("the mint does not exist"))
    }
}

#[cfg(test)]
mod tests {
    use shared::address::Address;

    #[test]
    fn the_rpc_key_comes_from_the_bundle_never_the_measured_configuration() {
        let config: super::SwapsConfig = serde_json::from_value(serde_json::json!({
            "rpcUrl": "https://rpc.example/?api-key={apiKey}", "routerUrl": "https://api.jup.ag"}))
        .unwrap();
        assert_eq!(config.router_api, super::RouterApi::Build, "Jupiter's /build unless told otherwise");
        let refused = super::Swaps::new(&config, None, None, Address([1; 32])).err().unwrap();
        assert!(refused.contains("solanaRpc"), "{refused}");
        assert!(super::Swaps::new(&config, None, Some("k3y"), Address([1; 32])).is_ok());
    }
}
