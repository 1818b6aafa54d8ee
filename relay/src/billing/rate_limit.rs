//! Rate limits per API key and per network address: fixed one-minute windows counted in the
//! database, so every relay sharing it enforces one limit. Over the limit: 429 with
//! `Retry-After` (seconds to the next window).

use std::net::SocketAddr;

use axum::extract::{ConnectInfo, Request, State};
use axum::http::header;
use axum::middleware::Next;
use axum::response::Response;
use serde::Deserialize;
use sqlx::Row;

use crate::error::{RelayError, Surface};
use crate::state::App;
use crate::store::{Store, StoreError};

pub const WINDOW_SECS: i64 = 60;

/// The `rateLimits` section of the relay configuration; 0 turns a limit off.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct RateLimitConfig {
    pub per_key_per_minute: u32,
    pub per_address_per_minute: u32,
}

impl Default for RateLimitConfig {
    fn default() -> Self {
        RateLimitConfig { per_key_per_minute: 600, per_address_per_minute: 300 }
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

/// The middleware: the address always, the key (by its hash, never the key) when one is sent.
pub async fn limit(
    State(app): State<App>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    request: Request,
    next: Next,
) -> Response {
    let path = request.uri().path();
    if path == "/health" || path == "/ready" {
        return next.run(request).await;
    }
    let address = app.peers.caller(peer, request.headers());
    let mut subjects = vec![(format!("addr:{address}"), app.rate_limits.per_address_per_minute)];
    if let Some(key) = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
    {
        let digest = hex::encode(shared::sha256(key.trim().as_bytes()));
        subjects.push((format!("key:{}", &digest[..32]), app.rate_limits.per_key_per_minute));
    }
    let with_success = matches!(path, "/agent" | "/tee/process");
    let now = crate::unix_now();
    for (subject, max) in subjects {
        match hit(&app.store, &subject, max, now).await {
            Ok(Ok(())) => {}
            Ok(Err(retry_after)) => {
                return RelayError::RateLimited(retry_after)
                    .respond(Surface { success: with_success, ..Surface::default() });
            }
            // A counter we cannot write must not take the service down: serve, and say so.
            Err(e) => tracing::error!(error = %e, "rate limit counter failed"),
        }
    }
    next.run(request).await
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
}
