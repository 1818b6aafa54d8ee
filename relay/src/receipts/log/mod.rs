//! The transparency log of receipts (DESIGN §12, docs/log.md): every committed receipt is a
//! leaf, appended in the transaction that stores it (`append`), with RFC 9162 hashing from
//! `shared::tlog`. Tree heads are signed by the relay's ledger key (the log key); `anchor`
//! writes their hashes to the ledger; `routes` serves `/log/v1`.

pub mod anchor;
pub mod append;
pub mod backfill;
pub mod read;
pub mod routes;
pub mod web_bundle;

use ed25519_dalek::SigningKey;
use serde::Deserialize;
use shared::tlog::sth::TreeHead;
use shared::tlog::wire::SignedTreeHead;

use crate::store::{Store, StoreError};

/// The `log` section of the relay's configuration.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct LogConfig {
    /// Seconds between anchors (only when the tree grew); 0 turns anchoring off.
    pub anchor_secs: u64,
}

impl Default for LogConfig {
    fn default() -> Self {
        LogConfig { anchor_secs: 60 }
    }
}

/// Signs tree heads over the stored log.
pub struct TransparencyLog {
    key: SigningKey,
    store: Store,
    pub config: LogConfig,
}

impl TransparencyLog {
    /// `key` is the ledger key: one key for commits, anchors and heads (docs/log.md).
    pub fn new(key: SigningKey, store: Store, config: LogConfig) -> Self {
        TransparencyLog { key, store, config }
    }

    pub fn log_key(&self) -> [u8; 32] {
        self.key.verifying_key().to_bytes()
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Signs the head of `size` leaves with root `root`, now.
    pub fn sign(&self, size: u64, root: shared::tlog::Hash) -> (TreeHead, [u8; 64]) {
        let head = TreeHead { size, root, timestamp: shared::time::unix_now_ms() };
        let signature = head.sign(&self.key);
        (head, signature)
    }

    pub fn wire(&self, head: &TreeHead, signature: &[u8; 64]) -> SignedTreeHead {
        SignedTreeHead::new(head, signature, &self.log_key())
    }

    /// The current signed head.
    pub async fn head(&self) -> Result<SignedTreeHead, StoreError> {
        let pool = self.store.pool();
        let size = read::size(pool).await?;
        let (head, signature) = self.sign(size, read::root(pool, size).await?);
        Ok(self.wire(&head, &signature))
    }
}
