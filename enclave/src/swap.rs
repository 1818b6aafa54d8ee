//! One-shot private swaps (DESIGN §11): session keys only this enclave holds, sealed with their
//! terms so neither the relay nor a reboot can change them, and the transactions they sign.
//!
//! Every step is idempotent and reads the chain itself (through the RPC of the measured
//! configuration): funding is checked on chain, amounts to move are the balances the chain
//! shows. A step that signs returns the transaction for the relay to record and broadcast. The
//! session key signs only the router's swap (after `swap_check`) and transactions built here,
//! which pay the committed destination or the payer tokens, nobody else, and give the SOL
//! left back to whoever funded it (the payer; the pool for a managed swap).

use std::time::Duration;

use chain::{Chain, Router, RpcChain};
use ed25519_dalek::{Signer, SigningKey};
use rand_core::OsRng;
use serde::{Deserialize, Serialize};
use shared::address::Address;
use shared::b64;
use shared::solana::programs::TOKEN_PROGRAM;
use shared::solana::{Instruction, Message, MessageV0, PACKET_DATA_SIZE, Transaction, associated_token, system, token};
use shared::swap::{
    OpenedSession, ParsedTerms, SessionCommitment, SessionTerms, StepAnswer, StepRequest, SwapReceipt, receipt_address,
};
use shared::wire::SealedObject;
use zeroize::Zeroizing;

use crate::custody::Custody;
use crate::keys::{EnclaveKeys, SeedText};
use crate::swap_check::{self, CheckError, ata};

/// Sealed-object kind of a session: its key's seed with its terms.
pub const SESSION_KIND: &str = "swap-session";
/// A transaction fee per signature (lamports).
const SIGNATURE_FEE: u64 = 5_000;
pub(crate) const SLIPPAGE_BPS: u16 = 100;

/// The `swaps` section of the enclave configuration (measured).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SwapsConfig {
    /// Solana JSON-RPC: the enclave's own view of the chain.
    pub rpc_url: String,
    /// A router speaking Jupiter's wire (quotes at `/swap/v1/quote`).
    pub router_url: String,
    /// How the router's swap is asked for and checked (docs/swaps.md "The router check").
    #[serde(default)]
    pub router_api: RouterApi,
    /// `swap` only: programs a router transaction may call besides token, associated-token and
    /// compute-budget (base58); none of them may name the session key.
    #[serde(default)]
    pub router_programs: Vec<String>,
    #[serde(default = "default_timeout_secs")]
    pub timeout_secs: u64,
    /// Managed wallets' pool: blocks after a boot first wants to sign before it signs anything
    /// (crate::funds; 151 covers every transaction an earlier boot signed).
    #[serde(default = "default_quiet_blocks")]
    pub payout_quiet_blocks: u64,
    /// Managed wallets' pool: the smallest amount (base units) an encrypt, a withdrawal or a
    /// shield moves, per mint (base58); other mints take `defaultMinAmount`. Books then grow
    /// only with holders of real value (DESIGN §13).
    #[serde(default)]
    pub min_amounts: std::collections::HashMap<String, u64>,
    #[serde(default = "default_min_amount")]
    pub default_min_amount: u64,
    /// A one-shot session's `minOut` must be at least the router's quote now less this: the
    /// relay sets the terms, so this is all it can take from a swap (DESIGN §13).
    #[serde(default = "default_oneshot_max_slippage_bps")]
    pub oneshot_max_slippage_bps: u16,
}

/// `build`: Jupiter's Swap API v2 (`GET /swap/v2/build`); the enclave compiles the instructions
/// and signs only what `swap_check::jupiter` accepts. `swap`: a router whose `POST
/// /swap/v1/swap` returns a whole transaction of plain token transfers, co-signed by its pool
/// (the development stand-in; `swap_check::check_swap`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum RouterApi {
    #[default]
    Build,
    Swap,
}

fn default_oneshot_max_slippage_bps() -> u16 {
    1_000
}

fn default_min_amount() -> u64 {
    1_000
}

