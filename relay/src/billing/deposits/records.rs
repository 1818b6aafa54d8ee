//! Deposit rows: one per transfer seen, keyed by (transaction signature, instruction index),
//! and the scan cursor of each watched address.

use serde::Serialize;
use sqlx::Row;

use crate::store::{Store, StoreError};

/// Where a deposit is.
pub mod state {
    /// Landed; not yet finalized.
    pub const SEEN: &str = "seen";
    /// Finalized; its credit is next.
    pub const FINALIZED: &str = "finalized";
    pub const CREDITED: &str = "credited";
    /// Recorded, never credited (`reason`: `unknown_mint`, `below_minimum`).
    pub const IGNORED: &str = "ignored";
}

/// A transfer to a deposit owner, as recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DepositRecord {
    pub signature: String,
    /// The transfer's instruction index; -1 for a balance change no top-level transfer explains
    /// (a transfer made by a program).
    pub ix: i64,
    pub key_id: String,
    pub owner: String,
    pub mint: String,
    /// What it credits; null for a mint this service does not take.
    pub currency: Option<String>,
    /// Base units, as a string.
    #[schema(value_type = String)]
    #[serde(serialize_with = "as_string")]
    pub amount: i64,
    pub state: String,
    pub reason: Option<String>,
    pub slot: i64,
    pub created_at: i64,
}

fn as_string<S: serde::Serializer>(v: &i64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&v.to_string())
}

fn from_row(r: &sqlx::any::AnyRow) -> Result<DepositRecord, sqlx::Error> {
    Ok(DepositRecord {
        signature: r.try_get("signature")?,
        ix: r.try_get("ix")?,
        key_id: r.try_get("key_id")?,
        owner: r.try_get("owner")?,
        mint: r.try_get("mint")?,
        currency: r.try_get("currency")?,
        amount: r.try_get("amount")?,
        state: r.try_get("state")?,
        reason: r.try_get("reason")?,
        slot: r.try_get("slot")?,
        created_at: r.try_get("created_at")?,
    })
}

const COLUMNS: &str = "signature, ix, key_id, owner, mint, currency, amount, state, reason, slot, created_at";

/// Records a transfer once; a second record of the same (signature, ix) changes nothing.
/// True if it was new.
pub async fn record(store: &Store, d: &DepositRecord, now: i64) -> Result<bool, StoreError> {
    let done = sqlx::query(
        "INSERT INTO chain_deposits (signature, ix, key_id, owner, mint, currency, amount, state, reason, slot, \
         created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11) \
         ON CONFLICT (signature, ix) DO NOTHING",
    )
    .bind(&d.signature)
    .bind(d.ix)
    .bind(&d.key_id)
    .bind(&d.owner)
    .bind(&d.mint)
    .bind(&d.currency)
    .bind(d.amount)
    .bind(&d.state)
    .bind(&d.reason)
    .bind(d.slot)
    .bind(now)
    .execute(store.pool())
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Signatures of deposits still waiting to be finalized.
pub async fn waiting(store: &Store) -> Result<Vec<String>, StoreError> {
    let rows = sqlx::query("SELECT DISTINCT signature FROM chain_deposits WHERE state = $1")
        .bind(state::SEEN)
        .fetch_all(store.pool())
        .await?;
    Ok(rows.iter().map(|r| r.try_get("signature")).collect::<Result<_, _>>()?)
}

/// Marks a transaction's deposits finalized (credited next).
pub async fn finalize(store: &Store, signature: &str, now: i64) -> Result<(), StoreError> {
    sqlx::query("UPDATE chain_deposits SET state = $1, updated_at = $2 WHERE signature = $3 AND state = $4")
        .bind(state::FINALIZED)
        .bind(now)
        .bind(signature)
        .bind(state::SEEN)
        .execute(store.pool())
        .await?;
    Ok(())
}

/// Deposits finalized and not yet credited: (signature, ix).
pub async fn to_credit(store: &Store) -> Result<Vec<(String, i64)>, StoreError> {
    let rows = sqlx::query("SELECT signature, ix FROM chain_deposits WHERE state = $1 ORDER BY created_at")
        .bind(state::FINALIZED)
        .fetch_all(store.pool())
        .await?;
    Ok(rows.iter().map(|r| Ok((r.try_get("signature")?, r.try_get("ix")?))).collect::<Result<_, sqlx::Error>>()?)
}

/// A key's deposits, newest first.
pub async fn of_key(store: &Store, key_id: &str, limit: i64) -> Result<Vec<DepositRecord>, StoreError> {
    let rows = sqlx::query(&format!(
        "SELECT {COLUMNS} FROM chain_deposits WHERE key_id = $1 ORDER BY created_at DESC, signature, ix LIMIT $2"
    ))
    .bind(key_id)
    .bind(limit)
    .fetch_all(store.pool())
    .await?;
    Ok(rows.iter().map(from_row).collect::<Result<_, _>>()?)
}

/// Where the scan of one watched address stands.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScanState {
    /// The newest signature such that it and every older one have been handled.
    pub cursor: Option<String>,
    /// A walk back to `cursor` under way: (its newest signature, the oldest it has handled).
    pub walk: Option<(String, String)>,
}

pub async fn scan_state(store: &Store, address: &str) -> Result<ScanState, StoreError> {
    let cursor = sqlx::query("SELECT last_signature FROM deposit_cursors WHERE address = $1")
        .bind(address)
        .fetch_optional(store.pool())
        .await?
        .map(|r| r.try_get("last_signature"))
        .transpose()?;
    let walk = sqlx::query("SELECT top_signature, below_signature FROM deposit_walks WHERE address = $1")
        .bind(address)
        .fetch_optional(store.pool())
        .await?
        .map(|r| Ok::<_, sqlx::Error>((r.try_get("top_signature")?, r.try_get("below_signature")?)))
        .transpose()?;
    Ok(ScanState { cursor, walk })
}

/// Saves a walk's progress: everything from `top` down to `below` has been handled.
pub async fn save_walk(store: &Store, address: &str, top: &str, below: &str, now: i64) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO deposit_walks (address, top_signature, below_signature, updated_at) VALUES ($1, $2, $3, $4) \
         ON CONFLICT (address) DO UPDATE SET top_signature = $2, below_signature = $3, updated_at = $4",
    )
    .bind(address)
    .bind(top)
    .bind(below)
    .bind(now)
    .execute(store.pool())
    .await?;
    Ok(())
}

/// Ends a walk that reached the old cursor: `top` becomes the cursor, in one transaction with
/// forgetting the walk (a walk left beside its own top would search below it for ever).
pub async fn finish_walk(store: &Store, address: &str, top: &str, now: i64) -> Result<(), StoreError> {
    let mut tx = store.begin().await?;
    sqlx::query(
        "INSERT INTO deposit_cursors (address, last_signature, updated_at) VALUES ($1, $2, $3) \
         ON CONFLICT (address) DO UPDATE SET last_signature = $2, updated_at = $3",
    )
    .bind(address)
    .bind(top)
    .bind(now)
    .execute(&mut *tx)
    .await?;
    sqlx::query("DELETE FROM deposit_walks WHERE address = $1").bind(address).execute(&mut *tx).await?;
    tx.commit().await?;
    Ok(())
}
