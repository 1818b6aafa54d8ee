//! Storage through sqlx's `Any` driver: the embedded SQLite file by default, PostgreSQL when
//! `DATABASE_URL` says so. One portable schema, applied by a small embedded migration list.

use std::sync::Arc;
use std::time::Duration;

use sqlx::any::{AnyPoolOptions, install_default_drivers};
use sqlx::{AnyConnection, AnyPool, Connection, Row};

/// (version, SQL). Append only; never edit a released migration.
const MIGRATIONS: &[(i64, &str)] = &[
    (1, include_str!("../migrations/0001_receipts.sql")),
    (2, include_str!("../migrations/0002_balances.sql")),
    (3, include_str!("../migrations/0003_keys.sql")),
    (4, include_str!("../migrations/0004_agent.sql")),
    (5, include_str!("../migrations/0005_x402.sql")),
    (6, include_str!("../migrations/0006_usage.sql")),
    (7, include_str!("../migrations/0007_sealed_objects.sql")),
    (8, include_str!("../migrations/0008_swap_sessions.sql")),
    (11, include_str!("../migrations/0011_chain_deposits.sql")),
    (12, include_str!("../migrations/0012_transparency_log.sql")),
    (13, include_str!("../migrations/0013_ledger_outbox.sql")),
    (14, include_str!("../migrations/0014_wallets.sql")),
    (15, include_str!("../migrations/0015_privacy_pool.sql")),
    (16, include_str!("../migrations/0016_shield.sql")),
    (17, include_str!("../migrations/0017_funds_witness.sql")),
    (18, include_str!("../migrations/0018_deposit_walks.sql")),
];

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database error: {0}")]
    Db(#[from] sqlx::Error),
    #[error("stored row is corrupt: {0}")]
    Corrupt(&'static str),
}

impl StoreError {
    /// The database could not be reached or is going away (a restart, a network fault, a full
    /// pool), as opposed to a refused statement: the request may succeed if retried.
    pub fn is_unavailable(&self) -> bool {
        match self {
            StoreError::Db(sqlx::Error::Io(_) | sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed) => true,
            StoreError::Db(sqlx::Error::Tls(_) | sqlx::Error::Protocol(_) | sqlx::Error::WorkerCrashed) => true,
            // PostgreSQL: class 08 (connection exception) and 57P01-57P03 (shutting down,
            // crashed, cannot connect now).
            StoreError::Db(sqlx::Error::Database(d)) => {
                d.code().is_some_and(|c| c.starts_with("08") || matches!(&*c, "57P01" | "57P02" | "57P03"))
            }
            _ => false,
        }
    }
}

#[derive(Clone)]
pub struct Store {
    pool: AnyPool,
    pub is_sqlite: bool,
    /// SQLite only: the group writers' own connection ([`Store::write_turn`]).
    sqlite_writer: Option<Arc<tokio::sync::Mutex<AnyConnection>>>,
}

impl axum::extract::FromRef<crate::state::App> for Store {
    fn from_ref(app: &crate::state::App) -> Self {
        app.store.clone()
    }
}

/// A group writer's turn: on SQLite the writers' own connection, held until the turn ends;
/// on PostgreSQL any pooled connection.
pub struct WriteTurn {
    connection: Option<tokio::sync::OwnedMutexGuard<AnyConnection>>,
    pool: AnyPool,
}

impl WriteTurn {
    pub async fn begin(&mut self) -> Result<sqlx::Transaction<'_, sqlx::Any>, StoreError> {
        Ok(match &mut self.connection {
            Some(connection) => connection.begin().await?,
            None => self.pool.begin().await?,
        })
    }
}

/// A stored receipt and the id of the commit that recorded it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredReceipt {
    pub receipt_json: String,
    pub tx_signature: String,
}

/// A ledger commit to store: its place in the chain, its id and its transaction.
#[derive(Debug, Clone, Copy)]
pub struct NewCommit<'a> {
    pub seq: i64,
    pub signature: &'a str,
    pub tx_bytes: &'a [u8],
    pub now: i64,
}

/// A chat receipt to store beside the commit `signature` that commits it.
#[derive(Debug, Clone, Copy)]
pub struct NewReceipt<'a> {
    pub signature: &'a str,
    pub address: &'a str,
    pub prompt_hash: &'a str,
    pub receipt_json: &'a str,
    pub now: i64,
}

/// A ledger commit as stored.
#[derive(Debug, Clone)]
pub struct StoredCommit {
    pub seq: i64,
    pub tx: Vec<u8>,
}

