//! The Solana ledger writer (docs/log.md "Ledger writer"): in `solana` mode every commit of
//! the embedded log, a receipt commit or a log anchor, is also sent to the chain as a real
//! transaction with the same instruction (`0x02 ‖ sha256(ciphertext)` to the attestation
//! program, or the anchor's Memo), signed by the ledger key, which pays the fee.
//!
//! The queue is the database (`outbox`): a commit is queued in the transaction that stores it,
//! and each attempt's signature is recorded before the send. One pass of the loop first reads
//! the statuses of the attempts in flight (in batches), then builds and sends the queued ones
//! with one fresh blockhash. An attempt is given up only once its blockhash has expired
//! unseen, so it can no longer land, and the commit is rebuilt: nothing lands twice, and a
//! relay killed at any point resumes from the rows.

use std::sync::Arc;
use std::time::Duration;

use chain::{Chain, ChainError, Commitment, RpcChain};
use ed25519_dalek::SigningKey;
use serde::Deserialize;
use shared::address::Address;

use super::outbox::{self, OutboxRow, State};
use crate::receipts::Receipts;
use crate::store::{Store, StoreError};

/// Rows read per pass and state.
const BATCH: i64 = 64;

/// The `ledger` section of the relay's configuration.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct LedgerConfig {
    /// `embedded` (the commit log in the database is the ledger) or `solana` (each commit is
    /// also written to the chain at `rpcUrl`).
    pub mode: LedgerMode,
    /// Solana JSON-RPC (`solana` mode).
    pub rpc_url: Option<String>,
    /// Milliseconds between passes of the writer.
    pub poll_millis: u64,
    /// Most seconds between two attempts of a commit the chain refused.
    pub max_backoff_secs: u64,
    /// Per RPC call.
    pub rpc_timeout_secs: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum LedgerMode {
    #[default]
    Embedded,
    Solana,
}

impl Default for LedgerConfig {
    fn default() -> Self {
        LedgerConfig {
            mode: LedgerMode::Embedded,
            rpc_url: None,
            poll_millis: 500,
            max_backoff_secs: 300,
            rpc_timeout_secs: 10,
        }
    }
}

