//! The transparency log at scale: append throughput (entries/s) and inclusion-proof generation
//! time at 1M entries (p50, p99), on SQLite and (with `DATABASE_URL`) PostgreSQL.
//! `cargo bench -p relay --bench log` (part of `make bench`); results in docs/benchmarks.md.
//!
//! The 1M-entry tree is bulk-loaded (its nodes computed in memory, inserted in batches), since
//! a million receipts through the enclave would measure the model, not the log; appends are
//! then timed through the relay's own `append`, each in its own transaction as a commit makes
//! it, and proofs through the relay's own `read::inclusion` (one query per proof).

use std::time::Instant;

use relay::receipts::log::{append, read};
use relay::store::Store;
use shared::tlog::tree::completed_by;
use shared::tlog::{Hash, NodeId, Range, leaf_hash, node_hash, verify_inclusion};
mod common;

const PRELOADED: u64 = 1_000_000;
const APPENDS: u64 = 5_000;
const PROOFS: usize = 1_000;
const BATCH: usize = 1_000;

fn entry(i: u64) -> Vec<u8> {
    let mut e = vec![0x01];
    e.extend_from_slice(&shared::sha256(&i.to_be_bytes()));
    e
}

/// Every complete subtree of the first `n` leaves, as the relay would have stored them.
fn nodes(n: u64) -> Vec<(NodeId, Hash)> {
    let mut all: Vec<(NodeId, Hash)> = Vec::with_capacity(2 * n as usize);
    let mut frontier: Vec<Hash> = Vec::new();
    for i in 0..n {
        let mut h = leaf_hash(&entry(i));
        all.push((NodeId { level: 0, index: i }, h));
        for (node, _, _) in completed_by(i) {
            let left = frontier.pop().expect("a completed node has a left sibling");
            h = node_hash(&left, &h);
            all.push((node, h));
        }
        frontier.push(h);
    }
    all
}

async fn preload(store: &Store, n: u64) -> Hash {
    let all = nodes(n);
    let mut tx = store.begin().await.unwrap();
    for chunk in all.chunks(BATCH) {
        let values: Vec<String> =
            (0..chunk.len()).map(|i| format!("(${}, ${}, ${})", 3 * i + 1, 3 * i + 2, 3 * i + 3)).collect();
        let sql = format!("INSERT INTO tlog_nodes (level, idx, hash) VALUES {}", values.join(", "));
        let mut q = sqlx::query(&sql);
        for (id, h) in chunk {
            q = q.bind(i64::from(id.level)).bind(id.index as i64).bind(hex::encode(h));
        }
        q.execute(&mut *tx).await.unwrap();
    }
    let leaves: Vec<(u64, Hash)> = all.iter().filter(|(id, _)| id.level == 0).map(|(id, h)| (id.index, *h)).collect();
    for chunk in leaves.chunks(BATCH) {
        let values: Vec<String> = (0..chunk.len())
            .map(|i| format!("(${}, ${}, ${}, ${}, 0)", 4 * i + 1, 4 * i + 2, 4 * i + 3, 4 * i + 4))
            .collect();
        let sql = format!(
            "INSERT INTO tlog_entries (idx, leaf_hash, address, entry_hex, created_at) VALUES {}",
            values.join(", ")
        );
        let mut q = sqlx::query(&sql);
        for (i, h) in chunk {
            q = q.bind(*i as i64).bind(hex::encode(h)).bind(format!("bench-{i}")).bind(hex::encode(entry(*i)));
        }
        q.execute(&mut *tx).await.unwrap();
    }
    sqlx::query("UPDATE tlog_head SET size = $1 WHERE id = 0").bind(n as i64).execute(&mut *tx).await.unwrap();
    tx.commit().await.unwrap();
    let map: std::collections::HashMap<NodeId, Hash> = all.into_iter().collect();
    Range::new(0, n).hash(|id| map[&id])
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

async fn run(label: &str, store: Store) {
    let started = Instant::now();
    let root = preload(&store, PRELOADED).await;
    println!("{label}: preloaded {PRELOADED} entries in {:.1} s", started.elapsed().as_secs_f64());
    assert_eq!(read::root(store.pool(), PRELOADED).await.unwrap(), root, "the stored tree is the computed one");

    let started = Instant::now();
    for i in PRELOADED..PRELOADED + APPENDS {
        let mut tx = store.begin().await.unwrap();
        append::append(&mut tx, &entry(i), &format!("bench-{i}"), 0).await.unwrap();
        tx.commit().await.unwrap();
    }
    let secs = started.elapsed().as_secs_f64();
    println!("{label}: {APPENDS} appends after {PRELOADED} in {secs:.2} s = {:.0} entries/s", APPENDS as f64 / secs);

    let size = PRELOADED + APPENDS;
    let root = read::root(store.pool(), size).await.unwrap();
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let mut times = Vec::with_capacity(PROOFS);
    for _ in 0..PROOFS {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let index = state % size;
        let t = Instant::now();
        let (path, r) = read::inclusion(store.pool(), index, size).await.unwrap();
        times.push(t.elapsed().as_secs_f64() * 1e3);
        assert_eq!(r, root);
        verify_inclusion(index, size, &leaf_hash(&entry(index)), &path, &root).unwrap();
    }
    times.sort_by(|a, b| a.total_cmp(b));
    println!(
        "{label}: inclusion proof at {size} entries: p50 {:.3} ms, p99 {:.3} ms ({PROOFS} random leaves)",
        percentile(&times, 0.5),
        percentile(&times, 0.99)
    );
}

#[tokio::main]
async fn main() {
    common::on_each_backend("log", "postgres (local)", run).await;
}
