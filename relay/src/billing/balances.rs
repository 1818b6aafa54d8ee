//! Prepaid balances: exact integer base units, every change journaled in the same transaction
//! that makes it. A debit either finds enough balance and records itself, or changes nothing.

use crate::ids::random_hex;
use sqlx::Row;

use crate::store::{Store, StoreError};

use crate::currency::CURRENCIES;

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

pub(super) fn check(currency: &str, amount: i64) -> Result<(), BillingError> {
    if !CURRENCIES.contains(&currency) {
        return Err(BillingError::UnknownCurrency(currency.chars().take(16).collect()));
    }
    if amount <= 0 {
        return Err(BillingError::NotPositive);
    }
    Ok(())
}

/// One journal row: what changed, by how much, and why.
pub(super) struct Change<'a> {
    pub key_id: &'a str,
    pub currency: &'a str,
    pub delta: i64,
    pub after: i64,
    pub kind: &'a str,
    pub reference: &'a str,
    pub now: i64,
}

/// Journals one change inside `tx`.
async fn journal(tx: &mut sqlx::Transaction<'_, sqlx::Any>, c: Change<'_>) -> Result<(), BillingError> {
    journal_rows(tx, &[c]).await
}

/// Journals `changes` inside `tx`, in one statement.
pub(super) async fn journal_rows(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    changes: &[Change<'_>],
) -> Result<(), BillingError> {
    if changes.is_empty() {
        return Ok(());
    }
    let sql = format!(
        "INSERT INTO balance_journal (id, key_id, currency, delta, balance_after, kind, reference, created_at) VALUES {}",
        crate::store::placeholders(changes.len(), 8)
    );
    let mut query = sqlx::query(&sql);
    for c in changes {
        query = query
            .bind(random_hex(16))
            .bind(c.key_id)
            .bind(c.currency)
            .bind(c.delta)
            .bind(c.after)
            .bind(c.kind)
            .bind(c.reference)
            .bind(c.now);
    }
    query.execute(&mut **tx).await?;
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
    let after = add_journaled(&mut tx, (key_id, currency), amount, (kind, reference), now).await?;
    tx.commit().await?;
    Ok(after)
}

/// Takes `amount` if the balance covers it; returns the new balance.
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
    let after = take_in_tx(&mut tx, key_id, currency, amount).await?;
    journal(&mut tx, Change { key_id, currency, delta: -amount, after, kind: "debit", reference, now }).await?;
    tx.commit().await?;
    Ok(after)
}

/// What a paid call is, for its usage row.
#[derive(Debug, Clone, Copy)]
pub struct NewUsage<'a> {
    pub route: &'a str,
    pub model: &'a str,
}

/// The call failed: gives the whole charge back and marks the usage row refunded. One
/// transaction; a second refund of the same row changes nothing. True when this call
/// refunded the row (false: it was not pending any more).
pub async fn refund_usage(store: &Store, usage_id: &str, now: i64) -> Result<bool, BillingError> {
    let mut tx = store.begin().await?;
    let row = sqlx::query(
        "UPDATE usage_records SET status = 'refunded' WHERE id = $1 AND status = 'pending' \
         RETURNING key_id, currency, charged AS amount",
    )
    .bind(usage_id)
    .fetch_optional(&mut *tx)
    .await?;
    let Some(row) = row else { return Ok(false) };
    let (key_id, currency, charged) = owed(&row)?;
    if charged > 0 {
        add_journaled(&mut tx, (&key_id, &currency), charged, ("refund", usage_id), now).await?;
    }
    tx.commit().await?;
    Ok(true)
}

/// What a claimed row (`RETURNING key_id, currency, amount`) gives back to a balance.
fn owed(row: &sqlx::any::AnyRow) -> Result<(String, String, i64), BillingError> {
    Ok((row.try_get("key_id")?, row.try_get("currency")?, row.try_get("amount")?))
}

/// Refunds the usage rows still `pending` that were created before `created_before`: calls no
/// relay can still be running (one killed mid-call left them; the answer was never delivered,
/// since a call's answer goes out only after its row is completed). Each refund is
/// [`refund_usage`], so two relays sweeping at once refund a row once. Returns how many this
/// sweep refunded (a row another sweep refunded first is not counted).
pub async fn refund_abandoned_usage(store: &Store, created_before: i64, now: i64) -> Result<usize, BillingError> {
    let rows = sqlx::query("SELECT id FROM usage_records WHERE status = 'pending' AND created_at < $1 LIMIT 1000")
        .bind(created_before)
        .fetch_all(store.pool())
        .await?;
    let mut refunded = 0;
    for row in &rows {
        let id: String = row.try_get("id")?;
        if refund_usage(store, &id, now).await? {
            refunded += 1;
        }
    }
    Ok(refunded)
}

