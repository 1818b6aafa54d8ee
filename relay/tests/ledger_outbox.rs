//! The ledger writer's queue on SQLite, and on PostgreSQL when `DATABASE_URL` is set: every
//! commit of a solana-mode commit log is queued in its own transaction (and none in embedded
//! mode); of two relays claiming one attempt exactly one wins; the answers about an attempt
//! change the row only while that attempt is the current one.

use std::sync::Arc;

use ed25519_dalek::SigningKey;
use relay::receipts::CommitLog;
use relay::receipts::outbox::{self, State};
use relay::store::Store;
use shared::address::default_program_id;
use sqlx::Row;

use crate::common;

fn commit_log(store: &Store, solana: bool) -> Arc<CommitLog> {
    let log = CommitLog::new(SigningKey::from_bytes(&[4; 32]), default_program_id(), store.clone());
    Arc::new(if solana { log.queue_for_chain() } else { log })
}

async fn count(store: &Store, sql: &str) -> i64 {
    sqlx::query(sql).fetch_one(store.pool()).await.unwrap().try_get::<i64, _>(0).unwrap()
}

async fn queue_and_claims(url: &str) {
    let (a, b) = (Store::open(url).await.unwrap(), Store::open(url).await.unwrap());
    // Embedded mode queues nothing.
    let (r, h) = common::receipt(1000);
    commit_log(&a, false).commit(&r, &h, 5).await.unwrap();
    assert_eq!(count(&a, "SELECT COUNT(*) FROM ledger_outbox").await, 0);

    // Solana mode: twenty commits from two relays, each queued once, beside its commit.
    let mut tasks = Vec::new();
    for n in 0..20u32 {
        let log = commit_log(if n % 2 == 0 { &a } else { &b }, true);
        tasks.push(tokio::spawn(async move {
            let (r, h) = common::receipt(n);
            log.commit(&r, &h, 10).await.unwrap()
        }));
    }
    let mut ids = Vec::new();
    for t in tasks {
        ids.push(t.await.unwrap());
    }
    assert_eq!(count(&a, "SELECT COUNT(*) FROM ledger_outbox WHERE state = 'queued'").await, 20);
    assert_eq!(
        count(&a, "SELECT COUNT(*) FROM ledger_outbox o JOIN receipts r ON r.tx_signature = o.commit_signature").await,
        20
    );

    // Both relays read the same due rows and race to claim each: one claim per row.
    let rows_a = outbox::due(a.pool(), State::Queued, 10, 64).await.unwrap();
    let rows_b = outbox::due(b.pool(), State::Queued, 10, 64).await.unwrap();
    assert_eq!(rows_a, rows_b);
    assert_eq!(rows_a.len(), 20);
    assert!(outbox::due(a.pool(), State::Queued, 9, 64).await.unwrap().is_empty(), "not due before its time");
    let mut wins = 0;
    for (i, (ra, rb)) in rows_a.iter().zip(&rows_b).enumerate() {
        let (sa, sb) = (format!("a{i}"), format!("b{i}"));
        let (wa, wb) = tokio::join!(
            outbox::record_sending(a.pool(), ra, &sa, 100, 11),
            outbox::record_sending(b.pool(), rb, &sb, 100, 11)
        );
        let (wa, wb) = (wa.unwrap(), wb.unwrap());
        assert!(wa ^ wb, "row {i}: exactly one claim wins ({wa}, {wb})");
        wins += 1;
    }
    assert_eq!(wins, 20);
    assert_eq!(count(&a, "SELECT COUNT(*) FROM ledger_outbox WHERE state = 'sending' AND attempts = 1").await, 20);

    // The first row: its attempt expires and is requeued; the stale attempt's news is ignored.
    let first = &ids[0];
    let sig = |store: &Store| {
        let first = first.clone();
        let pool = store.pool().clone();
        async move {
            sqlx::query("SELECT chain_signature FROM ledger_outbox WHERE commit_signature = $1")
                .bind(first)
                .fetch_one(&pool)
                .await
                .unwrap()
                .try_get::<Option<String>, _>(0)
                .unwrap()
        }
    };
    let attempt = sig(&a).await.expect("claimed");
    outbox::requeue(a.pool(), &attempt, 30, "blockhash expired").await.unwrap();
    outbox::landed(b.pool(), &attempt, 31).await.unwrap();
    let p = outbox::progress(a.pool(), first).await.unwrap().unwrap();
    assert_eq!((p.state, p.chain_signature, p.landed_at), (State::Queued, None, None));
    // Claimed again (attempts is now 1), landed by that attempt.
    let row = outbox::due(b.pool(), State::Queued, 30, 64).await.unwrap().into_iter().next().unwrap();
    assert_eq!((row.commit_signature.as_str(), row.attempts), (first.as_str(), 1));
    assert!(outbox::record_sending(b.pool(), &row, "second", 200, 30).await.unwrap());
    assert!(!outbox::record_sending(a.pool(), &row, "third", 200, 30).await.unwrap(), "a stale read claims nothing");
    outbox::landed(a.pool(), "second", 32).await.unwrap();
    outbox::requeue(b.pool(), "second", 33, "late news of a landed attempt").await.unwrap();
    let p = outbox::progress(a.pool(), first).await.unwrap().unwrap();
    assert_eq!((p.state, p.chain_signature.as_deref(), p.landed_at), (State::Landed, Some("second"), Some(32)));
    a.pool().close().await;
    b.pool().close().await;
}

common::on_both_stores!(
    #[tokio::test(flavor = "multi_thread")]
    queue_and_claims_on_sqlite,
    queue_and_claims_on_postgres,
    |db| queue_and_claims(&db.url).await
);
