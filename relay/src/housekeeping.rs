//! Periodic sweeps that keep the books right and the tables bounded, safe to run in every
//! relay at once: usage rows a killed relay left `pending` are refunded (each once), and rows
//! whose purpose has passed are deleted (free-trial days before yesterday, rate windows older
//! than an hour, sign-in challenges expired an hour ago).

use std::sync::Arc;
use std::time::Duration;

use crate::billing::balances;
use crate::metrics::Metrics;
use crate::store::{Store, StoreError};

/// Runs the sweeps at start and then every `abandon_after` seconds (at most a minute); a usage
/// row is abandoned once it is older than the longest a call can run (`abandon_after`).
pub fn start(store: Store, metrics: Arc<Metrics>, abandon_after: u64) {
    let every = Duration::from_secs(abandon_after.clamp(1, 60));
    let abandon_after = i64::try_from(abandon_after).unwrap_or(i64::MAX);
    tokio::spawn(async move {
        loop {
            let now = crate::unix_now();
            match balances::refund_abandoned_usage(&store, now.saturating_sub(abandon_after), now).await {
                Ok(0) => {}
                Ok(n) => {
                    metrics.billing.usage_abandoned(n as u64);
                    tracing::warn!(refunded = n, "usage rows left pending by a stopped relay refunded");
                }
                Err(e) => tracing::warn!(error = %e, "abandoned usage rows not swept; the next sweep retries"),
            }
            if let Err(e) = expire(&store, now).await {
                tracing::warn!(error = %e, "expired rows not deleted; the next sweep retries");
            }
            tokio::time::sleep(every).await;
        }
    });
}

/// Deletes rows nothing reads any more; returns how many.
pub async fn expire(store: &Store, now: i64) -> Result<u64, StoreError> {
    let yesterday = crate::billing::metering::utc_day(now) - 1;
    let mut deleted = 0;
    for (sql, before) in [
        ("DELETE FROM free_trial WHERE day < $1", yesterday),
        ("DELETE FROM rate_windows WHERE window_start < $1", now - 3_600),
        ("DELETE FROM sign_in_challenges WHERE expires_at < $1", now - 3_600),
    ] {
        deleted += sqlx::query(sql).bind(before).execute(store.pool()).await?.rows_affected();
    }
    Ok(deleted)
}
