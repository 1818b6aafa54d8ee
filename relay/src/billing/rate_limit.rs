//! Rate limits per API key and per network address: fixed one-minute windows counted in the
//! database, so every relay sharing it enforces one limit, behind an in-memory front: a subject
//! this relay alone has already sent `limit` requests for in the window is refused without a
//! database write (the shared count is then at the limit too). With `store: "memory"` (one
//! relay) the front is the whole count; the default, `auto`, is `memory` on SQLite (which only
//! one relay uses, and where a write per request contends with every other writer) and
//! `database` on PostgreSQL. Over the limit: 429 with `Retry-After` (seconds to the
//! next window). A counter the database cannot write refuses the request (503
//! `database_unavailable`) unless `failOpen` says to serve it.

use std::net::SocketAddr;

use axum::http::{HeaderMap, header};
use axum::response::Response;
use serde::Deserialize;
use sqlx::Row;

use crate::http::error::{RelayError, Surface};
use crate::state::App;
use crate::store::{Store, StoreError};

pub const WINDOW_SECS: i64 = 60;

/// The `rateLimits` section of the relay configuration; 0 turns a limit off.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct RateLimitConfig {
    pub per_key_per_minute: u32,
    pub per_address_per_minute: u32,
    /// `database` (shared by every relay on it), `memory` (this relay only, no writes), or
    /// `auto` (memory on SQLite, database on PostgreSQL).
    pub store: CounterStore,
    /// Serve requests whose counter the database cannot write (default: refuse them).
    pub fail_open: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum CounterStore {
    #[default]
    Auto,
    Database,
    Memory,
}

impl Default for RateLimitConfig {
    fn default() -> Self {
        RateLimitConfig {
            per_key_per_minute: 600,
            per_address_per_minute: 300,
            store: CounterStore::Auto,
            fail_open: false,
        }
    }
}

/// Why a request is not served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Over the limit: seconds to the next window.
    Limited(i64),
    /// The shared counter could not be written and the limiter fails closed.
    CounterDown,
}

/// This relay's counters: the front of the database's, or the only ones.
pub struct RateLimiter {
    pub config: RateLimitConfig,
    local: std::sync::Mutex<Local>,
}

/// One window's counts; cleared when the window turns, so memory holds one minute of subjects.
#[derive(Default)]
struct Local {
    window: i64,
    used: std::collections::HashMap<String, u32>,
}

impl RateLimiter {
    pub fn new(config: RateLimitConfig) -> Self {
        RateLimiter { config, local: std::sync::Mutex::new(Local::default()) }
    }

    /// Counts one request of `subject` against `limit` (0 = off).
    pub async fn check(&self, store: &Store, subject: &str, limit: u32, now: i64) -> Result<(), Refusal> {
        if limit == 0 {
            return Ok(());
        }
        let window = now - now.rem_euclid(WINDOW_SECS);
        let retry = (window + WINDOW_SECS - now).max(1);
        {
            let mut local = self.local.lock().unwrap_or_else(|e| e.into_inner());
            if local.window != window {
                local.window = window;
                local.used.clear();
            }
            let used = local.used.entry(subject.to_string()).or_default();
            if *used >= limit {
                return Err(Refusal::Limited(retry));
            }
            *used += 1;
        }
        let shared = match self.config.store {
            CounterStore::Database => true,
            CounterStore::Memory => false,
            CounterStore::Auto => !store.is_sqlite,
        };
        if !shared {
            return Ok(());
        }
        match hit(store, subject, limit, now).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(seconds)) => Err(Refusal::Limited(seconds)),
            Err(e) if self.config.fail_open => {
                tracing::error!(error = %e, "rate limit counter failed; serving (failOpen)");
                Ok(())
            }
            Err(e) => {
                tracing::error!(error = %e, "rate limit counter failed; refusing");
                Err(Refusal::CounterDown)
            }
        }
    }
}

/// Counts one request of `subject`; `Err(seconds)` when the window is full.
pub async fn hit(store: &Store, subject: &str, limit: u32, now: i64) -> Result<Result<(), i64>, StoreError> {
    if limit == 0 {
        return Ok(Ok(()));
    }
    let window = now - now.rem_euclid(WINDOW_SECS);
    let row = sqlx::query(
        "INSERT INTO rate_windows (subject, window_start, used) VALUES ($1, $2, 1) \
         ON CONFLICT (subject, window_start) DO UPDATE SET used = rate_windows.used + 1 \
         WHERE rate_windows.used < $3 RETURNING used",
    )
    .bind(subject)
    .bind(window)
    .bind(i64::from(limit))
    .fetch_optional(store.pool())
    .await?;
    // The first request of a subject's new window drops that subject's old windows: bounded
    // work, once a minute per subject, instead of a table-wide sweep on the request path.
    if let Some(r) = &row
        && r.try_get::<i64, _>("used")? == 1
    {
        sqlx::query("DELETE FROM rate_windows WHERE subject = $1 AND window_start < $2")
            .bind(subject)
            .bind(window)
            .execute(store.pool())
            .await?;
    }
    Ok(match row {
        Some(_) => Ok(()),
        None => Err((window + WINDOW_SECS - now).max(1)),
    })
}

