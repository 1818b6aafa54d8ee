//! The transparency log on SQLite, and on PostgreSQL when `DATABASE_URL` is set (a fresh
//! database per test): receipts committed from many tasks through two relays' pools get
//! dense, unique leaf indexes and the root an in-memory tree computes; proofs from the stored
//! nodes verify; anchoring writes each head once, across restarts and two relays; a single
//! commit outlasts SQLite's write lock held elsewhere past the busy timeout.

use std::sync::Arc;

use ed25519_dalek::SigningKey;
use relay::receipts::CommitLog;
use relay::receipts::log::{LogConfig, TransparencyLog, anchor, read};
use relay::store::Store;
use shared::address::default_program_id;
use shared::receipt::Receipt;
use shared::tlog::{Hash, leaf_hash, root_of, verify_consistency, verify_inclusion};
use sqlx::Row;

use crate::common;

const LEDGER_KEY: [u8; 32] = [4; 32];

/// One relay: its own pool on the database, its commit log and its log.
struct Relay {
    commits: Arc<CommitLog>,
    log: TransparencyLog,
}

async fn relay(url: &str) -> Relay {
    let store = Store::open(url).await.unwrap();
    let key = SigningKey::from_bytes(&LEDGER_KEY);
    Relay {
        commits: Arc::new(CommitLog::new(key.clone(), default_program_id(), store.clone())),
        log: TransparencyLog::new(key, store, LogConfig { anchor_secs: 0 }),
    }
}

/// Every leaf in index order, checked dense and against the receipts it names.
async fn stored_leaves(store: &Store) -> Vec<Hash> {
    let rows = sqlx::query("SELECT idx, leaf_hash, address, entry_hex FROM tlog_entries ORDER BY idx")
        .fetch_all(store.pool())
        .await
        .unwrap();
    let mut leaves = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        assert_eq!(row.try_get::<i64, _>("idx").unwrap(), i as i64, "indexes are dense from 0");
        let entry = hex::decode(row.try_get::<String, _>("entry_hex").unwrap()).unwrap();
        let leaf = leaf_hash(&entry);
        assert_eq!(row.try_get::<String, _>("leaf_hash").unwrap(), hex::encode(leaf));
        // The entry is exactly the receipt's, recomputed from the stored receipt.
        let address: String = row.try_get("address").unwrap();
        let stored = store.receipt_by_address(&address).await.unwrap().expect("every leaf names a stored receipt");
        let r: Receipt = serde_json::from_str(&stored.receipt_json).unwrap();
        assert_eq!(shared::tlog::entry::chat(&r).unwrap(), entry);
        leaves.push(leaf);
    }
    leaves
}

