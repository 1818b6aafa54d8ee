//! Money in from the chain, on the real local chain (Surfpool) through the real relay binary:
//! a token transfer to a key's deposit address is credited exactly once after finalization,
//! through relay crashes at each step of a scan and two relays scanning one PostgreSQL; an
//! unknown mint and dust are listed and never credited; a key holding only the service token
//! pays `/agent` and `/tee/process` from it, and its usage rows name the currency; a deposit
//! followed by more dust transfers than one scan reads is still found.

use std::time::Duration;

use e2e::swaps::{SOL, SwapWorld, Wallet};
use e2e::{Process, free_port, wait_http};
use serde_json::{Value, json};
use shared::address::Address;
use shared::solana::associated_token;
use shared::solana::programs::TOKEN_PROGRAM;
use shared::solana::token;

/// The stablecoin credits from 1,000 base units; the token (the service token here) from 1.
const USDC_MIN: u64 = 1_000;
const SVC_AGENT_PRICE: i64 = 7;
const SVC_CHAT_PRICE: i64 = 5;
/// Dust transfers sent after a deposit: more signatures than one scan reads (20 pages of one).
const FLOOD: u64 = 25;

/// A fresh PostgreSQL database when `DATABASE_URL` is set (CI sets it), else SQLite.
async fn database() -> Option<String> {
    e2e::fresh_postgres("deposits").await
}

async fn world(database_url: Option<String>) -> SwapWorld {
    let relay = move |rpc_url: &str, usdc: &Address, token: &Address| {
        let mut relay = json!({
            "deposits": {
                "rpcUrl": rpc_url,
                "pollSecs": 1,
                "pageSize": 1,
                "network": "localnet",
                "mints": {
                    usdc.to_string(): {"currency": "usdc", "minAmount": USDC_MIN},
                    token.to_string(): {"currency": "svc"},
                },
            },
            "agentPricePerCall": 1_000,
            "teeProcessPricePerCall": 1_000,
            "currencyPrices": {"svc": {"agentPricePerCall": SVC_AGENT_PRICE, "teeProcessPricePerCall": SVC_CHAT_PRICE}},
        });
        if let Some(url) = database_url {
            relay["databaseUrl"] = json!(url);
        }
        relay
    };
    SwapWorld::start_full(json!({}), relay, Some(e2e::llm_base_url())).await
}

async fn get(world: &SwapWorld, base: &str, path: &str) -> (u16, Value) {
    e2e::http::send(reqwest::Client::new().get(format!("{base}{path}")).bearer_auth(&world.stack.api_key)).await
}

/// Sends `amount` of `mint` from `from` to `owner`'s token account, creating it in the same
/// transaction as wallets do (so the owner is named in it).
async fn deposit(
    world: &SwapWorld,
    from: &Wallet,
    mint: &Address,
    owner: &Address,
    amount: u64,
    decimals: u8,
) -> String {
    let source = associated_token::address(&from.address, mint, &TOKEN_PROGRAM);
    let destination = associated_token::address(owner, mint, &TOKEN_PROGRAM);
    let ixs = [
        associated_token::create_idempotent(&world.chain.payer_address(), owner, mint, &TOKEN_PROGRAM),
        token::transfer_checked(&source, mint, &destination, &from.address, amount, decimals),
    ];
    world.chain.send(&ixs, &[&from.key]).await.unwrap()
}