fn default_quiet_blocks() -> u64 {
    crate::funds::DEFAULT_QUIET_BLOCKS
}

fn default_timeout_secs() -> u64 {
    20
}

/// An upstream the enclave may trust for the chain or the router: https, or plain http to a
/// literal loopback address (a node on the same host, in development). Anything else could be
/// answered by whoever sits on the path, the host included (DESIGN §13).
fn tls_or_loopback(url: &str) -> bool {
    if url.starts_with("https://") {
        return true;
    }
    let Some(rest) = url.strip_prefix("http://") else { return false };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host = match authority.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or_default(),
        None => authority.rsplit_once(':').map_or(authority, |(h, _)| h),
    };
    host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

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
    Chain(String),
    #[error("the router: {0}")]
    Router(String),
    #[error("there is nothing to move: {0}")]
    NothingToDo(&'static str),
    #[error("the session is sealed wrong")]
    Sealed,
}

/// What a session object holds (sealed; never leaves the enclave in the clear).
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct SessionSecret {
    seed: SeedText,
    terms: SessionTerms,
    /// Who funded the session's SOL and gets back what is left of it (rent, unused fees): the
    /// pool of a managed swap; none for a one-shot, whose payer funded it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    sol_from: Option<String>,
}

/// An opened session: its key and terms.
struct Session {
    key: SigningKey,
    address: Address,
    terms: ParsedTerms,
    text: SessionTerms,
    /// Where the session's SOL returns: the pool of a managed swap, else the payer.
    sol_to: Address,
}

pub struct Swaps {
    chain: RpcChain,
    router: Router,
    router_api: RouterApi,
    router_programs: Vec<Address>,
    program_id: Address,
    oneshot_max_slippage_bps: u16,
}

