//! The receipt commit log (the embedded ledger): an append-only log of receipt commits, each a
//! Solana-format transaction signed by the relay's ledger key and chained to the previous one
//! (`shared::ledger`), stored in the same database transaction as the receipt it commits, and
//! in that transaction the receipt is appended to the transparency log (`crate::receipts::log`). Log
//! anchors are commits too: a Memo transaction recorded with its anchor row. It records
//! receipts, not money. In `solana` ledger mode each commit is also queued, in the same
//! transaction, for the ledger writer that sends it to the chain (`ledger_writer`).
//!
//! Chat receipts are committed in groups: the requests that arrive while one database
//! transaction runs wait and go together in the next one, so one commit (and one fsync) serves
//! many. Each caller gets its commit id only after its group's transaction committed, so an
//! answer is never released for a receipt a crash could still lose. A group that fails is
//! committed again one receipt at a time, so one bad receipt costs no other its commit.

use std::io::Write;
use std::path::Path;

use ed25519_dalek::SigningKey;
use rand_core::{OsRng, RngCore};
use shared::address::Address;
use shared::keys::PromptHash;
use shared::receipt::Receipt;
use shared::swap::SwapReceipt;
use sqlx::Row;
use zeroize::Zeroizing;

use crate::group_commit::GroupCommit;
use crate::receipts::log::anchor::AnchorRecord;
use crate::receipts::log::append::NewLeaf;
use crate::store::{NewCommit, NewReceipt, Store, StoreError, is_busy_snapshot, is_unique_violation};

pub struct CommitLog {
    key: SigningKey,
    program_id: Address,
    store: Store,
    /// Chat receipts waiting for the next group. Commits are serialised in this process (SQLite
    /// allows one writer, and a commit chains to the one before); several relays on PostgreSQL
    /// are kept consistent by the unique `seq`.
    groups: GroupCommit<Waiting>,
    /// `solana` ledger mode: queue every commit for the ledger writer, in its own transaction.
    queue_for_chain: bool,
}

/// A chat receipt waiting for its group, and where its commit id goes.
struct Waiting {
    receipt: Receipt,
    json: String,
    digest: PromptHash,
    entry: Vec<u8>,
    now: i64,
    done: tokio::sync::oneshot::Sender<Result<String, CommitError>>,
}

impl Waiting {
    fn record(&self) -> Record<'_> {
        Record::Chat { receipt: &self.receipt, json: &self.json, digest: &self.digest, entry: &self.entry }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum CommitError {
    #[error("ledger key file {0}: {1}")]
    KeyFile(String, std::io::Error),
    #[error("ledger key file {0} must hold exactly 32 bytes")]
    KeyLength(String),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("a receipt for this ciphertext is already committed")]
    Duplicate,
    #[error("the receipt is malformed")]
    Malformed,
}

/// Loads the ledger key, creating it (mode 0600) on first start.
pub fn load_or_create_key(path: &Path) -> Result<SigningKey, CommitError> {
    let shown = path.display().to_string();
    match std::fs::read(path) {
        Ok(bytes) => {
            let bytes = Zeroizing::new(bytes);
            let seed: &[u8; 32] = bytes.as_slice().try_into().map_err(|_| CommitError::KeyLength(shown))?;
            Ok(SigningKey::from_bytes(seed))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let mut seed = Zeroizing::new([0u8; 32]);
            OsRng.fill_bytes(seed.as_mut());
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir).map_err(|e| CommitError::KeyFile(shown.clone(), e))?;
            }
            let mut options = std::fs::OpenOptions::new();
            options.write(true).create_new(true);
            #[cfg(unix)]
            std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
            let mut file = options.open(path).map_err(|e| CommitError::KeyFile(shown.clone(), e))?;
            file.write_all(seed.as_ref()).map_err(|e| CommitError::KeyFile(shown.clone(), e))?;
            Ok(SigningKey::from_bytes(&seed))
        }
        Err(e) => Err(CommitError::KeyFile(shown, e)),
    }
}

impl CommitLog {
    pub fn new(key: SigningKey, program_id: Address, store: Store) -> Self {
        CommitLog { key, program_id, store, groups: GroupCommit::default(), queue_for_chain: false }
    }

