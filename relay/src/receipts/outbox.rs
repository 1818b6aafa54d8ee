//! The ledger writer's durable queue (migration 0013): one row per commit of the embedded
//! log, written in the commit's own database transaction (`enqueue`). Every state change is
//! a conditional update on what the writer read, so two relays on one database never both
//! send an attempt, and a late answer about an old attempt changes nothing.

use sqlx::Row;

use crate::store::StoreError;

/// Where a commit is on its way to the chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// To build with a fresh blockhash and send.
    Queued,
    /// Sent (or about to be) as `chain_signature`; its blockhash is valid up to `last_valid_height`.
    Sending,
    /// Confirmed on the chain.
    Landed,
}

impl State {
    fn as_str(self) -> &'static str {
        match self {
            State::Queued => "queued",
            State::Sending => "sending",
            State::Landed => "landed",
        }
    }

    fn parse(s: &str) -> Result<Self, StoreError> {
        match s {
            "queued" => Ok(State::Queued),
            "sending" => Ok(State::Sending),
            "landed" => Ok(State::Landed),
            _ => Err(StoreError::Corrupt("ledger_outbox.state")),
        }
    }
}

/// A queued commit as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutboxRow {
    pub commit_signature: String,
    pub state: State,
    pub attempts: i64,
    pub chain_signature: Option<String>,
    pub last_valid_height: Option<i64>,
}

/// What the public sees of a commit's way to the chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Progress {
    pub state: State,
    pub chain_signature: Option<String>,
    pub landed_at: Option<i64>,
}

/// Queues commit `signature` inside the transaction that stores it.
pub async fn enqueue(tx: &mut sqlx::Transaction<'_, sqlx::Any>, signature: &str, now: i64) -> Result<(), StoreError> {
    enqueue_all(tx, &[(signature, now)]).await
}

/// [`enqueue`] for many commits (signature, when), in one statement.
pub async fn enqueue_all(tx: &mut sqlx::Transaction<'_, sqlx::Any>, commits: &[(&str, i64)]) -> Result<(), StoreError> {
    if commits.is_empty() {
        return Ok(());
    }
    let sql = format!(
        "INSERT INTO ledger_outbox (commit_signature, next_attempt_at, created_at, state, attempts) \
         SELECT v.column1, v.column2, v.column2, 'queued', 0 FROM (VALUES {}) AS v",
        crate::store::placeholders(commits.len(), 2)
    );
    let mut query = sqlx::query(&sql);
    for (signature, now) in commits {
        query = query.bind(*signature).bind(*now);
    }
    query.execute(&mut **tx).await?;
    Ok(())
}

/// Rows in `state` due at `now`, oldest first.
pub async fn due(pool: &sqlx::AnyPool, state: State, now: i64, limit: i64) -> Result<Vec<OutboxRow>, StoreError> {
    let rows = sqlx::query(
        "SELECT commit_signature, state, attempts, chain_signature, last_valid_height FROM ledger_outbox \
         WHERE state = $1 AND next_attempt_at <= $2 ORDER BY created_at, commit_signature LIMIT $3",
    )
    .bind(state.as_str())
    .bind(now)
    .bind(limit)
    .fetch_all(pool)
    .await?;
    rows.into_iter()
        .map(|r| {
            Ok(OutboxRow {
                commit_signature: r.try_get("commit_signature")?,
                state: State::parse(&r.try_get::<String, _>("state")?)?,
                attempts: r.try_get("attempts")?,
                chain_signature: r.try_get("chain_signature")?,
                last_valid_height: r.try_get("last_valid_height")?,
            })
        })
        .collect()
}

/// Claims a queued row for one attempt and records the transaction about to be sent, before
/// it is sent: false if another writer claimed it first.
pub async fn record_sending(
    pool: &sqlx::AnyPool,
    row: &OutboxRow,
    chain_signature: &str,
    last_valid_height: u64,
    check_at: i64,
) -> Result<bool, StoreError> {
    let done = sqlx::query(
        "UPDATE ledger_outbox SET state = 'sending', chain_signature = $1, last_valid_height = $2, \
         attempts = attempts + 1, next_attempt_at = $3 \
         WHERE commit_signature = $4 AND state = 'queued' AND attempts = $5",
    )
    .bind(chain_signature)
    .bind(last_valid_height as i64)
    .bind(check_at)
    .bind(&row.commit_signature)
    .bind(row.attempts)
    .execute(pool)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// The attempt `chain_signature` landed.
pub async fn landed(pool: &sqlx::AnyPool, chain_signature: &str, now: i64) -> Result<(), StoreError> {
    sqlx::query(
        "UPDATE ledger_outbox SET state = 'landed', landed_at = $1, last_error = NULL \
         WHERE chain_signature = $2 AND state = 'sending'",
    )
    .bind(now)
    .bind(chain_signature)
    .execute(pool)
    .await?;
    Ok(())
}

/// The attempt `chain_signature` cannot land (refused, failed, or its blockhash expired):
/// queue the commit again from `retry_at`.
pub async fn requeue(
    pool: &sqlx::AnyPool,
    chain_signature: &str,
    retry_at: i64,
    error: &str,
) -> Result<(), StoreError> {
    sqlx::query(
        "UPDATE ledger_outbox SET state = 'queued', chain_signature = NULL, last_valid_height = NULL, \
         next_attempt_at = $1, last_error = $2 WHERE chain_signature = $3 AND state = 'sending'",
    )
    .bind(retry_at)
    .bind(error.chars().take(300).collect::<String>())
    .bind(chain_signature)
    .execute(pool)
    .await?;
    Ok(())
}

/// A queued row that could not even be attempted (the chain unreachable before the claim):
/// try again from `retry_at`.
pub async fn postpone(pool: &sqlx::AnyPool, row: &OutboxRow, retry_at: i64, error: &str) -> Result<(), StoreError> {
    sqlx::query(
        "UPDATE ledger_outbox SET next_attempt_at = $1, last_error = $2 \
         WHERE commit_signature = $3 AND state = $4 AND attempts = $5",
    )
    .bind(retry_at)
    .bind(error.chars().take(300).collect::<String>())
    .bind(&row.commit_signature)
    .bind(row.state.as_str())
    .bind(row.attempts)
    .execute(pool)
    .await?;
    Ok(())
}

/// Where commit `signature` is, if it is queued at all (only in `solana` mode).
pub async fn progress(pool: &sqlx::AnyPool, signature: &str) -> Result<Option<Progress>, StoreError> {
    let row = sqlx::query("SELECT state, chain_signature, landed_at FROM ledger_outbox WHERE commit_signature = $1")
        .bind(signature)
        .fetch_optional(pool)
        .await?;
    row.map(|r| {
        Ok(Progress {
            state: State::parse(&r.try_get::<String, _>("state")?)?,
            chain_signature: r.try_get("chain_signature")?,
            landed_at: r.try_get("landed_at")?,
        })
    })
    .transpose()
}

/// When commit `signature` was made (embedded mode: when it landed).
pub async fn commit_time(pool: &sqlx::AnyPool, signature: &str) -> Result<Option<i64>, StoreError> {
    let row = sqlx::query("SELECT created_at FROM ledger_commits WHERE signature = $1")
        .bind(signature)
        .fetch_optional(pool)
        .await?;
    Ok(row.map(|r| r.try_get("created_at")).transpose()?)
}
