//! The replay store: one row per payment in `x402_payments`, keyed by the hex sha256 of the
//! payment transaction's message. The primary key makes a reservation a single step on both
//! backends, so a payment is used once even when it arrives twice at the same moment or at two
//! relays sharing PostgreSQL.
//!
//! States: `reserved` (verified, the work runs) → `settled` (the facilitator settled it) or
//! `failed` (settlement was refused; the row stays so the payment is not used again). The
//! built-in facilitator passes through `sending` (its transaction signature recorded before the
//! send), so a relay stopped mid-send leaves what [`sending`] finds to reconcile. A
//! reservation whose work failed is deleted, so the same payment may be retried. A reservation
//! left by a relay that stopped mid-call stays `reserved` and keeps refusing the payment; its
//! transaction's blockhash expires within about two minutes, so it could not settle anyway.

use sqlx::Row;

use crate::store::{Store, StoreError, is_unique_violation};

pub const RESERVED: &str = "reserved";
pub const SETTLED: &str = "settled";
pub const FAILED: &str = "failed";
pub const SENDING: &str = "sending";

/// `Ok(false)` when the payment is already reserved, settled or failed.
pub async fn reserve(
    store: &Store,
    key: &str,
    resource: &str,
    amount: u64,
    network: &str,
    now: i64,
) -> Result<bool, StoreError> {
    let amount = i64::try_from(amount).map_err(|_| StoreError::Corrupt("amount exceeds i64"))?;
    let inserted = sqlx::query(
        "INSERT INTO x402_payments (payment_hash, resource, amount, network, status, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(key)
    .bind(resource)
    .bind(amount)
    .bind(network)
    .bind(RESERVED)
    .bind(now)
    .bind(now)
    .execute(store.pool())
    .await;
    match inserted {
        Ok(_) => Ok(true),
        Err(e) => {
            let e = StoreError::from(e);
            if is_unique_violation(&e) { Ok(false) } else { Err(e) }
        }
    }
}

/// Frees a reservation whose work failed. Settled and failed payments are never freed.
pub async fn release(store: &Store, key: &str) -> Result<bool, StoreError> {
    let done = sqlx::query("DELETE FROM x402_payments WHERE payment_hash = $1 AND status = $2")
        .bind(key)
        .bind(RESERVED)
        .execute(store.pool())
        .await?;
    Ok(done.rows_affected() == 1)
}

/// Records the settlement of a reserved (or sending) payment.
pub async fn mark_settled(
    store: &Store,
    key: &str,
    payer: &str,
    tx_signature: &str,
    now: i64,
) -> Result<bool, StoreError> {
    transition(store, key, [RESERVED, SENDING], SETTLED, payer, Some(tx_signature), now).await
}

/// Records that settlement was refused: the payment stays used.
pub async fn mark_failed(store: &Store, key: &str, payer: &str, now: i64) -> Result<bool, StoreError> {
    transition(store, key, [RESERVED, SENDING], FAILED, payer, None, now).await
}

/// Records an unknown outcome: a reserved payment becomes `failed` (stays used); one recorded
/// as `sending` stays so, for [`sending`] to settle from the chain.
pub async fn mark_unknown(store: &Store, key: &str, payer: &str, now: i64) -> Result<bool, StoreError> {
    transition(store, key, [RESERVED, RESERVED], FAILED, payer, None, now).await
}

/// Records the signature of the transaction about to be sent for a reserved payment.
pub async fn mark_sending(
    store: &Store,
    key: &str,
    payer: &str,
    tx_signature: &str,
    now: i64,
) -> Result<bool, StoreError> {
    transition(store, key, [RESERVED, RESERVED], SENDING, payer, Some(tx_signature), now).await
}

/// Moves a payment in one of the states `from` (the same one twice for one state) to `to`; a signature already recorded is kept
/// when none is given. False when the payment was in none of them.
async fn transition(
    store: &Store,
    key: &str,
    from: [&str; 2],
    to: &str,
    payer: &str,
    tx_signature: Option<&str>,
    now: i64,
) -> Result<bool, StoreError> {
    let done = sqlx::query(
        "UPDATE x402_payments SET status = $1, payer = $2, tx_signature = COALESCE($3, tx_signature), \
         updated_at = $4 WHERE payment_hash = $5 AND status IN ($6, $7)",
    )
    .bind(to)
    .bind(payer)
    .bind(tx_signature)
    .bind(now)
    .bind(key)
    .bind(from[0])
    .bind(from[1])
    .execute(store.pool())
    .await?;
    Ok(done.rows_affected() == 1)
}

/// A payment recorded as sent whose outcome is not recorded.
#[derive(Debug, Clone)]
pub struct Sending {
    pub key: String,
    pub payer: String,
    pub tx_signature: String,
    pub updated_at: i64,
}

pub async fn sending(store: &Store) -> Result<Vec<Sending>, StoreError> {
    let rows = sqlx::query(
        "SELECT payment_hash, payer, tx_signature, updated_at FROM x402_payments WHERE status = $1 ORDER BY updated_at",
    )
    .bind(SENDING)
    .fetch_all(store.pool())
    .await?;
    Ok(rows
        .iter()
        .map(|r| {
            Ok(Sending {
                key: r.try_get("payment_hash")?,
                payer: r.try_get::<Option<String>, _>("payer")?.unwrap_or_default(),
                tx_signature: r.try_get::<Option<String>, _>("tx_signature")?.unwrap_or_default(),
                updated_at: r.try_get("updated_at")?,
            })
        })
        .collect::<Result<_, sqlx::Error>>()?)
}

/// The stored status of a payment, if any (`reserved`, `settled`, `failed`).
pub async fn status(store: &Store, key: &str) -> Result<Option<String>, StoreError> {
    let row = sqlx::query("SELECT status FROM x402_payments WHERE payment_hash = $1")
        .bind(key)
        .fetch_optional(store.pool())
        .await?;
    Ok(row.map(|r| r.try_get("status")).transpose()?)
}