    /// Queues every commit for the Solana ledger writer (`super::ledger_writer`).
    pub fn queue_for_chain(mut self) -> Self {
        self.queue_for_chain = true;
        self
    }

    /// True when commits also go to the chain (`solana` ledger mode).
    pub fn queues_for_chain(&self) -> bool {
        self.queue_for_chain
    }

    /// The ledger's public key (the fee payer of every commit).
    pub fn public_key(&self) -> [u8; 32] {
        self.key.verifying_key().to_bytes()
    }

    pub fn program_id(&self) -> &Address {
        &self.program_id
    }

    /// The public link of a commit: its lookup on this relay.
    pub fn explorer_url(&self, public_url: &str, signature: &str) -> String {
        format!("{public_url}/attestation/by-tx/{signature}")
    }

    /// Stores `receipt` and commits it, in a group with the receipts that wait beside it;
    /// returns the commit's transaction id once the group's transaction committed.
    pub async fn commit(&self, receipt: &Receipt, prompt_hash: &PromptHash, now: i64) -> Result<String, CommitError> {
        let json = serde_json::to_string(receipt).expect("receipt serialises");
        let entry = shared::tlog::entry::chat(receipt).ok_or(CommitError::Malformed)?;
        let (done, answer) = tokio::sync::oneshot::channel();
        let waiting = Waiting { receipt: receipt.clone(), json, digest: *prompt_hash, entry, now, done };
        self.groups.submit(waiting, |group| self.commit_group(group)).await;
        answer.await.unwrap_or(Err(CommitError::Store(StoreError::Corrupt("the group commit did not finish"))))
    }

    /// Commits `group` in one transaction, or, if that fails, each receipt on its own.
    async fn commit_group(&self, group: Vec<Waiting>) {
        if group.len() > 1 {
            match self.append_group(&group).await {
                Ok(ids) => {
                    for (waiting, id) in group.into_iter().zip(ids) {
                        let _ = waiting.done.send(Ok(id));
                    }
                    return;
                }
                Err(e) => {
                    tracing::info!(error = %e, receipts = group.len(), "group commit failed; committing one by one")
                }
            }
        }
        for waiting in group {
            let result = self.append_locked(waiting.record(), waiting.now).await;
            let _ = waiting.done.send(result);
        }
    }

    /// One transaction for all of `group`: commits chained in order, their receipts and log
    /// entries, a few statements whatever the group's size. Any failure rolls all of it back.
    async fn append_group(&self, group: &[Waiting]) -> Result<Vec<String>, CommitError> {
        let mut turn = self.store.write_turn().await;
        let mut tx = turn.begin().await?;
        // The log's append comes first: it takes the log head's row lock, as every commit writer
        // does before the commit chain (`crate::receipts::log::append::lock_head`), and on SQLite the
        // read of the last commit below then never has to upgrade a read lock.
        let leaves: Vec<NewLeaf<'_>> =
            group.iter().map(|w| NewLeaf { entry: &w.entry, address: &w.receipt.address, now: w.now }).collect();
        crate::receipts::log::append::append_all(&mut tx, &leaves).await?;
        let (mut seq, mut blockhash) = match self.store.last_commit(&mut tx).await? {
            Some(c) => (c.seq + 1, shared::ledger::link_hash(&c.tx)),
            None => (0, [0u8; 32]),
        };
        let mut transactions = Vec::with_capacity(group.len());
        for waiting in group {
            let (bytes, id) = waiting.record().transaction(&self.key, &self.program_id, &blockhash);
            blockhash = shared::ledger::link_hash(&bytes);
            transactions.push((seq, id, bytes, waiting.now));
            seq += 1;
        }
        let commits: Vec<NewCommit<'_>> = transactions
            .iter()
            .map(|(seq, id, bytes, now)| NewCommit { seq: *seq, signature: id, tx_bytes: bytes, now: *now })
            .collect();
        self.store.insert_commits(&mut tx, &commits).await?;
        let receipts: Vec<NewReceipt<'_>> = group
            .iter()
            .zip(&commits)
            .map(|(w, c)| NewReceipt {
                signature: c.signature,
                address: &w.receipt.address,
                prompt_hash: &w.receipt.encrypted_prompt_hash,
                receipt_json: &w.json,
                now: w.now,
            })
            .collect();
        self.store.insert_receipts(&mut tx, &receipts).await?;
        if self.queue_for_chain {
            let queued: Vec<(&str, i64)> = commits.iter().map(|c| (c.signature, c.now)).collect();
            super::outbox::enqueue_all(&mut tx, &queued).await?;
        }
        crate::failpoint::hit("receipts:group:written");
        tx.commit().await.map_err(|e| CommitError::Store(e.into()))?;
        crate::failpoint::hit("receipts:group:committed");
        Ok(commits.iter().map(|c| c.signature.to_string()).collect())
    }

