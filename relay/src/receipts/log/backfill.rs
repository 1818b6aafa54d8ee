//! Receipts committed before the log existed (before migration 0012) are appended once, at
//! start, oldest first: a relay upgraded to the log leaves no receipt out of it. Each append
//! is its own transaction; a receipt another relay appended meanwhile fails the address's
//! unique constraint and is skipped, so running this on several relays at once is safe.

use shared::receipt::Receipt;
use sqlx::Row;

use super::append::append;
use crate::store::{Store, StoreError, is_unique_violation};

/// Appends every stored receipt the log lacks; returns how many it appended.
pub async fn backfill(store: &Store, now: i64) -> Result<u64, StoreError> {
    let chats = sqlx::query(
        "SELECT address, receipt_json FROM receipts WHERE address NOT IN (SELECT address FROM tlog_entries) \
         ORDER BY created_at, address",
    )
    .fetch_all(store.pool())
    .await?;
    let swaps = sqlx::query(
        "SELECT attestation_address, receipt_json FROM swap_sessions WHERE attestation_tx_sig IS NOT NULL \
         AND attestation_address NOT IN (SELECT address FROM tlog_entries) ORDER BY updated_at, id",
    )
    .fetch_all(store.pool())
    .await?;
    let mut done = 0;
    for row in chats {
        let json: String = row.try_get("receipt_json")?;
        let receipt: Receipt = serde_json::from_str(&json).map_err(|_| StoreError::Corrupt("receipt_json"))?;
        let entry = shared::tlog::entry::chat(&receipt).ok_or(StoreError::Corrupt("receipt_json"))?;
        done += u64::from(append_once(store, &entry, &row.try_get::<String, _>("address")?, now).await?);
    }
    for row in swaps {
        let json: String = row.try_get("receipt_json")?;
        let receipt: shared::swap::SwapReceipt =
            serde_json::from_str(&json).map_err(|_| StoreError::Corrupt("swap receipt_json"))?;
        let entry = shared::tlog::entry::swap(&receipt).ok_or(StoreError::Corrupt("swap receipt_json"))?;
        done += u64::from(append_once(store, &entry, &row.try_get::<String, _>("attestation_address")?, now).await?);
    }
    Ok(done)
}

/// True if appended, false if the address is already in the log.
async fn append_once(store: &Store, entry: &[u8], address: &str, now: i64) -> Result<bool, StoreError> {
    let mut tx = store.begin().await?;
    match append(&mut tx, entry, address, now).await {
        Ok(_) => {
            tx.commit().await?;
            Ok(true)
        }
        Err(e) if is_unique_violation(&e) => Ok(false),
        Err(e) => Err(e),
    }
}
