//! The embedded ledger: an append-only log of receipt commits, each a Solana-format
//! transaction signed by the relay's ledger key and chained to the previous one
//! (`shared::ledger`). Stored in the same transaction as the receipt it commits.

use std::io::Write;
use std::path::Path;

use ed25519_dalek::SigningKey;
use rand_core::{OsRng, RngCore};
use shared::address::Address;
use shared::receipt::Receipt;
use zeroize::Zeroizing;

use crate::store::{Store, StoreError, is_unique_violation};

pub struct Ledger {
    key: SigningKey,
    program_id: Address,
    store: Store,
    /// SQLite allows one writer; serialise commits in this process instead of failing on
    /// lock upgrades. Several relays on PostgreSQL are kept consistent by the unique `seq`.
    write_lock: tokio::sync::Mutex<()>,
}

#[derive(Debug, thiserror::Error)]
pub enum LedgerError {
    #[error("ledger key file {0}: {1}")]
    KeyFile(String, std::io::Error),
    #[error("ledger key file {0} must hold exactly 32 bytes")]
    KeyLength(String),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("a receipt for this ciphertext is already committed")]
    Duplicate,
}

/// Loads the ledger key, creating it (mode 0600) on first start.
pub fn load_or_create_key(path: &Path) -> Result<SigningKey, LedgerError> {
    let shown = path.display().to_string();
    match std::fs::read(path) {
        Ok(bytes) => {
            let bytes = Zeroizing::new(bytes);
            let seed: &[u8; 32] = bytes.as_slice().try_into().map_err(|_| LedgerError::KeyLength(shown))?;
            Ok(SigningKey::from_bytes(seed))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let mut seed = Zeroizing::new([0u8; 32]);
            OsRng.fill_bytes(seed.as_mut());
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir).map_err(|e| LedgerError::KeyFile(shown.clone(), e))?;
            }
            let mut options = std::fs::OpenOptions::new();
            options.write(true).create_new(true);
            #[cfg(unix)]
            std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
            let mut file = options.open(path).map_err(|e| LedgerError::KeyFile(shown.clone(), e))?;
            file.write_all(seed.as_ref()).map_err(|e| LedgerError::KeyFile(shown.clone(), e))?;
            Ok(SigningKey::from_bytes(&seed))
        }
        Err(e) => Err(LedgerError::KeyFile(shown, e)),
    }
}

impl Ledger {
    pub fn new(key: SigningKey, program_id: Address, store: Store) -> Self {
        Ledger { key, program_id, store, write_lock: tokio::sync::Mutex::new(()) }
    }

    /// The ledger's public key (the fee payer of every commit).
    pub fn public_key(&self) -> [u8; 32] {
        self.key.verifying_key().to_bytes()
    }

    pub fn program_id(&self) -> &Address {
        &self.program_id
    }

    /// Stores `receipt` and commits it; returns the commit's transaction id.
    pub async fn commit(&self, receipt: &Receipt, prompt_hash: &[u8; 32], now: i64) -> Result<String, LedgerError> {
        let receipt_json = serde_json::to_string(receipt).expect("receipt serialises");
        let _guard = self.write_lock.lock().await;
        for _ in 0..8 {
            let mut tx = self.store.begin().await?;
            let last = self.store.last_commit(&mut tx).await?;
            let (seq, blockhash) = match last {
                Some(c) => (c.seq + 1, shared::ledger::link_hash(&c.tx)),
                None => (0, [0u8; 32]),
            };
            let (bytes, commit) = shared::ledger::build(&self.key, &self.program_id, &blockhash, prompt_hash);
            let id = commit.id();
            let inserted = self
                .store
                .insert(&mut tx, seq, &id, &bytes, &receipt.address, &receipt.encrypted_prompt_hash, &receipt_json, now)
                .await;
            match inserted {
                Ok(()) => match tx.commit().await {
                    Ok(()) => return Ok(id),
                    Err(e) => return Err(LedgerError::Store(e.into())),
                },
                Err(e) if is_unique_violation(&e) => {
                    drop(tx);
                    // Either another relay took this seq (retry) or the receipt exists.
                    if self.store.receipt_by_address(&receipt.address).await?.is_some() {
                        return Err(LedgerError::Duplicate);
                    }
                }
                Err(e) => return Err(e.into()),
            }
        }
        Err(LedgerError::Store(StoreError::Corrupt("could not append a commit after 8 attempts")))
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
        assert!(matches!(load_or_create_key(&path), Err(LedgerError::KeyLength(_))));
    }
}