    /// Stores a settled swap session's receipt on its session row and commits the sha256 of
    /// its signed message; returns the commit's transaction id. Idempotent: a session whose
    /// receipt is already committed keeps it and gets its commit id back.
    pub async fn commit_swap(&self, receipt: &SwapReceipt, now: i64) -> Result<String, CommitError> {
        let message = receipt.message().map_err(|_| CommitError::Malformed)?;
        let digest = PromptHash(shared::sha256(&message));
        let json = serde_json::to_string(receipt).expect("receipt serialises");
        let entry = shared::tlog::entry::swap(receipt).ok_or(CommitError::Malformed)?;
        match self.append(Record::Swap { receipt, json: &json, digest: &digest, entry: &entry }, now).await {
            Err(CommitError::Duplicate) => {
                let row = sqlx::query("SELECT attestation_tx_sig FROM swap_sessions WHERE id = $1")
                    .bind(&receipt.session_id)
                    .fetch_optional(self.store.pool())
                    .await
                    .map_err(StoreError::from)?;
                let existing: Option<String> =
                    row.map(|r| r.try_get("attestation_tx_sig")).transpose().map_err(StoreError::from)?.flatten();
                existing.ok_or(CommitError::Duplicate)
            }
            other => other,
        }
    }

    /// Commits a log anchor: a Memo transaction carrying the signed head's hash, recorded with
    /// its anchor row in one database transaction. `Duplicate` if that size is anchored.
    pub async fn commit_anchor(&self, anchor: &AnchorRecord, now: i64) -> Result<String, CommitError> {
        self.append(Record::Anchor(anchor), now).await
    }

    async fn append(&self, record: Record<'_>, now: i64) -> Result<String, CommitError> {
        self.groups.alone(|| self.append_locked(record, now)).await
    }

    /// [`Self::append`] between groups.
    async fn append_locked(&self, record: Record<'_>, now: i64) -> Result<String, CommitError> {
        for attempt in 1..=crate::store::BUSY_ATTEMPTS {
            let mut turn = self.store.write_turn().await;
            let mut tx = turn.begin().await?;
            match self.write_one(&mut tx, &record, now).await {
                Ok(Some(id)) => match tx.commit().await {
                    Ok(()) => return Ok(id),
                    Err(e) => return Err(CommitError::Store(e.into())),
                },
                // The record was already committed (a swap receipt): nothing to append.
                Ok(None) => return Err(CommitError::Duplicate),
                Err(e) if is_unique_violation(&e) => {
                    drop(tx);
                    drop(turn);
                    // Either another relay took this seq (retry) or the receipt exists.
                    if record.exists(&self.store).await? {
                        return Err(CommitError::Duplicate);
                    }
                }
                // SQLite: another connection (a rate window, a refund) held the write lock
                // past the busy timeout, at any statement (the head's lock included): try
                // again, without holding the writers' turn.
                Err(e) if is_busy_snapshot(&e) => {
                    drop(tx);
                    drop(turn);
                    crate::store::busy_pause(attempt).await;
                }
                Err(e) => return Err(e.into()),
            }
        }
        Err(CommitError::Store(StoreError::Corrupt("could not append a commit: the database stayed busy")))
    }