async fn concurrent_appends(url: &str) {
    let (a, b) = (relay(url).await, relay(url).await);
    let mut tasks = Vec::new();
    for n in 0..60u32 {
        let commits = if n % 2 == 0 { a.commits.clone() } else { b.commits.clone() };
        tasks.push(tokio::spawn(async move {
            let (r, h) = common::receipt(n);
            commits.commit(&r, &h, 20).await.unwrap();
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let store = a.log.store();
    let leaves = stored_leaves(store).await;
    assert_eq!(leaves.len(), 60);
    assert_eq!(read::size(store.pool()).await.unwrap(), 60);
    // The stored nodes give the root an in-memory computation gives, at every size.
    for size in 0..=60u64 {
        assert_eq!(read::root(store.pool(), size).await.unwrap(), root_of(&leaves[..size as usize]), "size {size}");
    }
    let root = root_of(&leaves);
    for (i, leaf) in leaves.iter().enumerate() {
        let (path, r) = read::inclusion(store.pool(), i as u64, 60).await.unwrap();
        assert_eq!(r, root);
        verify_inclusion(i as u64, 60, leaf, &path, &root).unwrap();
        assert_eq!(read::index_of_leaf(store.pool(), leaf).await.unwrap(), Some(i as u64));
    }
    for first in [0u64, 1, 7, 31, 32, 33, 59, 60] {
        let proof = read::consistency(store.pool(), first, 60).await.unwrap();
        verify_consistency(first, 60, &root_of(&leaves[..first as usize]), &root, &proof).unwrap();
    }
    // A duplicate receipt appends nothing.
    let (r, h) = common::receipt(3);
    assert!(a.commits.commit(&r, &h, 30).await.is_err());
    assert_eq!(read::size(store.pool()).await.unwrap(), 60);
    // Entries come back in order, with the addresses they name.
    let entries = read::entries(store.pool(), 10, 20).await.unwrap();
    assert_eq!(entries.iter().map(|e| e.index).collect::<Vec<_>>(), (10..20).collect::<Vec<_>>());
    assert_eq!(entries[0].leaf_hash, hex::encode(leaves[10]));
    assert_eq!(read::index_of_address(store.pool(), &entries[0].address).await.unwrap(), Some(10));
}

common::on_both_stores!(
    #[tokio::test]
    sqlite_concurrent_appends,
    postgres_concurrent_appends,
    |db| concurrent_appends(&db.url).await
);

async fn anchor_count(store: &Store) -> i64 {
    let row = sqlx::query("SELECT COUNT(*) AS n FROM tlog_anchors").fetch_one(store.pool()).await.unwrap();
    row.try_get::<i64, _>("n").unwrap()
}

async fn anchoring(url: &str) {
    let first = relay(url).await;
    // Nothing to anchor in an empty log.
    assert_eq!(anchor::anchor_once(&first.log, &first.commits, 1).await.unwrap(), None);
    for n in 0..5 {
        let (r, h) = common::receipt(n);
        first.commits.commit(&r, &h, 2).await.unwrap();
    }
    let tx = anchor::anchor_once(&first.log, &first.commits, 3).await.unwrap().expect("the tree grew");
    assert_eq!(anchor::anchor_once(&first.log, &first.commits, 4).await.unwrap(), None, "same head");

    // A restart (a new pool, log and commit log on the same database) anchors nothing new.
    drop(first);
    let second = relay(url).await;
    assert_eq!(anchor::anchor_once(&second.log, &second.commits, 5).await.unwrap(), None);
    let store = second.log.store().clone();
    assert_eq!(anchor_count(&store).await, 1);

    // The anchor: its head is signed by the log key, and its Memo transaction carries the
    // head's hash, signed by the ledger key and chained like every commit.
    let anchors = anchor::list(&second.log, 10).await.unwrap();
    assert_eq!(anchors.len(), 1);
    let a = &anchors[0];
    assert_eq!(a.tx_signature, tx);
    let head = a.sth.verify(Some(&second.log.log_key())).unwrap();
    assert_eq!(head.size, 5);
    let leaves = stored_leaves(&store).await;
    assert_eq!(head.root, root_of(&leaves));
    let (_, sig, _) = a.sth.decode().unwrap();
    assert_eq!(a.sth_hash, hex::encode(head.signed_hash(&sig)));
    let parsed = shared::ledger::anchor::parse_and_verify(&shared::b64::decode(&a.transaction).unwrap()).unwrap();
    assert_eq!(parsed.id(), tx);
    assert_eq!(hex::encode(parsed.sth_hash), a.sth_hash);
    assert_eq!(parsed.payer, second.log.log_key());

    // Receipts after an anchor chain onto it.
    let (r, h) = common::receipt(5);
    let after = second.commits.commit(&r, &h, 6).await.unwrap();
    let after = shared::ledger::parse_and_verify(&store.commit_by_signature(&after).await.unwrap().unwrap()).unwrap();
    let anchor_tx = store.commit_by_signature(&tx).await.unwrap().unwrap();
    assert_eq!(after.recent_blockhash, shared::ledger::link_hash(&anchor_tx));

    // Two relays racing on the same grown head: exactly one anchors it.
    let third = relay(url).await;
    let (x, y) = tokio::join!(
        anchor::anchor_once(&second.log, &second.commits, 7),
        anchor::anchor_once(&third.log, &third.commits, 7)
    );
    assert_eq!([x.unwrap(), y.unwrap()].iter().filter(|t| t.is_some()).count(), 1);
    assert_eq!(anchor_count(&store).await, 2);
    let sizes: Vec<u64> = anchor::list(&third.log, 10).await.unwrap().iter().map(|a| a.sth.tree_size).collect();
    assert_eq!(sizes, vec![6, 5], "newest first, one per size");
}

common::on_both_stores!(
    #[tokio::test]
    sqlite_anchoring_once_per_head,
    postgres_anchoring_once_per_head,
    |db| anchoring(&db.url).await
);

/// Receipts stored before the log existed are appended once, oldest first, and new commits
/// follow them.
async fn backfill(url: &str) {
    let r = relay(url).await;
    let store = r.log.store().clone();
    let key = SigningKey::from_bytes(&LEDGER_KEY);
    for n in 0..3u32 {
        // As a relay before migration 0012 stored them: a commit and a receipt, no leaf.
        let (receipt, hash) = common::receipt(100 + n);
        let (bytes, commit) = shared::ledger::build(&key, &default_program_id(), &[n as u8; 32], &hash);
        let mut tx = store.begin().await.unwrap();
        store.insert_commit(&mut tx, 1000 + i64::from(n), &commit.id(), &bytes, 1).await.unwrap();
        let json = serde_json::to_string(&receipt).unwrap();
        store
            .insert_receipt(
                &mut tx,
                &commit.id(),
                &receipt.address,
                &receipt.encrypted_prompt_hash,
                &json,
                i64::from(n),
            )
            .await
            .unwrap();
        tx.commit().await.unwrap();
    }
    assert_eq!(read::size(store.pool()).await.unwrap(), 0);
    let (x, y) = tokio::join!(
        relay::receipts::log::backfill::backfill(&store, 5),
        relay::receipts::log::backfill::backfill(&store, 5)
    );
    assert_eq!(x.unwrap() + y.unwrap(), 3, "each old receipt appended once, even by two relays at once");
    assert_eq!(relay::receipts::log::backfill::backfill(&store, 6).await.unwrap(), 0);
    let (r0, _) = common::receipt(100);
    assert_eq!(read::index_of_address(store.pool(), &r0.address).await.unwrap(), Some(0), "oldest first");
    let (fresh, h) = common::receipt(7);
    r.commits.commit(&fresh, &h, 7).await.unwrap();
    assert_eq!(read::index_of_address(store.pool(), &fresh.address).await.unwrap(), Some(3));
    assert_eq!(stored_leaves(&store).await.len(), 4);
}

common::on_both_stores!(
    #[tokio::test]
    sqlite_backfill,
    postgres_backfill,
    |db| backfill(&db.url).await
);

/// A single commit (a receipt alone, an anchor) that meets SQLite's write lock held by another
/// connection past the busy timeout, at the log head's lock or any later statement, waits and
/// tries again: it is committed once the lock is released, not refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_a_single_commit_outlasts_a_write_lock_held_past_the_busy_timeout() {
    use sqlx::Connection;
    let db = common::sqlite().await;
    let r = relay(&db.url).await;
    let (first, h) = common::receipt(0);
    r.commits.commit(&first, &h, 1).await.unwrap();
    // Another writer (a rate window, a refund on another connection) holds the write lock for
    // longer than the pool's busy timeout (5 s).
    let mut other = sqlx::SqliteConnection::connect(&db.url).await.unwrap();
    sqlx::query("BEGIN IMMEDIATE").execute(&mut other).await.unwrap();
    let release = tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(6_500)).await;
        sqlx::query("ROLLBACK").execute(&mut other).await.unwrap();
    });
    let (second, h) = common::receipt(1);
    let id = r.commits.commit(&second, &h, 2).await.expect("committed once the lock is released");
    release.await.unwrap();
    let store = r.log.store();
    assert!(store.commit_by_signature(&id).await.unwrap().is_some());
    assert_eq!(stored_leaves(store).await.len(), 2, "one leaf each, the retried one included");
    db.finish().await;
}
