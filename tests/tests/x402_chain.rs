//! x402 settled for real: the relay's built-in facilitator on the local chain (Surfpool), paid
//! by the real npm client (`@x402/fetch` + `@x402/svm`, `tests/x402-peer/pay.mjs`) building its
//! transactions against that chain. Each paid call moves exactly the price from the payer's
//! token account to the pay-to account; a replayed payment and an underfunded payer move
//! nothing and are served nothing; a payment whose compute budget would drain the fee payer is
//! refused before anything is sent.

use std::path::PathBuf;

use e2e::chain::{address_of, new_key};
use e2e::sealed::{chat_body, open, seal};
use e2e::swaps::{SOL, SwapWorld, Wallet};
use serde_json::{Value, json};
use shared::address::Address;
use standins::facilitator::ExactPayment;

const PRICE: u64 = 5_000;
const DEVNET: &str = "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1";

struct World {
    swap: SwapWorld,
    pay_to: Address,
    fee_payer: Address,
    _keys: tempfile::TempDir,
}

async fn payment_rows(w: &World) -> Vec<(String, Option<String>)> {
    let url = format!("sqlite://{}?mode=ro", w.swap.stack.relay_data_dir().join("relay.sqlite3").display());
    sqlx::any::install_default_drivers();
    let pool = sqlx::AnyPool::connect(&url).await.unwrap();
    sqlx::query_as("SELECT status, tx_signature FROM x402_payments ORDER BY created_at").fetch_all(&pool).await.unwrap()
}

async fn world() -> World {
    let keys = tempfile::tempdir().unwrap();
    let fee_payer_key = new_key();
    let fee_payer = address_of(&fee_payer_key);
    let key_file = keys.path().join("fee-payer.json");
    let mut bytes = fee_payer_key.to_bytes().to_vec();
    bytes.extend_from_slice(&fee_payer.0);
    std::fs::write(&key_file, serde_json::to_string(&bytes).unwrap()).unwrap();
    let pay_to = address_of(&new_key());
    let relay = move |rpc_url: &str, usdc: &Address, _: &Address| {
        // No free messages: a guest's /agent answers `requiresDeposit` and is paid with x402.
        json!({"x402": {"rpcUrl": rpc_url, "feePayerKeyFile": key_file, "payTo": pay_to.to_string(),
                        "asset": usdc.to_string(), "network": "solana-devnet"},
               "freeMessagesPerDay": 0})
    };
    let swap = SwapWorld::start_full(json!({"quotePricePerCall": 1_000}), relay, Some(e2e::llm_base_url())).await;
    swap.chain.fund_sol(&fee_payer, 10 * SOL);
    swap.chain.create_token_account(&pay_to, &swap.usdc).await;
    World { swap, pay_to, fee_payer, _keys: keys }
}

