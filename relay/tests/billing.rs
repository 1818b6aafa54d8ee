//! Balances on SQLite and PostgreSQL: exact, atomic debits under concurrency, and a journal
//! row for every change.

use std::sync::Arc;

use relay::billing::{BillingError, balances, credit, debit};
use relay::store::Store;
use sqlx::Row;

mod common;

async fn concurrent_debits_never_overspend(store: Store) {
    credit(&store, "key_a", "usdc", 50, "admin", "test funding", 1).await.unwrap();
    let store = Arc::new(store);
    let mut tasks = Vec::new();
    for i in 0..200 {
        let store = store.clone();
        tasks.push(tokio::spawn(async move { debit(&store, "key_a", "usdc", 1, &format!("req-{i}"), 2).await }));
    }
    let mut ok = 0;
    let mut short = 0;
    for t in tasks {
        match t.await.unwrap() {
            Ok(_) => ok += 1,
            Err(BillingError::Insufficient) => short += 1,
            Err(e) => panic!("unexpected error: {e}"),
        }
    }
    assert_eq!((ok, short), (50, 150));
    assert_eq!(balances(&store, "key_a").await.unwrap(), vec![("usdc".to_string(), 0), ("svc".to_string(), 0)]);

    // The journal accounts for every unit: one credit of 50 and exactly 50 debits of 1.
    let rows = sqlx::query("SELECT kind, delta, balance_after FROM balance_journal WHERE key_id = $1")
        .bind("key_a")
        .fetch_all(store.pool())
        .await
        .unwrap();
    let debits: Vec<(i64, i64)> = rows
        .iter()
        .filter(|r| r.get::<String, _>("kind") == "debit")
        .map(|r| (r.get("delta"), r.get("balance_after")))
        .collect();
    assert_eq!(debits.len(), 50);
    assert!(debits.iter().all(|(d, _)| *d == -1));
    let mut afters: Vec<i64> = debits.iter().map(|(_, a)| *a).collect();
    afters.sort();
    assert_eq!(afters, (0..50).collect::<Vec<_>>(), "each debit saw a distinct balance");
    let sum: i64 = rows.iter().map(|r| r.get::<i64, _>("delta")).sum();
    assert_eq!(sum, 0);
}

async fn rules(store: Store) {
    assert!(matches!(debit(&store, "nobody", "usdc", 1, "r", 1).await, Err(BillingError::Insufficient)));
    assert!(matches!(credit(&store, "k", "eur", 5, "admin", "r", 1).await, Err(BillingError::UnknownCurrency(_))));
    assert!(matches!(credit(&store, "k", "usdc", 0, "admin", "r", 1).await, Err(BillingError::NotPositive)));
    assert!(matches!(debit(&store, "k", "usdc", -5, "r", 1).await, Err(BillingError::NotPositive)));
    assert_eq!(credit(&store, "k", "usdc", 7, "admin", "r", 1).await.unwrap(), 7);
    assert_eq!(credit(&store, "k", "usdc", 3, "deposit", "tx1", 1).await.unwrap(), 10);
    // A debit larger than the balance changes nothing.
    assert!(matches!(debit(&store, "k", "usdc", 11, "r", 1).await, Err(BillingError::Insufficient)));
    assert_eq!(debit(&store, "k", "usdc", 10, "r", 1).await.unwrap(), 0);
    // Currencies are separate.
    assert!(matches!(debit(&store, "k", "svc", 1, "r", 1).await, Err(BillingError::Insufficient)));
}

#[tokio::test]
async fn sqlite_concurrent_debits() {
    let db = common::sqlite().await;
    concurrent_debits_never_overspend(db.store.clone()).await;
    db.finish().await;
}

#[tokio::test]
async fn postgres_concurrent_debits() {
    let Some(db) = common::postgres("billing").await else { return };
    concurrent_debits_never_overspend(db.store.clone()).await;
    db.finish().await;
}

#[tokio::test]
async fn sqlite_rules() {
    let db = common::sqlite().await;
    rules(db.store.clone()).await;
    db.finish().await;
}

#[tokio::test]
async fn postgres_rules() {
    let Some(db) = common::postgres("rules").await else { return };
    rules(db.store.clone()).await;
    db.finish().await;
}
