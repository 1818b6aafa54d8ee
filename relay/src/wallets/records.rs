//! Wallets, their audit log and their events as stored. An operation's audit entry and its
//! webhook event are written in one database transaction with the operation itself.

use serde::Serialize;
use serde_json::Value;
use shared::address::Address;
use sqlx::Row;
use sqlx::any::AnyRow;

use crate::http::error::RelayError;
use crate::store::{Store, StoreError, is_busy_snapshot};

/// One wallet row.
#[derive(Debug, Clone)]
pub struct Wallet {
    pub id: String,
    pub key_id: String,
    pub address: Address,
    pub object_id: String,
    pub owner_pubkey: Option<String>,
    pub network: String,
    pub webhook_url: String,
    pub webhook_secret: String,
    pub created_at: i64,
}

/// One operation of a wallet, and the event that tells its webhook.
pub struct Operation {
    /// Audit kind (`created`, `fund_intent`).
    pub kind: &'static str,
    /// Webhook event type (`wallet.created`, `wallet.fund_intent`).
    pub event_type: &'static str,
    /// The event's `data` and the audit entry's `details`.
    pub data: Value,
}

/// One audit entry, as `GET …/audit` shows it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WalletAuditEntry {
    /// Also the `webhook-id` of the event it emitted.
    pub id: String,
    pub kind: String,
    /// RFC 3339, UTC, milliseconds.
    pub at: String,
    #[schema(value_type = Object)]
    pub details: Value,
}

fn wallet_from(r: &AnyRow) -> Result<Wallet, sqlx::Error> {
    Ok(Wallet {
        id: r.try_get("id")?,
        key_id: r.try_get("key_id")?,
        address: Address::parse(&r.try_get::<String, _>("address")?)
            .ok_or_else(|| sqlx::Error::Decode("wallets.address is not base58".into()))?,
        object_id: r.try_get("object_id")?,
        owner_pubkey: r.try_get("owner_pubkey")?,
        network: r.try_get("network")?,
        webhook_url: r.try_get("webhook_url")?,
        webhook_secret: r.try_get("webhook_secret")?,
        created_at: r.try_get("created_at")?,
    })
}

pub async fn get(store: &Store, id: &str) -> Result<Option<Wallet>, RelayError> {
    let row = sqlx::query(
        "SELECT id, key_id, address, object_id, owner_pubkey, network, webhook_url, webhook_secret, created_at \
         FROM wallets WHERE id = $1",
    )
    .bind(id)
    .fetch_optional(store.pool())
    .await?;
    Ok(row.as_ref().map(wallet_from).transpose()?)
}

/// The wallet and its `created` operation, at once.
pub async fn insert(store: &Store, w: &Wallet, created: Operation, now_ms: i64) -> Result<String, RelayError> {
    retried(|| async {
        let mut tx = store.begin().await?;
        sqlx::query(
            "INSERT INTO wallets (id, key_id, address, object_id, owner_pubkey, network, webhook_url, webhook_secret, \
             created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
        )
        .bind(&w.id)
        .bind(&w.key_id)
        .bind(w.address.to_string())
        .bind(&w.object_id)
        .bind(&w.owner_pubkey)
        .bind(&w.network)
        .bind(&w.webhook_url)
        .bind(&w.webhook_secret)
        .bind(w.created_at)
        .execute(&mut *tx)
        .await?;
        let id = write_operation(&mut tx, &w.id, &created, now_ms).await?;
        tx.commit().await?;
        Ok(id)
    })
    .await
}

/// Records an operation of an existing wallet: its audit entry and its event.
pub async fn record(store: &Store, wallet_id: &str, op: Operation, now_ms: i64) -> Result<String, RelayError> {
    retried(|| async {
        let mut tx = store.begin().await?;
        let id = write_operation(&mut tx, wallet_id, &op, now_ms).await?;
        tx.commit().await?;
        Ok(id)
    })
    .await
}

/// Runs a writing transaction again when SQLite refuses to upgrade it to a writer because
/// another connection wrote after it read (the webhook worker writes concurrently).
pub(crate) async fn retried<T, F, Fut>(mut attempt: F) -> Result<T, RelayError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, StoreError>>,
{
    for n in 1..=crate::store::BUSY_ATTEMPTS {
        match attempt().await {
            Err(e) if is_busy_snapshot(&e) => crate::store::busy_pause(n).await,
            other => return Ok(other?),
        }
    }
    Err(StoreError::Corrupt("could not record a wallet operation: the database stayed busy").into())
}