impl LedgerConfig {
    pub fn check(&self) -> Result<(), String> {
        match (self.mode, &self.rpc_url) {
            (LedgerMode::Solana, None) => Err("ledger.rpcUrl is required in solana mode".into()),
            (LedgerMode::Embedded, Some(_)) => Err("ledger.rpcUrl is only read in solana mode".into()),
            _ => Ok(()),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum WriterError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Chain(#[from] ChainError),
}

/// What one pass did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Pass {
    pub sent: usize,
    pub landed: usize,
    pub requeued: usize,
}

/// Sends the queued commits to the chain.
pub struct LedgerWriter {
    chain: RpcChain,
    key: SigningKey,
    program_id: Address,
    store: Store,
    max_backoff_secs: u64,
    poll: Duration,
}

impl LedgerWriter {
    /// `None` in embedded mode.
    pub fn from_config(
        config: &LedgerConfig,
        key: SigningKey,
        program_id: Address,
        store: Store,
    ) -> Result<Option<Self>, String> {
        config.check()?;
        let Some(url) = config.rpc_url.as_deref().filter(|_| config.mode == LedgerMode::Solana) else {
            return Ok(None);
        };
        let timeout = Duration::from_secs(config.rpc_timeout_secs.max(1));
        let chain = match url.starts_with("https://") {
            true => RpcChain::with_tls(url, timeout, chain::web_pki()),
            false => RpcChain::new(url, timeout),
        }
        .map_err(|e| format!("ledger.rpcUrl: {e}"))?
        .with_commitment(Commitment::Confirmed);
        Ok(Some(LedgerWriter {
            chain,
            key,
            program_id,
            store,
            max_backoff_secs: config.max_backoff_secs.max(1),
            poll: Duration::from_millis(config.poll_millis.max(10)),
        }))
    }

    /// The chain this writer sends to (lookups by a chain signature read it too).
    pub fn chain(&self) -> &RpcChain {
        &self.chain
    }

    /// One pass: settle the attempts in flight, then send the queued commits.
    pub async fn pass(&self, now: i64) -> Result<Pass, WriterError> {
        let mut done = Pass::default();
        self.check_sending(now, &mut done).await?;
        self.send_queued(now, &mut done).await?;
        Ok(done)
    }

    async fn check_sending(&self, now: i64, done: &mut Pass) -> Result<(), WriterError> {
        let pool = self.store.pool();
        let rows = outbox::due(pool, State::Sending, now, BATCH).await?;
        if rows.is_empty() {
            return Ok(());
        }
        let signatures: Vec<String> = rows.iter().filter_map(|r| r.chain_signature.clone()).collect();
        let statuses = self.chain.signature_statuses(&signatures).await?;
        let height = self.chain.block_height().await?;
        for (signature, status) in signatures.iter().zip(statuses) {
            let row = rows.iter().find(|r| r.chain_signature.as_deref() == Some(signature.as_str()));
            match status {
                Some(s) if s.err.is_some() => {
                    let error = format!("landed with an error: {}", s.err.unwrap_or_default());
                    tracing::warn!(tx = %signature, %error, "ledger commit failed on the chain; will retry");
                    let attempts = row.map_or(1, |r| r.attempts);
                    outbox::requeue(pool, signature, now + self.backoff(attempts), &error).await?;
                    done.requeued += 1;
                }
                Some(s) if s.confirmation_status.is_none_or(|c| c >= Commitment::Confirmed) => {
                    outbox::landed(pool, signature, now).await?;
                    done.landed += 1;
                }
                // Processed, not yet confirmed: it can no longer expire; look again next pass.
                Some(_) => {}
                None if row.and_then(|r| r.last_valid_height).is_some_and(|h| height > h as u64) => {
                    // Read once more: it may have landed between the two reads.
                    let again = self.chain.signature_statuses(std::slice::from_ref(signature)).await?;
                    if again.into_iter().next().flatten().is_none() {
                        outbox::requeue(pool, signature, now, "blockhash expired before the transaction landed")
                            .await?;
                        done.requeued += 1;
                    }
                }
                None => {}
            }
        }
        Ok(())
    }

    async fn send_queued(&self, now: i64, done: &mut Pass) -> Result<(), WriterError> {
        let pool = self.store.pool();
        let rows = outbox::due(pool, State::Queued, now, BATCH).await?;
        if rows.is_empty() {
            return Ok(());
        }
        let latest = match self.chain.latest_blockhash().await {
            Ok(l) => l,
            Err(e) => {
                for row in &rows {
                    outbox::postpone(pool, row, now + self.backoff(row.attempts + 1), &e.to_string()).await?;
                }
                return Err(e.into());
            }
        };
        for row in rows {
            let Some(committed) = self.load(&row).await? else { continue };
            let (wire, signature) = committed.build(&self.key, &self.program_id, &latest.blockhash);
            // Recorded before the send: after a crash the attempt is looked up, not repeated.
            if !outbox::record_sending(pool, &row, &signature, latest.last_valid_block_height, now).await? {
                continue;
            }
            crate::failpoint::hit("ledger:recorded");
            match self.chain.send_transaction(&wire).await {
                Ok(_) | Err(ChainError::AlreadyProcessed) => {
                    crate::failpoint::hit("ledger:sent");
                    done.sent += 1;
                }
                // Unknown whether it reached a leader: its status decides, next pass.
                Err(ChainError::Unreachable(_)) => {}
                Err(e @ ChainError::BlockhashNotFound) => {
                    outbox::requeue(pool, &signature, now, &e.to_string()).await?;
                    done.requeued += 1;
                }
                // Refused before it could land (no SOL for the fee, the program missing, …).
                Err(e) => {
                    tracing::warn!(commit = %row.commit_signature, error = %e, "the chain refused a ledger commit");
                    outbox::requeue(pool, &signature, now + self.backoff(row.attempts + 1), &e.to_string()).await?;
                    done.requeued += 1;
                }
            }
        }
        Ok(())
    }

    /// The queued commit, re-verified from the embedded log (nothing stored is trusted).
    async fn load(&self, row: &OutboxRow) -> Result<Option<Committed>, StoreError> {
        let Some(tx) = self.store.commit_by_signature(&row.commit_signature).await? else {
            return Err(StoreError::Corrupt("queued commit is missing from ledger_commits"));
        };
        let ours = self.key.verifying_key().to_bytes();
        if let Ok(anchor) = shared::ledger::anchor::parse_and_verify(&tx) {
            return Ok((anchor.payer == ours).then_some(Committed::Anchor(anchor.sth_hash)));
        }
        match shared::ledger::parse_and_verify(&tx) {
            Ok(c) if c.payer == ours && c.program_id == self.program_id => Ok(Some(Committed::Receipt(c.prompt_hash))),
            _ => {
                tracing::error!(commit = %row.commit_signature, "queued commit was not made by this ledger key");
                Ok(None)
            }
        }
    }

    fn backoff(&self, attempts: i64) -> i64 {
        let exp = attempts.clamp(0, 20) as u32;
        (1i64 << exp).min(self.max_backoff_secs as i64)
    }
}

/// What a commit carries, rebuilt on the chain's blockhash.
enum Committed {
    Receipt(shared::keys::PromptHash),
    Anchor([u8; 32]),
}

impl Committed {
    fn build(&self, key: &SigningKey, program_id: &Address, blockhash: &[u8; 32]) -> (Vec<u8>, String) {
        match self {
            Committed::Receipt(hash) => {
                let (wire, commit) = shared::ledger::build(key, program_id, blockhash, hash);
                (wire, commit.id())
            }
            Committed::Anchor(sth_hash) => {
                let (wire, tx) = shared::ledger::anchor::build(key, blockhash, sth_hash);
                (wire, tx.id())
            }
        }
    }
}

/// Runs the writer for the life of the relay (solana mode).
pub fn start(receipts: &Arc<Receipts>) {
    let Some(writer) = receipts.ledger.as_ref() else { return };
    let poll = writer.poll;
    let receipts = receipts.clone();
    tokio::spawn(async move {
        let Some(writer) = receipts.ledger.as_ref() else { return };
        let mut tick = tokio::time::interval(poll);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            match writer.pass(crate::unix_now()).await {
                Ok(p) if p != Pass::default() => {
                    tracing::debug!(sent = p.sent, landed = p.landed, requeued = p.requeued, "ledger writer pass")
                }
                Ok(_) => {}
                Err(e) => tracing::warn!(error = %e, "ledger writer pass failed; retrying"),
            }
        }
    });
}
