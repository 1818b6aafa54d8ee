//! Debits per second under concurrency, on SQLite and (with `DATABASE_URL`) PostgreSQL.
//! `cargo bench -p relay --bench debits` (part of `make bench`); results in docs/benchmarks.md.
//! Each run uses a fresh database: a temp SQLite file, or a new PostgreSQL database it drops.

use std::sync::Arc;
use std::time::Instant;

use relay::billing::balances::{credit, debit};
use relay::store::Store;
mod common;

const TASKS: usize = 32;
const DEBITS_PER_TASK: usize = 250;

async fn run(label: &str, store: Store) {
    let total = (TASKS * DEBITS_PER_TASK) as i64;
    credit(&store, "bench", "usdc", total, "admin", "bench", 0).await.unwrap();
    let store = Arc::new(store);
    let started = Instant::now();
    let tasks: Vec<_> = (0..TASKS)
        .map(|t| {
            let store = store.clone();
            tokio::spawn(async move {
                for i in 0..DEBITS_PER_TASK {
                    debit(&store, "bench", "usdc", 1, &format!("{t}-{i}"), 1).await.unwrap();
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
    let secs = started.elapsed().as_secs_f64();
    let left = relay::billing::balances::balances(&store, "bench").await.unwrap()[0].1;
    assert_eq!(left, 0, "every debit landed exactly once");
    println!(
        "{label}: {total} debits by {TASKS} concurrent tasks in {secs:.2} s = {:.0} debits/s",
        total as f64 / secs
    );
}

#[tokio::main]
async fn main() {
    common::on_each_backend("debits", "postgres (local, 16 connections)", run).await;
}