fn chain_error(e: chain::ChainError) -> SwapError {
    SwapError::Chain(e.to_string())
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
            if !tls_or_loopback(url) {
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

    /// A new session: a fresh key sealed with `terms`, and the commitment signed by this
    /// enclave's attested key.
    pub fn open_session(
        &self,
        custody: &Custody,
        keys: &EnclaveKeys,
        terms: SessionTerms,
        sol_from: Option<Address>,
    ) -> Result<OpenedSession, SwapError> {
        let parsed = terms.parse().map_err(|e| SwapError::BadTerms(malformed_field(&e)))?;
        let key = SigningKey::generate(&mut OsRng);
        let address = Address(key.verifying_key().to_bytes());
        let sol_from = sol_from.map(|a| a.to_string());
        let secret = SessionSecret { seed: SeedText::of(&key), terms: terms.clone(), sol_from };
        let plaintext = Zeroizing::new(serde_json::to_vec(&secret).map_err(|_| SwapError::Sealed)?);
        let (id, blob) = custody.seal_new(SESSION_KIND, &plaintext).map_err(|_| SwapError::Sealed)?;
        let signature = keys.signer().sign(&SessionCommitment::message(&parsed, &address)).to_bytes();
        Ok(OpenedSession {
            object: SealedObject {
                id: hex::encode(id),
                kind: SESSION_KIND.into(),
                version: 1,
                blob,
                public_key: Some(address.to_string()),
            },
            commitment: SessionCommitment {
                terms,
                ephemeral_pubkey: address.to_string(),
                enclave_pubkey: b64::encode(keys.enclave_public()),
                signature: b64::encode(signature),
            },
        })
    }

    /// A one-shot session, whose terms the relay sets: opened only if its `minOut` is at least
    /// the router's quote now less `oneshotMaxSlippageBps`.
    pub async fn open_oneshot(
        &self,
        custody: &Custody,
        keys: &EnclaveKeys,
        terms: SessionTerms,
    ) -> Result<OpenedSession, SwapError> {
        let t = terms.parse().map_err(|e| SwapError::BadTerms(malformed_field(&e)))?;
        let floor = self.least_out(&t.from_mint, &t.to_mint, t.amount, self.oneshot_max_slippage_bps).await?;
        if t.min_out < floor {
            return Err(SwapError::MinOutBelowQuote(floor));
        }
        self.open_session(custody, keys, terms, None)
    }

    fn open(&self, custody: &Custody, blob: &str) -> Result<Session, SwapError> {
        let (_, plaintext) = custody.open_kind(blob, SESSION_KIND).map_err(|_| SwapError::Sealed)?;
        let secret: SessionSecret = serde_json::from_slice(&plaintext).map_err(|_| SwapError::Sealed)?;
        let key = secret.seed.key().ok_or(SwapError::Sealed)?;
        let terms = secret.terms.parse().map_err(|_| SwapError::Sealed)?;
        let sol_to = match &secret.sol_from {
            Some(text) => Address::parse(text).ok_or(SwapError::Sealed)?,
            None => terms.payer,
        };
        Ok(Session { address: Address(key.verifying_key().to_bytes()), key, terms, text: secret.terms, sol_to })
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
                Ok(StepAnswer {
                    amount: Some(s.terms.amount.to_string()),
                    expired: now > s.terms.expires_at,
                    ..Default::default()
                })
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

    async fn check_funding(&self, s: &Session, signature: &str) -> Result<(), SwapError> {
        let landed = self.chain.transaction(signature).await.map_err(chain_error)?.ok_or(SwapError::FundingNotFound)?;
        let tx =
            Transaction::parse(&landed.transaction).map_err(|_| SwapError::Chain("unparseable transaction".into()))?;
        let failed = landed.meta.as_ref().is_none_or(|m| m.err.is_some());
        swap_check::check_funding(&s.terms, &s.address, &tx, failed)?;
        Ok(())
    }

    /// The router's swap of the whole input, checked, signed by the session key.
    async fn swap(&self, s: &Session) -> Result<StepAnswer, SwapError> {
        let held = self.chain.token_balance(&ata(&s.address, &s.terms.from_mint)).await.map_err(chain_error)?;
        if held.unwrap_or(0) < s.terms.amount {
            return Err(SwapError::NothingToDo("the session does not hold its input (already swapped or refunded)"));
        }
        if self.router_api == RouterApi::Build {
            return self.swap_built(s).await;
        }
        let router = |e: chain::RouterError| SwapError::Router(e.to_string());
        let quote = self
            .router
            .quote(&s.terms.from_mint, &s.terms.to_mint, s.terms.amount, SLIPPAGE_BPS)
            .await
            .map_err(router)?;
        let swap = self.router.swap(&s.address, &quote).await.map_err(router)?;
        let mut tx =
            Transaction::parse(&swap.transaction).map_err(|_| SwapError::Router("unparseable transaction".into()))?;
        let out = swap_check::check_swap(&s.terms, &s.address, &tx, &self.router_programs)?;
        if !swap_check::other_signers_present(&tx, &s.address) {
            return Err(SwapError::Router("the transaction lacks the router's own signatures".into()));
        }
        tx.sign(&[&s.key]).map_err(|_| SwapError::Router("the session key is not a signer".into()))?;
        Ok(signed(&tx, swap.last_valid_block_height, out))
    }

    /// The router's swap built from Jupiter's instructions: compiled here, against this
    /// enclave's own blockhash, with the session's accounts and the output mint kept out of the
    /// router's lookup tables, then checked by the Jupiter rule set.
    async fn swap_built(&self, s: &Session) -> Result<StepAnswer, SwapError> {
        let t = &s.terms;
        let built = self
            .router
            .build(&t.from_mint, &t.to_mint, t.amount, SLIPPAGE_BPS, &s.address)
            .await
            .map_err(|e| SwapError::Router(e.to_string()))?;
        let blockhash = self.chain.latest_blockhash().await.map_err(chain_error)?;
        let keep = [ata(&s.address, &t.from_mint), ata(&s.address, &t.to_mint), t.to_mint];
        let message = MessageV0::compile_with_lookups(
            &s.address,
            &built.instructions,
            blockhash.blockhash,
            &built.lookup_tables,
            &keep,
        )
        .map_err(|_| SwapError::Router("instructions that do not compile".into()))?;
        let mut tx = Transaction::new_unsigned(message);
        let out = swap_check::jupiter::check_swap(t, &s.address, &tx)?;
        tx.sign(&[&s.key]).map_err(|_| SwapError::Router("the session key is not a signer".into()))?;
        if tx.serialize().len() > PACKET_DATA_SIZE {
            return Err(SwapError::Router("the swap does not fit in a transaction".into()));
        }
        Ok(signed(&tx, blockhash.last_valid_block_height, out))
    }

    /// Moves everything the session holds out and closes its accounts: on delivery the output
    /// to the destination and anything left of the input to the payer; on a refund (`deliver`
    /// false) both to the payer. The rent and the remaining lamports go back to whoever funded
    /// them (`Session::sol_to`).
    async fn sweep(&self, s: &Session, deliver: bool) -> Result<StepAnswer, SwapError> {
        let payer = s.terms.payer;
        let output_to = if deliver { s.terms.destination } else { payer };
        let mut ixs: Vec<Instruction> = Vec::new();
        let (mut rent, mut moved) = (0, 0);
        for (mint, recipient) in [(&s.terms.to_mint, &output_to), (&s.terms.from_mint, &payer)] {
            let source = ata(&s.address, mint);
            let Some(amount) = self.chain.token_balance(&source).await.map_err(chain_error)? else { continue };
            if amount > 0 {
                let destination = ata(recipient, mint);
                if self.chain.account(&destination).await.map_err(chain_error)?.is_none() {
                    rent +=
                        self.chain.minimum_balance_for_rent_exemption(token::ACCOUNT_LEN).await.map_err(chain_error)?;
                    ixs.push(associated_token::create_idempotent(&s.address, recipient, mint, &TOKEN_PROGRAM));
                }
                let decimals = self.decimals(mint).await?;
                ixs.push(token::transfer_checked(&source, mint, &destination, &s.address, amount, decimals));
            }
            // What the step reports: the output delivered, or the input given back.
            let reported = if deliver { &s.terms.to_mint } else { &s.terms.from_mint };
            if mint == reported {
                moved = amount;
            }
            ixs.push(token::close_account(&source, &s.sol_to, &s.address));
        }
        if deliver && moved == 0 {
            return Err(SwapError::NothingToDo("the session holds no output"));
        }
        let lamports = self.chain.balance(&s.address).await.map_err(chain_error)?;
        let rest = lamports.saturating_sub(rent + SIGNATURE_FEE);
        if rest > 0 {
            ixs.push(system::transfer(&s.address, &s.sol_to, rest));
        }
        if ixs.is_empty() {
            return Err(SwapError::NothingToDo("the session holds nothing"));
        }
        let blockhash = self.chain.latest_blockhash().await.map_err(chain_error)?;
        let message = Message::compile(&s.address, &ixs, blockhash.blockhash).map_err(|_| SwapError::Sealed)?;
        let mut tx = Transaction::new_unsigned(message);
        tx.sign(&[&s.key]).map_err(|_| SwapError::Sealed)?;
        Ok(signed(&tx, blockhash.last_valid_block_height, moved))
    }

    /// The router's output for `amount` now, less `slippage_bps`: a managed swap's least output.
    pub(crate) async fn least_out(
        &self,
        from_mint: &Address,
        to_mint: &Address,
        amount: u64,
        slippage_bps: u16,
    ) -> Result<u64, SwapError> {
        let quote = self
            .router
            .quote(from_mint, to_mint, amount, slippage_bps)
            .await
            .map_err(|e| SwapError::Router(e.to_string()))?;
        Ok((u128::from(quote.out_amount) * u128::from(10_000 - slippage_bps.min(10_000)) / 10_000) as u64)
    }

    /// The enclave's own view of the chain.
    pub(crate) fn chain(&self) -> &RpcChain {
        &self.chain
    }

    pub(crate) async fn decimals(&self, mint: &Address) -> Result<u8, SwapError> {
        let account = self.chain.account(mint).await.map_err(chain_error)?;
        // A mint's decimals sit at offset 44 of its 82 bytes.
        account
            .filter(|a| a.owner == TOKEN_PROGRAM && a.data.len() == token::MINT_LEN)
            .map(|a| a.data[44])
            .ok_or(SwapError::NothingToDo("the mint does not exist"))
    }

    /// The receipt of a settled session, after checking on chain that `final_tx_sig` landed and
    /// paid the destination.
    async fn attest(
        &self,
        s: &Session,
        keys: &EnclaveKeys,
        funding_tx_sig: &str,
        final_tx_sig: &str,
        now: u64,
    ) -> Result<StepAnswer, SwapError> {
        self.check_funding(s, funding_tx_sig).await?;
        let landed = self
            .chain
            .transaction(final_tx_sig)
            .await
            .map_err(chain_error)?
            .ok_or(SwapError::NothingToDo("the delivery is not on chain"))?;
        let meta =
            landed.meta.as_ref().filter(|m| m.err.is_none()).ok_or(SwapError::NothingToDo("the delivery failed"))?;
        let tx =
            Transaction::parse(&landed.transaction).map_err(|_| SwapError::Chain("unparseable transaction".into()))?;
        if tx.message.fee_payer() != Some(&s.address) {
            return Err(SwapError::NothingToDo("that transaction is not this session's delivery"));
        }
        // What the destination's token account gained in that transaction.
        let destination = ata(&s.terms.destination, &s.terms.to_mint);
        let gained = |list: &[chain::TokenBalance]| {
            list.iter().find(|b| landed.account_keys.get(b.account_index) == Some(&destination)).map_or(0, |b| b.amount)
        };
        let out = gained(&meta.post_token_balances).saturating_sub(gained(&meta.pre_token_balances));
        if out == 0 {
            return Err(SwapError::NothingToDo("that transaction paid the destination nothing"));
        }
        let mut receipt = SwapReceipt {
            version: shared::swap::RECEIPT_VERSION.into(),
            session_id: s.text.session_id.clone(),
            from_mint: s.text.from_mint.clone(),
            to_mint: s.text.to_mint.clone(),
            amount_in: s.text.amount.clone(),
            actual_out: out.to_string(),
            destination: s.text.destination.clone(),
            ephemeral_pubkey: s.address.to_string(),
            funding_tx_sig: funding_tx_sig.into(),
            final_tx_sig: final_tx_sig.into(),
            timestamp: now,
            address: receipt_address(&s.terms.session_id, &self.program_id).to_string(),
            enclave_pubkey: b64::encode(keys.enclave_public()),
            signature: String::new(),
        };
        let message = receipt.message().map_err(|_| SwapError::NothingToDo("a transaction signature is malformed"))?;
        receipt.signature = b64::encode(keys.signer().sign(&message).to_bytes());
        Ok(StepAnswer { amount: Some(out.to_string()), receipt: Some(receipt), ..Default::default() })
    }
}

fn signed(tx: &Transaction, last_valid_block_height: u64, amount: u64) -> StepAnswer {
    StepAnswer {
        transaction: Some(b64::encode(tx.serialize())),
        signature: Some(tx.id()),
        last_valid_block_height: Some(last_valid_block_height),
        amount: Some(amount.to_string()),
        ..Default::default()
    }
}

fn malformed_field(e: &shared::swap::SwapError) -> &'static str {
    match e {
        shared::swap::SwapError::Malformed(field) => field,
        shared::swap::SwapError::BadSignature => "signature",
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

    #[test]
    fn upstreams_are_tls_or_literal_loopback() {
        let rows = [
            ("https://api.mainnet-beta.solana.com", true),
            ("http://127.0.0.1:8899", true),
            ("http://127.9.9.9/rpc", true),
            ("http://[::1]:8899", true),
            ("http://localhost:8899", false),
            ("http://10.0.2.2:8899", false),
            ("http://127.0.0.1.evil.example:80", false),
            ("ftp://127.0.0.1", false),
        ];
        for (url, ok) in rows {
            assert_eq!(super::tls_or_loopback(url), ok, "{url}");
        }
    }
}
