//! Swaps on the local chain (docs/swaps.md): quote latency through the relay against the router
//! stand-in (key-paid, price 0), and one-shot sessions settled per minute with the client's
//! whole flow (start, check the commitment and the funding against a live attestation, sign,
//! send, execute, poll to `settled`) for `CONCURRENCY` payers at a time. Real release binaries;
//! docs/benchmarks.md records the numbers.
//!
//! `make bench` builds the release binaries first (this looks for them beside itself).

use std::time::{Duration, Instant};

use client::swap::{Limits, fund};
use e2e::swaps::{SOL, SwapWorld};
use serde_json::json;

const QUOTES: usize = 500;
const SESSIONS: usize = 60;
const CONCURRENCY: usize = 10;

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(4).enable_all().build().unwrap();
    runtime.block_on(async {
        let limits = json!({"rateLimits": {"perAddressPerMinute": 0, "perKeyPerMinute": 0}});
        let w = SwapWorld::start_with(json!({}), limits).await;
        quotes(&w).await;
        sessions(&w).await;
    });
}

async fn quotes(w: &SwapWorld) {
    let client = w.client();
    let (from, to) = (w.usdc.to_string(), w.token.to_string());
    let mut times = Vec::with_capacity(QUOTES);
    for i in 0..QUOTES {
        let amount = (1_000_000 + i as u64).to_string();
        let started = Instant::now();
        client.swap_quote(&from, &to, &amount, None).await.unwrap();
        times.push(started.elapsed());
    }
    times.sort();
    let at = |q: f64| times[((times.len() as f64 * q) as usize).min(times.len() - 1)].as_secs_f64() * 1e3;
    println!(
        "quote_through_relay ({QUOTES} sequential): p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        at(0.5),
        at(0.99),
        at(1.0)
    );
}

async fn sessions(w: &SwapWorld) {
    let mut payers = Vec::with_capacity(SESSIONS);
    for _ in 0..SESSIONS {
        payers.push(w.payer(SOL, 10_000_000).await);
    }
    let started = Instant::now();
    let mut settled = 0;
    for batch in payers.chunks(CONCURRENCY) {
        let runs = batch.iter().map(|payer| async move {
            let client = w.client();
            let request = w.request(payer, 10_000_000);
            let start = client.start_oneshot(&request).await.unwrap();
            let checked = client.check_start(start, &request, Limits::default()).await.unwrap();
            let signature = fund(&w.rpc, &checked, &payer.key).await.unwrap();
            client.execute_oneshot(&checked.start.session_id, &signature).await.unwrap();
            client.follow(&checked.start.session_id, Duration::from_secs(120)).await.unwrap()
        });
        for session in e2e::join_all(runs).await {
            assert_eq!(session["state"], "settled", "{session}");
            settled += 1;
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    println!(
        "sessions_settled ({settled} sessions, {CONCURRENCY} at a time): {:.1} s, {:.0} sessions/minute",
        elapsed,
        settled as f64 * 60.0 / elapsed
    );
}