/// Runs the npm client against `url` (a POST of `body`, or a GET) and returns its report.
async fn pay(w: &World, payer: &Wallet, url: &str, body: Option<&Value>, extra: &[&str]) -> Value {
    let peer = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/x402-peer"));
    assert!(
        peer.join("node_modules/@x402/fetch").exists(),
        "run tools/npm-install.sh tests/x402-peer (tools/test.sh does)"
    );
    let mut command = tokio::process::Command::new("node");
    command.arg(peer.join("pay.mjs")).args(["--url", url, "--rpc", &w.swap.chain.rpc_url]);
    command.args(["--key", &hex::encode(payer.key.to_bytes())]).args(extra);
    // The local chain's stablecoin is not one of the client's default assets.
    command.args(["--allow-asset", &w.swap.usdc.to_string()]);
    match body {
        Some(body) => {
            let file = w
                .swap
                .stack
                .dir
                .path()
                .join(format!("body-{}.json", rand_core::RngCore::next_u64(&mut rand_core::OsRng)));
            std::fs::write(&file, body.to_string()).unwrap();
            command.arg("--body-file").arg(file);
        }
        None => {
            command.args(["--method", "GET"]);
        }
    }
    let output = command.output().await.expect("node runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    serde_json::from_str(&stdout)
        .unwrap_or_else(|_| panic!("pay.mjs printed no JSON: {stdout}\n{}", String::from_utf8_lossy(&output.stderr)))
}

/// (payer's stablecoin, pay-to's stablecoin, fee payer's lamports).
async fn books(w: &World, payer: &Wallet) -> (u64, u64, u64) {
    (
        w.swap.balance(&payer.address, &w.swap.usdc).await,
        w.swap.balance(&w.pay_to, &w.swap.usdc).await,
        w.swap.lamports(&w.fee_payer).await,
    )
}

/// The settlement the client got names a transaction that landed on the chain and moved
/// exactly the price to the pay-to account.
async fn check_settlement(w: &World, report: &Value, payer: &Wallet) {
    let settlement = &report["settlement"]["decoded"];
    assert_eq!(settlement["success"], true, "{report}");
    assert_eq!(settlement["payer"], payer.address.to_string());
    let network = if report["x402Version"] == 1 { "solana-devnet" } else { DEVNET };
    assert_eq!(settlement["network"], network, "{report}");
    let signature = settlement["transaction"].as_str().unwrap();
    let landed = chain::Chain::transaction(&w.swap.rpc, signature).await.unwrap().expect("the settlement landed");
    let meta = landed.meta.expect("meta");
    assert!(meta.err.is_none());
    let pay_to_gain: u64 = meta
        .post_token_balances
        .iter()
        .filter(|b| b.owner == Some(w.pay_to))
        .map(|post| {
            let pre =
                meta.pre_token_balances.iter().find(|p| p.account_index == post.account_index).map_or(0, |p| p.amount);
            post.amount - pre
        })
        .sum();
    assert_eq!(pay_to_gain, PRICE);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_npm_client_pays_on_the_chain_and_replays_and_short_payers_move_nothing() {
    let w = world().await;
    let base = w.swap.stack.relay_url.clone();
    let payer = w.swap.payer(SOL, 1_000_000).await;

    // The manifest names the built-in facilitator; the challenge names its fee payer.
    let manifest: Value = reqwest::get(format!("{base}/.well-known/x402")).await.unwrap().json().await.unwrap();
    assert_eq!(manifest["x402"]["facilitator"], "builtin", "{manifest}");
    assert_eq!(manifest["x402"]["payTo"], w.pay_to.to_string());

    // 1. The private chat route, paid with v2: exactly the price moves, the reply opens.
    let sealed = seal(&w.swap.stack, "Say hi.").await;
    let before = books(&w, &payer).await;
    let report =
        pay(&w, &payer, &format!("{base}/api/v1/x402/chat/completions"), Some(&chat_body(&sealed, "gpt-oss:20b")), &[])
            .await;
    assert_eq!(report["status"], 200, "{report}");
    assert_eq!(report["challenge"]["v2Header"]["accepts"][0]["extra"]["feePayer"], w.fee_payer.to_string());
    open(&sealed, &report["body"]);
    check_settlement(&w, &report, &payer).await;
    let after = books(&w, &payer).await;
    assert_eq!((before.0 - after.0, after.1 - before.1), (PRICE, PRICE), "payer −price, pay-to +price");
    assert!(after.2 < before.2, "the fee payer paid the network fee");
    // The replay of the same header (the client's second request) is refused and moves nothing.
    assert_eq!(report["replay"]["status"], 402, "{report}");
    assert_eq!(report["replay"]["body"]["error"], "duplicate_settlement", "{report}");
    assert_eq!(books(&w, &payer).await.0, after.0);
    assert_eq!(books(&w, &payer).await.1, after.1);

    // 2. /agent, paid with v1 (X-PAYMENT). A guest without free messages is answered 200
    // `requiresDeposit` (contract §2.2), so the client takes the terms from the quote's 402.
    let (usdc, token) = (w.swap.usdc.to_string(), w.swap.token.to_string());
    let quote_url = format!("{base}/agents/v1/quote?fromMint={usdc}&toMint={token}&amount=1000000");
    let before = books(&w, &payer).await;
    let body = json!({"prompt": "Say hi.", "useTools": false});
    let terms = ["--x402-version", "1", "--no-replay", "--terms-from", &quote_url];
    let report = pay(&w, &payer, &format!("{base}/agent"), Some(&body), &terms).await;
    assert_eq!(report["firstAnswer"]["body"]["requiresDeposit"], true, "{report}");
    assert_eq!(report["status"], 200, "{report}");
    assert_eq!(report["body"]["success"], true, "{report}");
    assert_eq!(report["body"]["billing"]["method"], "x402");
    check_settlement(&w, &report, &payer).await;
    let after = books(&w, &payer).await;
    assert_eq!((before.0 - after.0, after.1 - before.1), (PRICE, PRICE));

    // 3. A swap quote (a GET).
    let before = books(&w, &payer).await;
    let report = pay(&w, &payer, &quote_url, None, &["--no-replay"]).await;
    assert_eq!(report["status"], 200, "{report}");
    assert_eq!(report["body"]["amount"], "1000000", "{report}");
    check_settlement(&w, &report, &payer).await;
    let after = books(&w, &payer).await;
    assert_eq!((before.0 - after.0, after.1 - before.1), (PRICE, PRICE));

    // 4. A payer holding less than the price: 402 with the reason, nothing served or moved.
    let short = w.swap.payer(SOL, PRICE - 1).await;
    let before = (books(&w, &short).await, books(&w, &payer).await.1);
    let report = pay(&w, &short, &quote_url, None, &["--no-replay"]).await;
    assert_eq!(report["status"], 402, "{report}");
    assert_eq!(report["body"]["error"], "insufficient_funds", "{report}");
    assert!(report["body"].get("amount").is_none() && report["settlement"].is_null(), "nothing served: {report}");
    assert_eq!((books(&w, &short).await, books(&w, &payer).await.1), before);

    // 5. A payment whose blockhash the chain never saw (it expired): verified, then refused by
    // the chain at settlement; the work's answer is withheld and nothing moves.
    let mut stale = ExactPayment::new(w.fee_payer.0, payer.key.clone(), w.pay_to.0, PRICE);
    (stale.mint, stale.memo, stale.blockhash) = (w.swap.usdc.0, b"stale-blockhash-payment-0001".to_vec(), [9; 32]);
    let payload = json!({"x402Version": 1, "scheme": "exact", "network": "solana-devnet",
                         "payload": {"transaction": shared::b64::encode(stale.build())}});
    let before = books(&w, &payer).await;
    let response = reqwest::Client::new()
        .get(&quote_url)
        .header("X-PAYMENT", shared::b64::encode(payload.to_string()))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 402);
    let settlement = response.headers().get("x-payment-response").map(|v| v.to_str().unwrap().to_string());
    let refused: Value = response.json().await.unwrap();
    assert_eq!(refused["error"], "invalid_transaction_state", "{refused}");
    let settlement: Value =
        serde_json::from_slice(&shared::b64::decode(&settlement.expect("a failed settlement header")).unwrap())
            .unwrap();
    assert_eq!(settlement["success"], false);
    assert!(refused.get("amount").is_none(), "no quote delivered: {refused}");
    assert_eq!(books(&w, &payer).await.0, before.0);
    assert_eq!(books(&w, &payer).await.1, before.1);

    // 6. Two payments at once from a payer holding one price: both pass verification, the
    // second fails at settlement with insufficient_funds and gets no answer.
    let one = w.swap.payer(SOL, PRICE).await;
    let (a, b) = (seal(&w.swap.stack, "One.").await, seal(&w.swap.stack, "Two.").await);
    let chat = format!("{base}/api/v1/x402/chat/completions");
    let (body_a, body_b) = (chat_body(&a, "gpt-oss:20b"), chat_body(&b, "gpt-oss:20b"));
    let pay_to_before = books(&w, &one).await.1;
    let reports = e2e::join_all([
        pay(&w, &one, &chat, Some(&body_a), &["--no-replay"]),
        pay(&w, &one, &chat, Some(&body_b), &["--no-replay"]),
    ])
    .await;
    let mut statuses: Vec<i64> = reports.iter().map(|r| r["status"].as_i64().unwrap()).collect();
    statuses.sort();
    assert_eq!(statuses, [200, 402], "{reports:?}");
    let refused = reports.iter().find(|r| r["status"] == 402).unwrap();
    assert_eq!(refused["body"]["error"], "insufficient_funds", "{refused}");
    assert!(refused["body"].get("encryptedResponse").is_none());
    assert_eq!(books(&w, &one).await.0, 0);
    assert_eq!(books(&w, &one).await.1, pay_to_before + PRICE, "one price moved, once");

    // 7. Greedy payments, built by hand with a live blockhash: the payer writes the compute
    // budget and the fee payer pays it. A unit limit far above what a transfer needs (at the
    // scheme's price cap it would cost the fee payer 7,000,000 lamports), and a limit within
    // bounds at a price that comes to 200,000 lamports (cap 10,000): both refused with the
    // reason and a message that says why; nothing is sent, so no one's books move.
    let blockhash = chain::Chain::latest_blockhash(&w.swap.rpc).await.unwrap().blockhash;
    let greedy = |limit: u32, price: u64, memo: &str| {
        let mut p = ExactPayment::new(w.fee_payer.0, payer.key.clone(), w.pay_to.0, PRICE);
        (p.mint, p.memo, p.blockhash) = (w.swap.usdc.0, memo.as_bytes().to_vec(), blockhash);
        (p.compute_unit_limit, p.compute_unit_price) = (limit, price);
        let payload = json!({"x402Version": 1, "scheme": "exact", "network": "solana-devnet",
                             "payload": {"transaction": shared::b64::encode(p.build())}});
        shared::b64::encode(payload.to_string())
    };
    let cases = [
        (
            greedy(1_400_000, 5_000_000, "greedy-limit-0000000000000000001"),
            "invalid_exact_svm_payload_transaction_instructions_compute_limit_too_high",
            "compute unit limit is above 40000",
        ),
        (
            greedy(40_000, 5_000_000, "greedy-price-0000000000000000001"),
            "invalid_exact_svm_payload_transaction_priority_fee_too_high",
            "comes to 200000 lamports; this facilitator pays at most 10000",
        ),
    ];
    let before = (books(&w, &payer).await, payment_rows(&w).await.len());
    for (header, reason, message) in cases {
        let response = reqwest::Client::new().get(&quote_url).header("X-PAYMENT", header).send().await.unwrap();
        assert_eq!(response.status().as_u16(), 402);
        assert!(response.headers().get("x-payment-response").is_none(), "nothing was settled");
        let refused: Value = response.json().await.unwrap();
        assert_eq!(refused["error"], reason, "{refused}");
        assert!(refused["message"].as_str().unwrap().contains(message), "{refused}");
        assert!(refused.get("amount").is_none(), "no quote delivered: {refused}");
    }
    assert_eq!((books(&w, &payer).await, payment_rows(&w).await.len()), before, "no token, no lamport, no row");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_relay_killed_mid_settlement_keeps_the_books_with_the_chain() {
    let mut w = world().await;
    let base = w.swap.stack.relay_url.clone();
    let payer = w.swap.payer(SOL, 1_000_000).await;
    let (usdc, token) = (w.swap.usdc.to_string(), w.swap.token.to_string());
    let quote_url = format!("{base}/agents/v1/quote?fromMint={usdc}&toMint={token}&amount=1000000");

    // Killed after recording the signature, before sending: nothing moves; the payment stays
    // used (its row `sending`), so the same header is refused after the restart.
    w.swap.stack.restart_relay(&[("SVC_RELAY_EXIT_AT", "x402:recorded")]);
    let before = books(&w, &payer).await;
    let report = pay(&w, &payer, &quote_url, None, &["--no-replay"]).await;
    assert!(report["status"].is_null(), "the relay died mid-call: {report}");
    tokio::task::block_in_place(|| w.swap.stack.relay.wait_exit(std::time::Duration::from_secs(30))).expect("aborted");
    w.swap.stack.restart_relay(&[]);
    assert_eq!((books(&w, &payer).await.0, books(&w, &payer).await.1), (before.0, before.1));
    let rows = payment_rows(&w).await;
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].0, "sending");
    let header = report["paymentHeader"]["value"].as_str().unwrap();
    let again = reqwest::Client::new().get(&quote_url).header("PAYMENT-SIGNATURE", header).send().await.unwrap();
    assert_eq!(again.status().as_u16(), 402);
    assert_eq!(again.json::<Value>().await.unwrap()["error"], "duplicate_settlement");

    // Killed after sending, before the outcome: the money moved; the restarted relay's
    // reconciler finds the transaction on the chain and records the payment settled.
    w.swap.stack.restart_relay(&[("SVC_RELAY_EXIT_AT", "x402:sent")]);
    let before = books(&w, &payer).await;
    let report = pay(&w, &payer, &quote_url, None, &["--no-replay"]).await;
    assert!(report["status"].is_null(), "the relay died mid-call: {report}");
    tokio::task::block_in_place(|| w.swap.stack.relay.wait_exit(std::time::Duration::from_secs(30))).expect("aborted");
    w.swap.stack.restart_relay(&[]);
    let mut settled = None;
    for _ in 0..50 {
        let rows = payment_rows(&w).await;
        if rows.len() == 2 && rows[1].0 == "settled" {
            settled = rows[1].1.clone();
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    let signature = settled.expect("the reconciler recorded the landed payment as settled");
    assert!(chain::Chain::transaction(&w.swap.rpc, &signature).await.unwrap().is_some());
    let after = books(&w, &payer).await;
    assert_eq!((before.0 - after.0, after.1 - before.1), (PRICE, PRICE), "moved once, as the books say");
}
