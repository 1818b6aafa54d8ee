//! The x402 replay store on SQLite, and on PostgreSQL when `DATABASE_URL` is set: a payment is
//! reserved once, also under concurrent attempts and from two relays (two pools) sharing the
//! database; a released reservation can be taken again; settled and failed payments cannot.

use relay::store::Store;
use relay::x402::replay::{self, FAILED, RESERVED, SETTLED};

use crate::common;

const RESOURCE: &str = "https://relay.example/api/v1/x402/chat/completions";

async fn lifecycle(store: &Store) {
    let key = hex::encode(shared::sha256(b"payment one"));
    assert_eq!(replay::status(store, &key).await.unwrap(), None);
    assert!(replay::reserve(store, &key, RESOURCE, 5000, "solana", 10).await.unwrap());
    assert!(!replay::reserve(store, &key, RESOURCE, 5000, "solana", 11).await.unwrap(), "a second use is refused");
    assert_eq!(replay::status(store, &key).await.unwrap().as_deref(), Some(RESERVED));

    // The work failed: the reservation is freed and the same payment may be used again.
    assert!(replay::release(store, &key).await.unwrap());
    assert_eq!(replay::status(store, &key).await.unwrap(), None);
    assert!(replay::reserve(store, &key, RESOURCE, 5000, "solana", 12).await.unwrap());

    // Settled: stays used; releasing it changes nothing.
    assert!(replay::mark_settled(store, &key, "Payer111", "Sig111", 13).await.unwrap());
    assert_eq!(replay::status(store, &key).await.unwrap().as_deref(), Some(SETTLED));
    assert!(!replay::release(store, &key).await.unwrap());
    assert!(!replay::mark_failed(store, &key, "Payer111", 14).await.unwrap(), "only a reservation changes state");
    assert!(!replay::reserve(store, &key, RESOURCE, 5000, "solana", 15).await.unwrap());
    let row = sqlx::query_as::<_, (String, i64, String, Option<String>, Option<String>)>(
        "SELECT resource, amount, network, payer, tx_signature FROM x402_payments WHERE payment_hash = $1",
    )
    .bind(&key)
    .fetch_one(store.pool())
    .await
    .unwrap();
    assert_eq!(row, (RESOURCE.into(), 5000, "solana".into(), Some("Payer111".into()), Some("Sig111".into())));

    // A refused settlement: the payment stays used too.
    let other = hex::encode(shared::sha256(b"payment two"));
    assert!(replay::reserve(store, &other, RESOURCE, 5000, "solana", 20).await.unwrap());
    assert!(replay::mark_failed(store, &other, "Payer222", 21).await.unwrap());
    assert_eq!(replay::status(store, &other).await.unwrap().as_deref(), Some(FAILED));
    assert!(!replay::release(store, &other).await.unwrap());
    assert!(!replay::reserve(store, &other, RESOURCE, 5000, "solana", 22).await.unwrap());
}

/// 40 attempts at once, spread over two stores (two relays on one database): exactly one wins.
async fn concurrent(first: Store, second: Store) {
    let key = hex::encode(shared::sha256(b"raced payment"));
    let mut tasks = Vec::new();
    for i in 0..40 {
        let store = if i % 2 == 0 { first.clone() } else { second.clone() };
        let key = key.clone();
        tasks.push(tokio::spawn(async move { replay::reserve(&store, &key, RESOURCE, 5000, "solana", 30).await }));
    }
    let mut won = 0;
    for t in tasks {
        if t.await.unwrap().unwrap() {
            won += 1;
        }
    }
    assert_eq!(won, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn replay_store_on_sqlite() {
    let db = common::sqlite().await;
    lifecycle(&db.store).await;
    concurrent(db.store.clone(), Store::open(&db.url).await.unwrap()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn replay_store_on_postgres() {
    let Some(db) = common::postgres("x402 replay").await else { return };
    lifecycle(&db.store).await;
    let second = Store::open(&db.url).await.unwrap();
    concurrent(db.store.clone(), second.clone()).await;
    second.pool().close().await;
    db.finish().await;
}