/// The answer to a request over its limits, if it is: the address always counts, and the key
/// (by its hash, never the key) when one is sent. Run for every request (`router.rs`).
pub async fn refusal(app: &App, peer: SocketAddr, path: &str, headers: &HeaderMap) -> Option<Response> {
    // Probes and scrapes come every few seconds from the operator's own systems.
    if matches!(path, "/health" | "/ready" | "/metrics") {
        return None;
    }
    let limits = app.rate_limiter.config;
    let address = app.peers.caller(peer, headers);
    let mut subjects = vec![(format!("addr:{address}"), limits.per_address_per_minute)];
    if let Some(key) =
        headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()).and_then(|v| v.strip_prefix("Bearer "))
    {
        let digest = hex::encode(shared::sha256(key.trim().as_bytes()));
        subjects.push((format!("key:{}", &digest[..32]), limits.per_key_per_minute));
    }
    let with_success = matches!(path, "/agent" | "/tee/process");
    let now = crate::unix_now();
    let surface = Surface { success: with_success, ..Surface::default() };
    for (subject, max) in subjects {
        match app.rate_limiter.check(&app.store, &subject, max, now).await {
            Ok(()) => {}
            Err(Refusal::Limited(retry_after)) => return Some(RelayError::RateLimited(retry_after).respond(surface)),
            Err(Refusal::CounterDown) => return Some(RelayError::DatabaseUnavailable.respond(surface)),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_full_window_answers_the_seconds_to_the_next() {
        let dir = tempfile::tempdir().unwrap();
        let store =
            Store::open(&format!("sqlite://{}?mode=rwc", dir.path().join("r.sqlite3").display())).await.unwrap();
        let now = 1_699_999_990; // 10 s into a window (1_699_999_980 is a multiple of 60)
        for _ in 0..3 {
            assert_eq!(hit(&store, "addr:1", 3, now).await.unwrap(), Ok(()));
        }
        assert_eq!(hit(&store, "addr:1", 3, now).await.unwrap(), Err(50));
        assert_eq!(hit(&store, "addr:2", 3, now).await.unwrap(), Ok(()), "subjects are separate");
        assert_eq!(hit(&store, "addr:1", 3, now + 50).await.unwrap(), Ok(()), "the next window is fresh");
        assert_eq!(hit(&store, "addr:1", 0, now).await.unwrap(), Ok(()), "0 = off");
        let rows: i64 = sqlx::query("SELECT COUNT(*) AS n FROM rate_windows WHERE subject = 'addr:1'")
            .fetch_one(store.pool())
            .await
            .unwrap()
            .get("n");
        assert_eq!(rows, 1, "the new window dropped the subject's old one");
    }

    async fn store() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}?mode=rwc", dir.path().join("r.sqlite3").display());
        let store = Store::open(&url).await.unwrap();
        (dir, store)
    }

    async fn windows_written(store: &Store) -> i64 {
        sqlx::query("SELECT COALESCE(SUM(used), 0) AS n FROM rate_windows")
            .fetch_one(store.pool())
            .await
            .unwrap()
            .get("n")
    }

    #[tokio::test]
    async fn the_front_refuses_without_a_write_and_memory_mode_writes_nothing() {
        let (_dir, store) = store().await;
        let now = 1_699_999_990;
        let database = RateLimitConfig { store: CounterStore::Database, ..RateLimitConfig::default() };
        let shared = RateLimiter::new(database);
        for _ in 0..3 {
            assert_eq!(shared.check(&store, "addr:1", 3, now).await, Ok(()));
        }
        assert_eq!(shared.check(&store, "addr:1", 3, now).await, Err(Refusal::Limited(50)));
        assert_eq!(windows_written(&store).await, 3, "the refusal touched no row");
        // Another relay on the same database: its own front is empty, the shared count is full.
        let other = RateLimiter::new(database);
        assert_eq!(other.check(&store, "addr:1", 3, now).await, Err(Refusal::Limited(50)));
        assert_eq!(shared.check(&store, "addr:1", 3, now + 50).await, Ok(()), "a new window");

        let written = windows_written(&store).await;
        let memory = RateLimiter::new(RateLimitConfig { store: CounterStore::Memory, ..RateLimitConfig::default() });
        for _ in 0..3 {
            assert_eq!(memory.check(&store, "addr:9", 3, now).await, Ok(()));
        }
        assert_eq!(memory.check(&store, "addr:9", 3, now).await, Err(Refusal::Limited(50)));
        assert_eq!(windows_written(&store).await, written, "memory mode wrote nothing");
        // The default on SQLite (one relay) is memory too.
        let auto = RateLimiter::new(RateLimitConfig::default());
        assert_eq!(auto.check(&store, "addr:8", 3, now).await, Ok(()));
        assert_eq!(windows_written(&store).await, written, "auto on SQLite wrote nothing");
    }

    #[tokio::test]
    async fn a_counter_that_cannot_be_written_refuses_unless_fail_open() {
        let (_dir, store) = store().await;
        store.pool().close().await;
        let database = RateLimitConfig { store: CounterStore::Database, ..RateLimitConfig::default() };
        let closed = RateLimiter::new(database);
        assert_eq!(closed.check(&store, "addr:1", 3, 100).await, Err(Refusal::CounterDown));
        let open = RateLimiter::new(RateLimitConfig { fail_open: true, ..database });
        assert_eq!(open.check(&store, "addr:1", 3, 100).await, Ok(()));
    }
}