/// Takes `amount` inside `tx` if the balance covers it. The conditional UPDATE is the whole
/// concurrency story: the row lock (PostgreSQL) or the single writer (SQLite) makes check and
/// change one step.
pub(super) async fn take_in_tx(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    key_id: &str,
    currency: &str,
    amount: i64,
) -> Result<i64, BillingError> {
    let row = sqlx::query(
        "UPDATE balances SET amount = amount - $1 WHERE key_id = $2 AND currency = $3 AND amount >= $1 RETURNING amount",
    )
    .bind(amount)
    .bind(key_id)
    .bind(currency)
    .fetch_optional(&mut **tx)
    .await?
    .ok_or(BillingError::Insufficient)?;
    Ok(row.try_get("amount")?)
}

/// Adds `amount` inside `tx` and journals it (as `kind`, for `reference`) with the balance it
/// leaves; returns that balance.
async fn add_journaled(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    (key_id, currency): (&str, &str),
    amount: i64,
    (kind, reference): (&str, &str),
    now: i64,
) -> Result<i64, BillingError> {
    let after = add_in_tx(tx, key_id, currency, amount).await?;
    journal(tx, Change { key_id, currency, delta: amount, after, kind, reference, now }).await?;
    Ok(after)
}

/// Adds `amount` inside `tx`: one statement for insert-or-add, so two concurrent first
/// credits cannot both insert.
pub(super) async fn add_in_tx(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    key_id: &str,
    currency: &str,
    amount: i64,
) -> Result<i64, BillingError> {
    let row = sqlx::query(
        "INSERT INTO balances (key_id, currency, amount) VALUES ($1, $2, $3) \
         ON CONFLICT (key_id, currency) DO UPDATE SET amount = balances.amount + excluded.amount \
         RETURNING amount",
    )
    .bind(key_id)
    .bind(currency)
    .bind(amount)
    .fetch_one(&mut **tx)
    .await?;
    Ok(row.try_get("amount")?)
}

/// A chain deposit that was credited.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Credited {
    pub key_id: String,
    pub currency: String,
    pub amount: i64,
    pub balance_after: i64,
}

/// Credits a recorded chain deposit (`chain_deposits`, state `finalized`) exactly once: the
/// row becomes `credited` and the balance grows in one transaction, so a deposit seen again (a
/// restart, a second relay) changes nothing. `None` when it was not waiting for its credit.
pub async fn credit_deposit(
    store: &Store,
    signature: &str,
    ix: i64,
    now: i64,
) -> Result<Option<Credited>, BillingError> {
    let mut tx = store.begin().await?;
    let row = sqlx::query(
        "UPDATE chain_deposits SET state = 'credited', updated_at = $1 WHERE signature = $2 AND ix = $3 AND \
         state = 'finalized' AND currency IS NOT NULL RETURNING key_id, currency, amount",
    )
    .bind(now)
    .bind(signature)
    .bind(ix)
    .fetch_optional(&mut *tx)
    .await?;
    let Some(row) = row else { return Ok(None) };
    let (key_id, currency, amount) = owed(&row)?;
    check(&currency, amount)?;
    let reference = format!("{signature}:{ix}");
    let after = add_journaled(&mut tx, (&key_id, &currency), amount, ("deposit", &reference), now).await?;
    tx.commit().await?;
    Ok(Some(Credited { key_id, currency, amount, balance_after: after }))
}

/// One usage row as `GET /api/v1/usage` lists it.
#[derive(Debug, Clone, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UsageRow {
    pub id: String,
    pub route: String,
    pub model: String,
    pub status: String,
    pub prompt_tokens: i64,
    pub completion_tokens: i64,
    /// Base units, as a string (contract §4 convention).
    pub charged: String,
    pub currency: String,
    pub created_at: i64,
}

/// A key's usage, newest first; `before` is the cursor (`created_at`, `id`) of the last row
/// of the previous page.
pub async fn usage_page(
    store: &Store,
    key_id: &str,
    limit: i64,
    before: Option<(i64, &str)>,
) -> Result<Vec<UsageRow>, BillingError> {
    let (at, id) = before.unwrap_or((i64::MAX, ""));
    let rows = sqlx::query(
        "SELECT id, route, model, status, prompt_tokens, completion_tokens, charged, currency, created_at \
         FROM usage_records WHERE key_id = $1 AND (created_at < $2 OR (created_at = $2 AND id < $3)) \
         ORDER BY created_at DESC, id DESC LIMIT $4",
    )
    .bind(key_id)
    .bind(at)
    .bind(if before.is_some() { id } else { "\u{10FFFF}" })
    .bind(limit)
    .fetch_all(store.pool())
    .await?;
    rows.into_iter()
        .map(|r| {
            Ok(UsageRow {
                id: r.try_get("id")?,
                route: r.try_get("route")?,
                model: r.try_get("model")?,
                status: r.try_get("status")?,
                prompt_tokens: r.try_get("prompt_tokens")?,
                completion_tokens: r.try_get("completion_tokens")?,
                charged: r.try_get::<i64, _>("charged")?.to_string(),
                currency: r.try_get("currency")?,
                created_at: r.try_get("created_at")?,
            })
        })
        .collect::<Result<_, sqlx::Error>>()
        .map_err(BillingError::from)
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