impl Store {
    pub async fn open(url: &str) -> Result<Self, StoreError> {
        install_default_drivers();
        let is_sqlite = url.starts_with("sqlite:");
        let pool = AnyPoolOptions::new()
            // SQLite has one writer; more connections only add lock contention.
            .max_connections(if is_sqlite { 4 } else { 16 })
            .acquire_timeout(Duration::from_secs(10))
            .after_connect(move |conn, _| {
                Box::pin(async move {
                    if is_sqlite {
                        sqlx::query("PRAGMA journal_mode = WAL").execute(&mut *conn).await?;
                        sqlx::query("PRAGMA busy_timeout = 5000").execute(&mut *conn).await?;
                        sqlx::query("PRAGMA foreign_keys = ON").execute(&mut *conn).await?;
                    }
                    Ok(())
                })
            })
            .connect(url)
            .await?;
        let mut store = Store { pool, is_sqlite, sqlite_writer: None };
        store.migrate().await?;
        if is_sqlite {
            let connection = store.pool.acquire().await?.detach();
            store.sqlite_writer = Some(Arc::new(tokio::sync::Mutex::new(connection)));
        }
        Ok(store)
    }

    async fn migrate(&self) -> Result<(), StoreError> {
        sqlx::query("CREATE TABLE IF NOT EXISTS schema_version (version BIGINT PRIMARY KEY)")
            .execute(&self.pool)
            .await?;
        for (version, sql) in MIGRATIONS {
            let mut tx = self.pool.begin().await?;
            let done = sqlx::query("SELECT version FROM schema_version WHERE version = $1")
                .bind(*version)
                .fetch_optional(&mut *tx)
                .await?;
            if done.is_none() {
                for statement in statements(sql) {
                    sqlx::query(&statement).execute(&mut *tx).await?;
                }
                sqlx::query("INSERT INTO schema_version (version) VALUES ($1)")
                    .bind(*version)
                    .execute(&mut *tx)
                    .await?;
            }
            // Two relays migrating at once: the loser's insert fails and its transaction rolls back.
            if let Err(e) = tx.commit().await {
                tracing::warn!(error = %e, version, "migration raced another relay");
            }
        }
        Ok(())
    }

    /// The newest commit, if any.
    pub async fn last_commit(
        &self,
        tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    ) -> Result<Option<StoredCommit>, StoreError> {
        let row = sqlx::query("SELECT seq, tx_base64 FROM ledger_commits ORDER BY seq DESC LIMIT 1")
            .fetch_optional(&mut **tx)
            .await?;
        row.map(|r| {
            let seq: i64 = r.try_get("seq")?;
            let b64: String = r.try_get("tx_base64")?;
            Ok(StoredCommit { seq, tx: shared::b64::decode(&b64).map_err(|_| StoreError::Corrupt("tx_base64"))? })
        })
        .transpose()
    }

    pub fn pool(&self) -> &AnyPool {
        &self.pool
    }

    /// The turn of a writer that holds its transaction while others queue (the commit log's
    /// writers and the paid calls' group writer). On SQLite they take turns on one connection
    /// of their own: SQLite has one writer, and waiting here is a hand-off where SQLite's busy handler
    /// would sleep in steps of milliseconds, and that connection's page cache stays warm (a
    /// connection's cache is dropped whenever another one wrote). On PostgreSQL, whose row
    /// locks let writers of different rows run at once, a turn is any pooled connection.
    pub async fn write_turn(&self) -> WriteTurn {
        let connection = match &self.sqlite_writer {
            Some(writer) => Some(writer.clone().lock_owned().await),
            None => None,
        };
        WriteTurn { connection, pool: self.pool.clone() }
    }

