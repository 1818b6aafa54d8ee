//! The sweeps every relay runs (relay/src/housekeeping.rs) delete exactly the rows whose
//! purpose has passed, on SQLite and PostgreSQL.

use crate::common;

use relay::store::Store;
use sqlx::Row;

async fn count(store: &Store, table: &str) -> i64 {
    sqlx::query(&format!("SELECT COUNT(*) AS n FROM {table}"))
        .fetch_one(store.pool())
        .await
        .unwrap()
        .try_get("n")
        .unwrap()
}

async fn expired_rows_go_and_live_ones_stay(store: Store) {
    let now: i64 = 100 * 86_400 + 500;
    let today = now / 86_400;
    for (day, address) in [(today - 2, "a"), (today - 1, "b"), (today, "c")] {
        sqlx::query("INSERT INTO free_trial (address, day, used) VALUES ($1, $2, 1)")
            .bind(address)
            .bind(day)
            .execute(store.pool())
            .await
            .unwrap();
    }
    for (start, subject) in [(now - 7_200, "old"), (now - 60, "current")] {
        sqlx::query("INSERT INTO rate_windows (subject, window_start, used) VALUES ($1, $2, 1)")
            .bind(subject)
            .bind(start)
            .execute(store.pool())
            .await
            .unwrap();
    }
    for (expires, nonce) in [(now - 7_200, "n-old"), (now - 60, "n-recent"), (now + 300, "n-live")] {
        sqlx::query("INSERT INTO sign_in_challenges (nonce, wallet, expires_at) VALUES ($1, 'w', $2)")
            .bind(nonce)
            .bind(expires)
            .execute(store.pool())
            .await
            .unwrap();
    }
    assert_eq!(relay::housekeeping::expire(&store, now).await.unwrap(), 3);
    assert_eq!((count(&store, "free_trial").await, count(&store, "rate_windows").await), (2, 1));
    assert_eq!(count(&store, "sign_in_challenges").await, 2, "recently expired challenges stay an hour");
    assert_eq!(relay::housekeeping::expire(&store, now).await.unwrap(), 0, "a second sweep finds nothing");
}

common::on_both_stores!(
    #[tokio::test]
    sqlite_expiry,
    postgres_expiry,
    |db| expired_rows_go_and_live_ones_stay(db.store.clone()).await
);