pub(super) async fn write_operation(
    tx: &mut sqlx::Transaction<'static, sqlx::Any>,
    wallet_id: &str,
    op: &Operation,
    now_ms: i64,
) -> Result<String, StoreError> {
    let id = format!("msg_{}", crate::ids::random_hex(16));
    let details = op.data.to_string();
    // Strictly after the wallet's last entry, so "newest first" is one order even within a
    // millisecond.
    let last: Option<i64> = sqlx::query("SELECT MAX(at_ms) AS last FROM wallet_audit WHERE wallet_id = $1")
        .bind(wallet_id)
        .fetch_one(&mut **tx)
        .await?
        .try_get("last")?;
    let now_ms = last.map_or(now_ms, |l| now_ms.max(l + 1));
    sqlx::query("INSERT INTO wallet_audit (id, wallet_id, kind, details, at_ms) VALUES ($1, $2, $3, $4, $5)")
        .bind(&id)
        .bind(wallet_id)
        .bind(op.kind)
        .bind(&details)
        .bind(now_ms)
        .execute(&mut **tx)
        .await?;
    queue_event(tx, &id, wallet_id, op.event_type, &op.data, now_ms).await?;
    Ok(id)
}

/// Queues an event with no audit entry (a session's state change) in the caller's transaction.
pub(crate) async fn write_event(
    tx: &mut sqlx::Transaction<'static, sqlx::Any>,
    wallet_id: &str,
    event_type: &str,
    data: &Value,
    now_ms: i64,
) -> Result<(), StoreError> {
    let id = format!("msg_{}", crate::ids::random_hex(16));
    queue_event(tx, &id, wallet_id, event_type, data, now_ms).await
}

async fn queue_event(
    tx: &mut sqlx::Transaction<'static, sqlx::Any>,
    id: &str,
    wallet_id: &str,
    event_type: &str,
    data: &Value,
    now_ms: i64,
) -> Result<(), StoreError> {
    // The Standard Webhooks payload shape: {type, timestamp, data}.
    let payload = serde_json::json!({"type": event_type, "timestamp": super::iso_ms(now_ms), "data": data});
    sqlx::query(
        "INSERT INTO webhook_outbox (id, wallet_id, event_type, payload, state, attempts, next_attempt_at, created_at) \
         VALUES ($1, $2, $3, $4, 'pending', 0, $5, $5)",
    )
    .bind(id)
    .bind(wallet_id)
    .bind(event_type)
    .bind(payload.to_string())
    .bind(now_ms)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// How many swaps, shields and withdrawals (the operations the pool pays SOL for) the
/// account's wallets started since `since_ms`, and when the oldest of them was.
pub async fn pool_paid_since(store: &Store, key_id: &str, since_ms: i64) -> Result<(i64, Option<i64>), RelayError> {
    let row = sqlx::query(
        "SELECT COUNT(*), MIN(a.at_ms) FROM wallet_audit a JOIN wallets w ON w.id = a.wallet_id \
         WHERE w.key_id = $1 AND a.at_ms > $2 AND a.kind IN ('swap', 'shield', 'withdraw')",
    )
    .bind(key_id)
    .bind(since_ms)
    .fetch_one(store.pool())
    .await?;
    Ok((row.try_get(0)?, row.try_get(1)?))
}

/// A page of the wallet's audit log, newest first.
pub async fn audit(
    store: &Store,
    wallet_id: &str,
    limit: i64,
    offset: i64,
) -> Result<Vec<WalletAuditEntry>, RelayError> {
    let rows = sqlx::query(
        "SELECT id, kind, details, at_ms FROM wallet_audit WHERE wallet_id = $1 \
         ORDER BY at_ms DESC, id DESC LIMIT $2 OFFSET $3",
    )
    .bind(wallet_id)
    .bind(limit)
    .bind(offset)
    .fetch_all(store.pool())
    .await?;
    rows.iter()
        .map(|r| {
            let details: String = r.try_get("details")?;
            Ok(WalletAuditEntry {
                id: r.try_get("id")?,
                kind: r.try_get("kind")?,
                at: super::iso_ms(r.try_get("at_ms")?),
                details: serde_json::from_str(&details).unwrap_or(Value::Null),
            })
        })
        .collect::<Result<_, sqlx::Error>>()
        .map_err(RelayError::from)
}