    pub async fn begin(&self) -> Result<sqlx::Transaction<'static, sqlx::Any>, StoreError> {
        Ok(self.pool.begin().await?)
    }

    /// Appends a commit inside `tx`.
    pub async fn insert_commit(
        &self,
        tx: &mut sqlx::Transaction<'_, sqlx::Any>,
        seq: i64,
        signature: &str,
        tx_bytes: &[u8],
        now: i64,
    ) -> Result<(), StoreError> {
        self.insert_commits(tx, &[NewCommit { seq, signature, tx_bytes, now }]).await
    }

    /// Appends `commits` inside `tx`, in one statement.
    pub async fn insert_commits(
        &self,
        tx: &mut sqlx::Transaction<'_, sqlx::Any>,
        commits: &[NewCommit<'_>],
    ) -> Result<(), StoreError> {
        if commits.is_empty() {
            return Ok(());
        }
        let sql = format!(
            "INSERT INTO ledger_commits (seq, signature, tx_base64, created_at) VALUES {}",
            placeholders(commits.len(), 4)
        );
        let mut query = sqlx::query(&sql);
        for c in commits {
            query = query.bind(c.seq).bind(c.signature).bind(shared::b64::encode(c.tx_bytes)).bind(c.now);
        }
        query.execute(&mut **tx).await?;
        Ok(())
    }

    /// Stores a chat receipt inside `tx`, beside the commit `signature` that commits it.
    pub async fn insert_receipt(
        &self,
        tx: &mut sqlx::Transaction<'_, sqlx::Any>,
        signature: &str,
        address: &str,
        prompt_hash: &str,
        receipt_json: &str,
        now: i64,
    ) -> Result<(), StoreError> {
        self.insert_receipts(tx, &[NewReceipt { signature, address, prompt_hash, receipt_json, now }]).await
    }

    /// Stores chat receipts inside `tx`, in one statement.
    pub async fn insert_receipts(
        &self,
        tx: &mut sqlx::Transaction<'_, sqlx::Any>,
        receipts: &[NewReceipt<'_>],
    ) -> Result<(), StoreError> {
        if receipts.is_empty() {
            return Ok(());
        }
        let sql = format!(
            "INSERT INTO receipts (address, prompt_hash, tx_signature, receipt_json, created_at) VALUES {}",
            placeholders(receipts.len(), 5)
        );
        let mut query = sqlx::query(&sql);
        for r in receipts {
            query = query.bind(r.address).bind(r.prompt_hash).bind(r.signature).bind(r.receipt_json).bind(r.now);
        }
        query.execute(&mut **tx).await?;
        Ok(())
    }

    async fn receipt_where(&self, column: &str, value: &str) -> Result<Option<StoredReceipt>, StoreError> {
        let sql = format!("SELECT receipt_json, tx_signature FROM receipts WHERE {column} = $1");
        let row = sqlx::query(&sql).bind(value).fetch_optional(&self.pool).await?;
        row.map(|r| {
            Ok(StoredReceipt { receipt_json: r.try_get("receipt_json")?, tx_signature: r.try_get("tx_signature")? })
        })
        .transpose()
    }

    pub async fn receipt_by_address(&self, address: &str) -> Result<Option<StoredReceipt>, StoreError> {
        self.receipt_where("address", address).await
    }

    pub async fn receipt_by_hash(&self, hash_hex: &str) -> Result<Option<StoredReceipt>, StoreError> {
        self.receipt_where("prompt_hash", hash_hex).await
    }

    pub async fn commit_by_signature(&self, signature: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let row = sqlx::query("SELECT tx_base64 FROM ledger_commits WHERE signature = $1")
            .bind(signature)
            .fetch_optional(&self.pool)
            .await?;
        row.map(|r| {
            let b64: String = r.try_get("tx_base64")?;
            shared::b64::decode(&b64).map_err(|_| StoreError::Corrupt("tx_base64"))
        })
        .transpose()
    }
}

/// The statements of a migration: `--` comment lines dropped first (they may contain `;`),
/// then split on `;`. Migrations are ours and hold no string literals with `;`.
fn statements(sql: &str) -> Vec<String> {
    let code: String = sql.lines().filter(|l| !l.trim_start().starts_with("--")).map(|l| format!("{l}\n")).collect();
    code.split(';').map(str::trim).filter(|s| !s.is_empty()).map(String::from).collect()
}

/// True when SQLite refused to turn a reading transaction into a writing one because another
/// connection wrote, or holds the write lock (SQLITE_BUSY_SNAPSHOT 517, or SQLITE_BUSY 5, which
/// SQLite returns at once instead of waiting when waiting could deadlock): start over.
/// The pause before attempt `attempt` (from 1) of a write that SQLite refused as busy: 5 ms
/// growing to 160 ms, with jitter so competing writers do not retry in step.
pub async fn busy_pause(attempt: u32) {
    use rand_core::RngCore;
    let base = 5u64 << attempt.min(5);
    let jitter = u64::from(rand_core::OsRng.next_u32() % 5);
    tokio::time::sleep(std::time::Duration::from_millis(base + jitter)).await;
}

/// `($1, $2, …), (…)`: the placeholders of a multi-row statement, `rows` tuples of `columns`.
pub fn placeholders(rows: usize, columns: usize) -> String {
    let row = |r: usize| {
        let params: Vec<String> = (1..=columns).map(|c| format!("${}", r * columns + c)).collect();
        format!("({})", params.join(", "))
    };
    (0..rows).map(row).collect::<Vec<_>>().join(", ")
}

/// How many times a write refused as busy is tried (with [`busy_pause`]: about 10 s in all).
pub const BUSY_ATTEMPTS: u32 = 64;

pub fn is_busy_snapshot(e: &StoreError) -> bool {
    matches!(e, StoreError::Db(sqlx::Error::Database(d)) if matches!(d.code().as_deref(), Some("517" | "5")))
}

/// True when `e` is a unique-constraint violation (another writer took the same key).
pub fn is_unique_violation(e: &StoreError) -> bool {
    matches!(e, StoreError::Db(sqlx::Error::Database(d)) if d.is_unique_violation())
}

#[cfg(test)]
mod tests {
    #[test]
    fn placeholders_number_rows_in_order() {
        assert_eq!(super::placeholders(2, 3), "($1, $2, $3), ($4, $5, $6)");
        assert_eq!(super::placeholders(1, 1), "($1)");
        assert_eq!(super::placeholders(0, 2), "");
    }

    #[test]
    fn migration_statements() {
        let sql = "-- a; comment\nCREATE TABLE a (x TEXT);\n\n-- another; one\nCREATE INDEX i ON a (x);\n";
        assert_eq!(super::statements(sql), vec!["CREATE TABLE a (x TEXT)", "CREATE INDEX i ON a (x)"]);
    }
}
