//! Prepaid balances: exact integer base units, every change journaled in the same transaction
//! that makes it. A debit either finds enough balance and records itself, or changes nothing.

use rand_core::{OsRng, RngCore};
use sqlx::Row;

use crate::store::{Store, StoreError};

/// Currencies a balance can be held in.
pub const CURRENCIES: &[&str] = &["usdc", "svc"];

#[derive(Debug, thiserror::Error)]
pub enum BillingError {
    #[error("insufficient balance")]
    Insufficient,
    #[error("unknown currency `{0}`")]
    UnknownCurrency(String),
    #[error("amount must be positive")]
    NotPositive,
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<sqlx::Error> for BillingError {
    fn from(e: sqlx::Error) -> Self {
        BillingError::Store(e.into())
    }
}

fn journal_id() -> String {
    let mut b = [0u8; 16];
    OsRng.fill_bytes(&mut b);
    hex::encode(b)
}

fn check(currency: &str, amount: i64) -> Result<(), BillingError> {
    if !CURRENCIES.contains(&currency) {
        return Err(BillingError::UnknownCurrency(currency.chars().take(16).collect()));
    }
    if amount <= 0 {
        return Err(BillingError::NotPositive);
    }
    Ok(())
}

/// One journal row: what changed, by how much, and why.
struct Change<'a> {
    key_id: &'a str,
    currency: &'a str,
    delta: i64,
    after: i64,
    kind: &'a str,
    reference: &'a str,
    now: i64,
}

/// Journals one change inside `tx`.
async fn journal(tx: &mut sqlx::Transaction<'_, sqlx::Any>, c: Change<'_>) -> Result<(), BillingError> {
    sqlx::query(
        "INSERT INTO balance_journal (id, key_id, currency, delta, balance_after, kind, reference, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(journal_id())
    .bind(c.key_id)
    .bind(c.currency)
    .bind(c.delta)
    .bind(c.after)
    .bind(c.kind)
    .bind(c.reference)
    .bind(c.now)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Adds `amount`; returns the new balance. `kind` says where it came from (`admin`, `deposit`,
/// `refund`), `reference` identifies it (operator note, deposit transaction, request).
pub async fn credit(
    store: &Store,
    key_id: &str,
    currency: &str,
    amount: i64,
    kind: &str,
    reference: &str,
    now: i64,
) -> Result<i64, BillingError> {
    check(currency, amount)?;
    let mut tx = store.begin().await?;
    // One statement for insert-or-add, so two concurrent first credits cannot both insert.
    let row = sqlx::query(
        "INSERT INTO balances (key_id, currency, amount) VALUES ($1, $2, $3) \
         ON CONFLICT (key_id, currency) DO UPDATE SET amount = balances.amount + excluded.amount \
         RETURNING amount",
    )
    .bind(key_id)
    .bind(currency)
    .bind(amount)
    .fetch_one(&mut *tx)
    .await?;
    let after: i64 = row.try_get("amount")?;
    journal(&mut tx, Change { key_id, currency, delta: amount, after, kind, reference, now }).await?;
    tx.commit().await?;
    Ok(after)
}

/// Takes `amount` if the balance covers it; returns the new balance. The conditional UPDATE is
/// the whole concurrency story: the row lock (PostgreSQL) or the single writer (SQLite) makes
/// check and change one step.
pub async fn debit(
    store: &Store,
    key_id: &str,
    currency: &str,
    amount: i64,
    reference: &str,
    now: i64,
) -> Result<i64, BillingError> {
    check(currency, amount)?;
    let mut tx = store.begin().await?;
    let row = sqlx::query(
        "UPDATE balances SET amount = amount - $1 WHERE key_id = $2 AND currency = $3 AND amount >= $1 RETURNING amount",
    )
    .bind(amount)
    .bind(key_id)
    .bind(currency)
    .fetch_optional(&mut *tx)
    .await?;
    let Some(row) = row else {
        return Err(BillingError::Insufficient);
    };
    let after: i64 = row.try_get("amount")?;
    journal(&mut tx, Change { key_id, currency, delta: -amount, after, kind: "debit", reference, now }).await?;
    tx.commit().await?;
    Ok(after)
}

/// All balances of a key, zero-balance currencies included.
pub async fn balances(store: &Store, key_id: &str) -> Result<Vec<(String, i64)>, BillingError> {
    let rows = sqlx::query("SELECT currency, amount FROM balances WHERE key_id = $1")
        .bind(key_id)
        .fetch_all(store.pool())
        .await?;
    let mut out: Vec<(String, i64)> = CURRENCIES.iter().map(|c| (c.to_string(), 0)).collect();
    for r in rows {
        let currency: String = r.try_get("currency")?;
        let amount: i64 = r.try_get("amount")?;
        if let Some(entry) = out.iter_mut().find(|(c, _)| *c == currency) {
            entry.1 = amount;
        }
    }
    Ok(out)
}