/// The key's deposits once every row of `signature` reached `state` (the watcher polls each
/// second; finalization takes about two).
async fn wait_for(world: &SwapWorld, base: &str, signature: &str, state: &str) -> Vec<Value> {
    for _ in 0..120 {
        let (status, body) = get(world, base, "/api/v1/deposits").await;
        assert_eq!(status, 200, "{body}");
        let rows = body["deposits"].as_array().unwrap().clone();
        let mine: Vec<&Value> = rows.iter().filter(|r| r["signature"] == signature).collect();
        if !mine.is_empty() && mine.iter().all(|r| r["state"] == state) {
            return rows;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    panic!("deposit {signature} never reached {state}");
}

async fn balance(world: &SwapWorld, base: &str, currency: &str) -> i64 {
    let (_, body) = get(world, base, "/api/v1/balance").await;
    let row = body["balances"].as_array().unwrap().iter().find(|b| b["currency"] == currency).cloned();
    row.map_or(0, |b| b["amount"].as_str().unwrap().parse().unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn deposits_are_credited_once_through_crashes_and_the_service_token_pays() {
    let postgres = database().await;
    let on_postgres = postgres.is_some();
    let mut world = world(postgres.clone()).await;
    let base = world.stack.relay_url.clone();

    // The deposit address: one wallet per key, made by the enclave, the same on every ask.
    let (status, address) = get(&world, &base, "/api/v1/deposits/address").await;
    assert_eq!(status, 200, "{address}");
    assert_eq!(get(&world, &base, "/api/v1/deposits/address").await.1, address);
    let owner = Address::parse(address["owner"].as_str().unwrap()).unwrap();
    assert_eq!(address["network"], "localnet");
    let accounts = address["tokenAccounts"].as_array().unwrap();
    assert_eq!(accounts.len(), 2);
    for a in accounts {
        let mint = Address::parse(a["mint"].as_str().unwrap()).unwrap();
        assert_eq!(a["tokenAccount"], associated_token::address(&owner, &mint, &TOKEN_PROGRAM).to_string());
    }
    let payer = world.payer(SOL, 10 * USDC_MIN).await;
    world.chain.mint_to(&world.token, &payer.address, 100 * SOL).await;
    let stranger_mint = world.chain.create_mint(6).await;
    world.chain.mint_to(&stranger_mint, &payer.address, 1_000_000).await;

    // One of each: credited, dust, unknown mint.
    let svc_1 = deposit(&world, &payer, &world.token, &owner, 2 * SOL, 9).await;
    let dust = deposit(&world, &payer, &world.usdc, &owner, USDC_MIN - 1, 6).await;
    let unknown = deposit(&world, &payer, &stranger_mint, &owner, 500_000, 6).await;
    let rows = wait_for(&world, &base, &svc_1, "credited").await;
    let rows = match rows.iter().any(|r| r["signature"] == unknown) {
        true => rows,
        false => wait_for(&world, &base, &unknown, "ignored").await,
    };
    let row = |sig: &str| rows.iter().find(|r| r["signature"] == sig).unwrap().clone();
    assert_eq!(
        (row(&svc_1)["amount"].clone(), row(&svc_1)["currency"].clone()),
        (json!((2 * SOL).to_string()), json!("svc"))
    );
    assert_eq!(row(&svc_1)["ix"], 1, "the transfer is the transaction's second instruction");
    assert_eq!((row(&dust)["state"].clone(), row(&dust)["reason"].clone()), (json!("ignored"), json!("below_minimum")));
    assert_eq!(
        (row(&unknown)["state"].clone(), row(&unknown)["reason"].clone()),
        (json!("ignored"), json!("unknown_mint"))
    );
    assert!(row(&unknown)["currency"].is_null());
    assert_eq!(rows.len(), 3, "{rows:?}");
    assert_eq!(balance(&world, &base, "svc").await, 2 * SOL as i64);
    assert_eq!(balance(&world, &base, "usdc").await, 0, "dust is not credited");

    // A damaged row, scanned before the real one (an owner that is not base58), is left out:
    // every deposit below is still credited.
    let host = e2e::host::Host::of(&world, postgres.as_deref()).await;
    sqlx::query("INSERT INTO deposit_addresses (key_id, owner, object_id, created_at) VALUES ($1, $2, $3, 0)")
        .bind("key_damaged")
        .bind("not base58: 0OIl")
        .bind("no-object")
        .execute(&host.db)
        .await
        .unwrap();

    // Crashes: after a scan recorded but before its cursor moved, and right after a credit.
    // Each time the relay aborts at that point, comes back, and the deposit is credited once.
    let mut expected = 2 * SOL as i64;
    for (i, failpoint) in ["deposit:recorded", "deposit:credited"].into_iter().enumerate() {
        world.stack.restart_relay(&[("SVC_RELAY_EXIT_AT", failpoint)]);
        let amount = (i as u64 + 1) * SOL / 10;
        let sig = deposit(&world, &payer, &world.token, &owner, amount, 9).await;
        let exited = tokio::task::block_in_place(|| world.stack.relay.wait_exit(Duration::from_secs(60)));
        assert!(exited.is_some_and(|s| !s.success()), "the relay aborted at {failpoint}");
        world.stack.restart_relay(&[]);
        wait_for(&world, &base, &sig, "credited").await;
        expected += amount as i64;
        // A few more scans find nothing new to credit.
        tokio::time::sleep(Duration::from_secs(3)).await;
        assert_eq!(balance(&world, &base, "svc").await, expected, "after a crash at {failpoint}");
    }

    // Two relays on one PostgreSQL scan the same addresses: each deposit is credited once.
    if on_postgres {
        let mut config: Value =
            serde_json::from_str(&std::fs::read_to_string(world.stack.dir.path().join("relay.json")).unwrap()).unwrap();
        let port = free_port();
        config["listen"] = json!(format!("127.0.0.1:{port}"));
        config["dataDir"] = json!(world.stack.dir.path().join("relay-b-data"));
        let config_b = world.stack.dir.path().join("relay-b.json");
        std::fs::write(&config_b, config.to_string()).unwrap();
        let _relay_b = Process::spawn_binary("relay", &config_b, world.stack.dir.path().join("relay-b.log"));
        let b = format!("http://127.0.0.1:{port}");
        tokio::task::block_in_place(|| wait_http(&format!("{b}/health")));
        let mut sigs = Vec::new();
        for _ in 0..3 {
            sigs.push(deposit(&world, &payer, &world.token, &owner, SOL, 9).await);
        }
        for sig in &sigs {
            wait_for(&world, &b, sig, "credited").await;
        }
        expected += 3 * SOL as i64;
        tokio::time::sleep(Duration::from_secs(3)).await;
        assert_eq!(balance(&world, &base, "svc").await, expected);
        assert_eq!(balance(&world, &b, "svc").await, expected);
    } else {
        eprintln!("DATABASE_URL not set: the two-relay part runs on PostgreSQL only (CI sets it)");
    }
    let (_, listed) = get(&world, &base, "/api/v1/deposits?limit=200").await;
    let credited: Vec<&Value> = listed["deposits"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["state"] == "credited" && r["currency"] == "svc")
        .collect();
    let total: i64 = credited.iter().map(|r| r["amount"].as_str().unwrap().parse::<i64>().unwrap()).sum();
    assert_eq!(total, expected, "the credited rows add up to the balance: nothing credited twice");

    // The service token pays: no stablecoin on this key, so /agent and /tee/process draw svc.
    let http = reqwest::Client::new();
    let r = http
        .post(format!("{base}/agent"))
        .bearer_auth(&world.stack.api_key)
        .json(&json!({"prompt": "Say hi.", "useTools": false}))
        .send()
        .await
        .unwrap();
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["success"], true, "{body}");
    assert_eq!(
        body["billing"],
        json!({"method": "key", "charged": SVC_AGENT_PRICE.to_string(), "currency": "svc",
                                        "balanceAfter": (expected - SVC_AGENT_PRICE).to_string()})
    );
    let outcome =
        world.client().chat("Say hi.", &client::chat::ChatOptions { max_tokens: Some(8), ..Default::default() }).await;
    outcome.expect("a private chat paid in the service token");
    let (_, usage) = get(&world, &base, "/api/v1/usage").await;
    // Both calls may land in the same second: compare as a set.
    let mut rows: Vec<(String, String, String)> = usage["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["route"].as_str().unwrap().into(),
                r["charged"].as_str().unwrap().into(),
                r["currency"].as_str().unwrap().into(),
            )
        })
        .collect();
    rows.sort();
    assert_eq!(
        rows,
        [
            ("/agent".to_string(), SVC_AGENT_PRICE.to_string(), "svc".to_string()),
            ("/tee/process".to_string(), SVC_CHAT_PRICE.to_string(), "svc".to_string())
        ]
    );
    assert_eq!(balance(&world, &base, "svc").await, expected - SVC_AGENT_PRICE - SVC_CHAT_PRICE);

    // Asking for the stablecoin, which this key lacks, is refused; an unknown currency too.
    for (currency, status, code) in [("usdc", 402, "insufficient_balance"), ("eur", 400, "invalid_field")] {
        let r = http
            .post(format!("{base}/agent"))
            .bearer_auth(&world.stack.api_key)
            .header("X-Currency", currency)
            .json(&json!({"prompt": "Say hi.", "useTools": false}))
            .send()
            .await
            .unwrap();
        let s = r.status().as_u16();
        let body: Value = r.json().await.unwrap();
        assert_eq!((s, body["error"].as_str()), (status, Some(code)), "{body}");
    }
    assert_eq!(
        balance(&world, &base, "svc").await,
        expected - SVC_AGENT_PRICE - SVC_CHAT_PRICE,
        "refusals cost nothing"
    );

    // A flooded address hides nothing. With the relay down, a deposit, then more dust transfers
    // to the same account than one scan reads: the watcher walks back over several scans,
    // saving how far it came, and reaches the deposit (a watcher that gave up after one scan's
    // pages and moved its cursor to the newest would never see it).
    world.stack.relay.stop();
    let hidden = deposit(&world, &payer, &world.usdc, &owner, 2 * USDC_MIN, 6).await;
    let mut flood = Vec::new();
    for amount in 1..=FLOOD {
        flood.push(deposit(&world, &payer, &world.usdc, &owner, amount, 6).await);
    }
    world.stack.restart_relay(&[]);
    let rows = wait_for(&world, &base, &hidden, "credited").await;
    assert_eq!(balance(&world, &base, "usdc").await, 2 * USDC_MIN as i64, "the stablecoin held nothing before");
    let (_, listed) = get(&world, &base, "/api/v1/deposits?limit=200").await;
    let dust: Vec<&Value> = listed["deposits"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| flood.iter().any(|f| r["signature"] == *f) && r["reason"] == "below_minimum")
        .collect();
    assert_eq!(dust.len(), FLOOD as usize, "every dust transfer recorded too: {rows:?}");
}