    /// One commit chained after the last, with its record, inside `tx`: the commit's id, or
    /// `None` when the record was committed already.
    async fn write_one(
        &self,
        tx: &mut sqlx::Transaction<'_, sqlx::Any>,
        record: &Record<'_>,
        now: i64,
    ) -> Result<Option<String>, StoreError> {
        crate::receipts::log::append::lock_head(tx).await?;
        let (seq, blockhash) = match self.store.last_commit(tx).await? {
            Some(c) => (c.seq + 1, shared::ledger::link_hash(&c.tx)),
            None => (0, [0u8; 32]),
        };
        let (bytes, id) = record.transaction(&self.key, &self.program_id, &blockhash);
        self.store.insert_commit(tx, seq, &id, &bytes, now).await?;
        if !record.store(&self.store, tx, &id, now).await? {
            return Ok(None);
        }
        if self.queue_for_chain {
            super::outbox::enqueue(tx, &id, now).await?;
        }
        Ok(Some(id))
    }
}

/// What a commit commits, stored in the same database transaction.
enum Record<'a> {
    Chat { receipt: &'a Receipt, json: &'a str, digest: &'a PromptHash, entry: &'a [u8] },
    Swap { receipt: &'a SwapReceipt, json: &'a str, digest: &'a PromptHash, entry: &'a [u8] },
    Anchor(&'a AnchorRecord),
}

impl Record<'_> {
    /// The ledger transaction and its id: a receipt commit, or an anchor's Memo transaction.
    fn transaction(&self, key: &SigningKey, program_id: &Address, blockhash: &[u8; 32]) -> (Vec<u8>, String) {
        match self {
            Record::Chat { digest, .. } | Record::Swap { digest, .. } => {
                let (bytes, commit) = shared::ledger::build(key, program_id, blockhash, digest);
                (bytes, commit.id())
            }
            Record::Anchor(anchor) => {
                let (bytes, tx) = shared::ledger::anchor::build(key, blockhash, &anchor.sth_hash);
                (bytes, tx.id())
            }
        }
    }

    /// Stores the record beside commit `id`; false if a swap session already has its receipt.
    async fn store(
        &self,
        store: &Store,
        tx: &mut sqlx::Transaction<'_, sqlx::Any>,
        id: &str,
        now: i64,
    ) -> Result<bool, StoreError> {
        match self {
            Record::Chat { receipt, json, entry, .. } => {
                store.insert_receipt(tx, id, &receipt.address, &receipt.encrypted_prompt_hash, json, now).await?;
                crate::receipts::log::append::append(tx, entry, &receipt.address, now).await?;
                Ok(true)
            }
            Record::Swap { receipt, json, entry, .. } => {
                let done = sqlx::query(
                    "UPDATE swap_sessions SET receipt_json = $1, attestation_address = $2, attestation_tx_sig = $3, \
                     updated_at = $4 WHERE id = $5 AND attestation_tx_sig IS NULL",
                )
                .bind(*json)
                .bind(&receipt.address)
                .bind(id)
                .bind(now)
                .bind(&receipt.session_id)
                .execute(&mut **tx)
                .await?;
                if done.rows_affected() != 1 {
                    return Ok(false);
                }
                crate::receipts::log::append::append(tx, entry, &receipt.address, now).await?;
                Ok(true)
            }
            Record::Anchor(anchor) => {
                anchor.store(tx, id, now).await?;
                Ok(true)
            }
        }
    }

    async fn exists(&self, store: &Store) -> Result<bool, StoreError> {
        match self {
            Record::Chat { receipt, .. } => Ok(store.receipt_by_address(&receipt.address).await?.is_some()),
            Record::Swap { .. } => Ok(false),
            Record::Anchor(anchor) => anchor.exists(store.pool()).await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_is_created_once_with_private_mode() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/ledger-key");
        let a = load_or_create_key(&path).unwrap();
        let b = load_or_create_key(&path).unwrap();
        assert_eq!(a.to_bytes(), b.to_bytes());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        }
        std::fs::write(&path, [1u8; 31]).unwrap();
        assert!(matches!(load_or_create_key(&path), Err(CommitError::KeyLength(_))));
    }
}
