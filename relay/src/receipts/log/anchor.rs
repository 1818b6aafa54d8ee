//! Anchoring (docs/log.md "Anchoring"): every `anchorSecs`, if the tree grew since the last
//! anchor, sign the current head and commit its hash to the ledger in one Memo transaction
//! (`CommitLog::commit_anchor`), which records the anchor in the same database transaction.
//! The anchors table's key is the tree size, so a restarted relay or a second one on the same
//! database never anchors a head twice.

use std::sync::Arc;
use std::time::Duration;

use shared::tlog::wire::Anchor;
use sqlx::Row;

use super::{TransparencyLog, read};
use crate::receipts::Receipts;
use crate::receipts::{CommitError, CommitLog};
use crate::store::StoreError;

/// An anchor to record beside its ledger transaction.
#[derive(Debug, Clone)]
pub struct AnchorRecord {
    pub head: shared::tlog::sth::TreeHead,
    pub signature: [u8; 64],
    pub sth_hash: shared::tlog::Hash,
}

impl AnchorRecord {
    /// Records the anchor inside `tx`, beside ledger transaction `tx_signature`.
    pub async fn store(
        &self,
        tx: &mut sqlx::Transaction<'_, sqlx::Any>,
        tx_signature: &str,
        now: i64,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO tlog_anchors (tree_size, root_hash, sth_timestamp, sth_signature, sth_hash, tx_signature, \
             created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind(self.head.size as i64)
        .bind(hex::encode(self.head.root))
        .bind(self.head.timestamp as i64)
        .bind(hex::encode(self.signature))
        .bind(hex::encode(self.sth_hash))
        .bind(tx_signature)
        .bind(now)
        .execute(&mut **tx)
        .await?;
        Ok(())
    }

    /// True when a head of this size is already anchored.
    pub async fn exists(&self, pool: &sqlx::AnyPool) -> Result<bool, StoreError> {
        let row = sqlx::query("SELECT tree_size FROM tlog_anchors WHERE tree_size = $1")
            .bind(self.head.size as i64)
            .fetch_optional(pool)
            .await?;
        Ok(row.is_some())
    }
}

/// The largest anchored size, if any.
pub async fn last_anchored(pool: &sqlx::AnyPool) -> Result<Option<u64>, StoreError> {
    let row =
        sqlx::query("SELECT tree_size FROM tlog_anchors ORDER BY tree_size DESC LIMIT 1").fetch_optional(pool).await?;
    Ok(row.map(|r| r.try_get::<i64, _>("tree_size")).transpose()?.map(|s| s as u64))
}

/// Anchors the current head if the tree grew since the last anchor; returns the ledger
/// transaction's id, or `None` when there was nothing new (or another relay anchored it).
pub async fn anchor_once(log: &TransparencyLog, commits: &CommitLog, now: i64) -> Result<Option<String>, CommitError> {
    let pool = log.store().pool();
    let size = read::size(pool).await?;
    if size == 0 || last_anchored(pool).await?.is_some_and(|last| last >= size) {
        return Ok(None);
    }
    let (head, signature) = log.sign(size, read::root(pool, size).await?);
    let record = AnchorRecord { head, signature, sth_hash: head.signed_hash(&signature) };
    match commits.commit_anchor(&record, now).await {
        Ok(id) => Ok(Some(id)),
        Err(CommitError::Duplicate) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Runs `anchor_once` every `anchorSecs` (if not 0) for the life of the relay.
pub fn start(receipts: &Arc<Receipts>) {
    let secs = receipts.log.config.anchor_secs;
    if secs == 0 {
        return;
    }
    let receipts = receipts.clone();
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_secs(secs));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            match anchor_once(&receipts.log, &receipts.commits, crate::unix_now()).await {
                Ok(Some(id)) => tracing::info!(tx = %id, "log head anchored"),
                Ok(None) => {}
                Err(e) => tracing::warn!(error = %e, "log anchor failed; retrying next interval"),
            }
        }
    });
}

/// The newest `limit` anchors, with their ledger transactions.
pub async fn list(log: &TransparencyLog, limit: u64) -> Result<Vec<Anchor>, StoreError> {
    let rows = sqlx::query(
        "SELECT a.tree_size, a.root_hash, a.sth_timestamp, a.sth_signature, a.sth_hash, a.tx_signature, a.created_at, \
         c.tx_base64, o.chain_signature FROM tlog_anchors a JOIN ledger_commits c ON c.signature = a.tx_signature \
         LEFT JOIN ledger_outbox o ON o.commit_signature = a.tx_signature AND o.state = 'landed' \
         ORDER BY a.tree_size DESC LIMIT $1",
    )
    .bind(limit as i64)
    .fetch_all(log.store().pool())
    .await?;
    let key = hex::encode(log.log_key());
    rows.into_iter()
        .map(|r| {
            Ok(Anchor {
                sth: shared::tlog::wire::SignedTreeHead {
                    tree_size: r.try_get::<i64, _>("tree_size")? as u64,
                    root_hash: r.try_get("root_hash")?,
                    timestamp: r.try_get::<i64, _>("sth_timestamp")? as u64,
                    signature: r.try_get("sth_signature")?,
                    log_key: key.clone(),
                },
                sth_hash: r.try_get("sth_hash")?,
                tx_signature: r.try_get("tx_signature")?,
                transaction: r.try_get("tx_base64")?,
                anchored_at: r.try_get("created_at")?,
                ledger_signature: r.try_get("chain_signature")?,
            })
        })
        .collect()
}
