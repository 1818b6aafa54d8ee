//! Managed wallets on the local chain (docs/wallets.md): encrypts, withdrawals, shields and
//! managed swaps per minute through the relay and the enclave pool, `WALLETS` wallets at a
//! time, each operation signed by the wallet's owner and carried to its end (a session polled
//! to `settled`, a withdrawal answered `landed` or its payout seen on chain). Shields run with
//! their random delays set to 0 to 1 s, so the number is the machinery's, not the privacy
//! delay's. Real release binaries; docs/benchmarks.md records the numbers.
//!
//! `make bench` builds the release binaries first (this looks for them beside itself).

use std::time::{Duration, Instant};

use client::wallets::Payout;
use e2e::chain::{address_of, new_key};
use e2e::swaps::{SOL, SwapWorld};
use ed25519_dalek::SigningKey;
use serde_json::{Value, json};

const WALLETS: usize = 10;
const ROUNDS: usize = 6;
const USDC: u64 = 1_000_000;

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(4).enable_all().build().unwrap();
    runtime.block_on(async {
        let port = e2e::free_port();
        let agents = json!({"wallets": {"webhookAllow": [format!("127.0.0.1:{port}")], "retryBaseSecs": 60,
                                        "shieldDelaySecs": [0, 1]}});
        let limits = json!({"rateLimits": {"perAddressPerMinute": 0, "perKeyPerMinute": 0}});
        let w = SwapWorld::start_with(agents, limits).await;
        let client = w.client();
        let mut wallets = Vec::new();
        for _ in 0..WALLETS {
            let owner = new_key();
            let hook = format!("http://127.0.0.1:{port}/hook");
            let created = client.create_wallet(&hook, Some(&address_of(&owner).to_string())).await.unwrap();
            let address = created.priv_address;
            w.chain.mint_to(&w.usdc, &address, 1_000 * USDC).await;
            wallets.push((created.wallet_id, owner));
        }
        let statement = client.reserves(&w.usdc.to_string()).await.unwrap();
        w.chain.fund_sol(&statement.pool, 100 * SOL);
        let mint = w.usdc.to_string();

        let amount = (10 * USDC).to_string();
        let encrypts =
            rounds(&w, &wallets, async |c, id, owner| c.wallet_encrypt(id, &mint, &amount, Some(owner)).await).await;
        let shields = rounds(&w, &wallets, async |c, id, owner| {
            let to = address_of(&new_key()).to_string();
            c.wallet_shield(Payout { wallet_id: id, mint: &mint, amount: &amount, destination: &to }, Some(owner)).await
        })
        .await;
        let (token, one) = (w.token.to_string(), USDC.to_string());
        let swaps = rounds(&w, &wallets, async |c, id, owner| {
            let to = address_of(&new_key()).to_string();
            c.wallet_swap(id, &mint, &token, &one, &to, None, Some(owner)).await
        })
        .await;

        // The enclave's payout quiet period after its boot: one withdrawal waits it out first.
        let (id, owner) = &wallets[0];
        loop {
            let destination = address_of(&new_key()).to_string();
            let payout = Payout { wallet_id: id, mint: &mint, amount: "1", destination: &destination };
            match client.wallet_withdraw(payout, Some(owner)).await {
                Ok(_) => break,
                Err(e) if e.to_string().contains("pool_warming_up") => {
                    tokio::time::sleep(Duration::from_millis(500)).await
                }
                Err(e) => panic!("{e}"),
            }
        }
        let started = Instant::now();
        let mut last = Vec::new();
        for _ in 0..ROUNDS {
            let runs = wallets.iter().map(|(id, owner)| {
                let (client, mint) = (w.client(), mint.clone());
                async move {
                    let (destination, amount) = (address_of(&new_key()), (5 * USDC).to_string());
                    let to = destination.to_string();
                    let payout = Payout { wallet_id: id, mint: &mint, amount: &amount, destination: &to };
                    let done = client.wallet_withdraw(payout, Some(owner)).await.unwrap();
                    (destination, done.status)
                }
            });
            last = e2e::join_all(runs).await;
        }
        // Pending payouts land after the answer: count the time until the last round's did.
        for (destination, _) in &last {
            while w.balance(destination, &w.usdc).await < 5 * USDC {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
        let withdrawals = started.elapsed();
        let per_minute = |n: usize, d: Duration| n as f64 * 60.0 / d.as_secs_f64();
        let ops = WALLETS * ROUNDS;
        println!(
            "wallet_encrypt ({ops}, {WALLETS} wallets at a time, owner-signed, to settled): {:.1} s, {:.0} per minute",
            encrypts.as_secs_f64(),
            per_minute(ops, encrypts)
        );
        println!(
            "wallet_withdraw ({ops}, {WALLETS} wallets at a time, owner-signed, to landed): {:.1} s, {:.0} per minute",
            withdrawals.as_secs_f64(),
            per_minute(ops, withdrawals)
        );
        for (name, took) in [("wallet_shield", shields), ("wallet_swap", swaps)] {
            println!(
                "{name} ({ops}, {WALLETS} wallets at a time, owner-signed, to settled): {:.1} s, {:.0} per minute",
                took.as_secs_f64(),
                per_minute(ops, took)
            );
        }
        let statement = client.reserves(&mint).await.unwrap();
        assert!(statement.solvent());
        assert_eq!(statement.liabilities, statement.pool_balance.to_string(), "everything in the pool is owed");
    });
}

/// `ROUNDS` rounds of one session-starting operation on every wallet at once, each session
/// polled to `settled`; the time they took.
async fn rounds(
    w: &SwapWorld,
    wallets: &[(String, SigningKey)],
    start: impl AsyncFn(&client::Client, &str, &SigningKey) -> Result<Value, client::ClientError>,
) -> Duration {
    let started = Instant::now();
    for _ in 0..ROUNDS {
        let runs = wallets.iter().map(|(id, owner)| {
            let (client, start) = (w.client(), &start);
            async move {
                let s = start(&client, id, owner).await.unwrap();
                let session = s["sessionId"].as_str().unwrap().to_string();
                loop {
                    let state = client.session(&session).await.unwrap()["state"].as_str().unwrap().to_string();
                    match state.as_str() {
                        "settled" => break,
                        "failed" => panic!("session {session} failed"),
                        _ => tokio::time::sleep(Duration::from_millis(100)).await,
                    }
                }
            }
        });
        e2e::join_all(runs).await;
    }
    started.elapsed()
}
