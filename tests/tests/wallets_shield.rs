//! Shield (docs/wallets.md "Shield"), end to end on a real local chain (Surfpool), a real
//! relay and a real enclave:
//! - four transactions: the deposit into the pool, the hop to an intermediate key, its
//!   delivery, its close; the destination receives the amount once, the wallet pays it once,
//!   the pool ends as it was, the intermediate key ends empty;
//! - no transaction names both the wallet and the destination; the last two are the
//!   intermediate key's alone;
//! - owner signature checked by the enclave; bad input with its code; 403 for another account;
//! - the relay killed at each step: every shield still ends once.

use std::time::Duration;

use chain::Chain;
use e2e::swaps::SwapWorld;
use e2e::wallets::{
    OTHER_KEY, code, ephemeral, get, key_empty, newest_session, owned_wallet, post, post_signed, settle, signed, svc,
    world_with,
};
use e2e::{API_KEY, chain::address_of, chain::new_key};
use serde_json::{Value, json};
use shared::address::Address;

const USDC: u64 = 1_000_000;

async fn world() -> (SwapWorld, String) {
    world_with(json!({"wallets": {"shieldDelaySecs": [0, 1]}}), None).await
}

fn shield_body(w: &SwapWorld, amount: u64, destination: &Address) -> String {
    json!({"mint": w.usdc.to_string(), "amount": amount.to_string(), "destinationPubkey": destination.to_string()})
        .to_string()
}

/// The accounts a landed transaction names, and whether it succeeded.
async fn named(w: &SwapWorld, signature: &str) -> Vec<Address> {
    let landed = w.rpc.transaction(signature).await.unwrap().unwrap_or_else(|| panic!("{signature} not on chain"));
    assert!(landed.meta.as_ref().unwrap().err.is_none(), "{signature} failed on chain");
    landed.account_keys
}

/// The pool's SOL and stablecoin.
async fn pool_holds(w: &SwapWorld) -> (u64, u64) {
    let (_, statement) = get(w, &format!("/agents/v1/reserves?mint={}", w.usdc), None).await;
    let pool = Address::parse(statement["pool"].as_str().unwrap()).unwrap();
    (w.lamports(&pool).await, w.balance(&pool, &w.usdc).await)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_shield_pays_a_fresh_destination_through_an_intermediate_key_in_four_transactions() {
    let (w, hook) = world().await;
    let (id, wallet, owner) = owned_wallet(&w, &hook, 50 * USDC).await;
    let path = format!("/agents/v1/wallets/{id}/shield");
    let destination = address_of(&new_key());
    let body = shield_body(&w, 10 * USDC, &destination);

    // The enclave refuses without the owner, and over a body the relay changed.
    assert_eq!(code(&post(&w, &path, API_KEY, &body, None).await), (401, "owner_signature_required"));
    let (t, n, s) = signed(&owner, &path, &body, shared::time::unix_now(), "n-alter");
    let altered = body.replace(&destination.to_string(), &address_of(&new_key()).to_string());
    assert_eq!(code(&post(&w, &path, API_KEY, &altered, Some((&t, &n, &s))).await), (403, "owner_signature_invalid"));
    // Bad input, each with its code; nothing moved.
    let odd = post_signed(&w, &path, &owner, &shield_body(&w, 3 * USDC, &destination)).await;
    assert_eq!(code(&odd), (400, "invalid_amount"));
    assert!(odd.1["message"].as_str().unwrap().contains("10000000"), "{}", odd.1);
    assert_eq!(
        code(&post_signed(&w, &path, &owner, &shield_body(&w, 10 * USDC, &wallet)).await),
        (400, "invalid_field")
    );
    let missing = json!({"mint": w.usdc.to_string(), "amount": "10000000"}).to_string();
    assert_eq!(code(&post_signed(&w, &path, &owner, &missing).await), (400, "missing_required_fields"));
    let over = post_signed(&w, &path, &owner, &shield_body(&w, 100 * USDC, &destination)).await;
    assert_eq!(code(&over), (409, "insufficient_public_balance"));
    assert_eq!(code(&post(&w, &path, OTHER_KEY, &body, None).await), (403, "forbidden"));
    assert_eq!(w.balance(&wallet, &w.usdc).await, 50 * USDC);
    let (pool_sol, pool_usdc) = pool_holds(&w).await;

    // Through the CLI, signing as the owner from a keypair file.
    let owner_file = w.stack.dir.path().join("shield-owner.json");
    let mut pair = owner.to_bytes().to_vec();
    pair.extend_from_slice(&address_of(&owner).0);
    std::fs::write(&owner_file, serde_json::to_string(&pair).unwrap()).unwrap();
    let usdc = w.usdc.to_string();
    let owner_arg = owner_file.to_str().unwrap();
    let to = destination.to_string();
    let started = svc(
        &w,
        &["wallet", "shield", &id, "--mint", &usdc, "--amount", "10000000", "--to", &to, "--owner-key", owner_arg],
    );
    assert_eq!((started["status"].as_str(), started["estimatedSeconds"].as_u64()), (Some("running"), Some(60)));
    let session = settle(&w, started["sessionId"].as_str().unwrap()).await;
    assert_eq!(session["state"], "settled", "{session}");
    assert_eq!((session["mode"].as_str(), session["walletId"].as_str()), (Some("shield"), Some(id.as_str())));
    // `svc swap status` follows it too (a shield has no swap receipt).
    let status = svc(&w, &["swap", "status", session["id"].as_str().unwrap()]);
    assert_eq!((status["session"]["state"].as_str(), status["receipt"].is_null()), (Some("settled"), true));
    assert_eq!(w.balance(&destination, &w.usdc).await, 10 * USDC, "delivered once");
    assert_eq!(w.balance(&wallet, &w.usdc).await, 40 * USDC, "paid once");
    assert!(key_empty(&w, &session).await, "the intermediate key ends empty: {session}");
    let (sol_after, usdc_after) = pool_holds(&w).await;
    assert_eq!(usdc_after, pool_usdc, "the pool holds what it held");
    // The pool paid the fees and two token accounts' rent (the destination's, and its own on
    // its first deposit), nothing more: the intermediate key returned the rest.
    assert!(pool_sol - sol_after <= 2 * 2_039_280 + 6 * 5_000, "{pool_sol} -> {sol_after}");

    // Four transactions, each on chain; none names both the wallet and the destination; the
    // last two are the intermediate key's alone and never name the wallet.
    let hop = ephemeral(&session);
    let sigs: Vec<&str> = ["fundingTxSig", "swapTxSig", "finalTxSig", "closeTxSig"]
        .iter()
        .map(|f| session[*f].as_str().filter(|s| !s.is_empty()).unwrap_or_else(|| panic!("no {f}: {session}")))
        .collect();
    for signature in &sigs {
        let keys = named(&w, signature).await;
        assert!(!(keys.contains(&wallet) && keys.contains(&destination)), "{signature} links them");
    }
    for signature in &sigs[2..] {
        let keys = named(&w, signature).await;
        assert_eq!(keys.first(), Some(&hop), "{signature}: the intermediate key pays");
        assert!(!keys.contains(&wallet));
    }
    assert!(named(&w, sigs[1]).await.contains(&hop), "the hop pays the intermediate key");

    // The wallet's private balance is untouched; the statement balances.
    let statement = w.client().reserves(&usdc).await.unwrap();
    assert!(statement.solvent());
    assert_eq!(statement.liabilities, "0");
    // The audit log has the shield with its session and deposit; its events are queued.
    let (_, audit) = get(&w, &format!("/agents/v1/wallets/{id}/audit"), Some(API_KEY)).await;
    let shield = audit["entries"].as_array().unwrap().iter().find(|e| e["kind"] == "shield").unwrap().clone();
    assert_eq!(shield["details"]["sessionId"], session["id"], "{audit}");
    assert_eq!(shield["details"]["txSignature"], session["fundingTxSig"]);
    let (_, log) = get(&w, &format!("/agents/v1/wallets/{id}/webhooks"), Some(API_KEY)).await;
    let types: Vec<&str> =
        log["messages"].as_array().unwrap().iter().map(|m| m["eventType"].as_str().unwrap()).collect();
    for wanted in ["wallet.shield", "session.crediting", "session.hopped", "session.closing", "session.settled"] {
        assert!(types.contains(&wanted), "{wanted}: {log}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_shield_survives_a_relay_kill_at_each_step() {
    let (mut w, hook) = world().await;
    let (id, wallet, owner) = owned_wallet(&w, &hook, 100 * USDC).await;
    let path = format!("/agents/v1/wallets/{id}/shield");
    let mut paid = 0;
    for label in [
        "swap:deposit:sent",
        "privacy:step:stored",
        "privacy:step:released",
        "swap:saved:mixing",
        "swap:saved:hopping",
        "privacy:hop:recorded",
        "swap:shield_deliver:sent",
        "swap:saved:delivered",
        "swap:shield_close:sent",
    ] {
        tokio::task::block_in_place(|| w.stack.restart_relay(&[("SVC_RELAY_EXIT_AT", label)]));
        let destination = address_of(&new_key());
        // The relay may die before it answers: the session is found in the audit log.
        let answer = post_signed(&w, &path, &owner, &shield_body(&w, 10 * USDC, &destination)).await;
        assert!(answer.0 == 200 || answer.0 == 0, "{label}: {}", answer.1);
        let exited = tokio::task::block_in_place(|| w.stack.relay.wait_exit(Duration::from_secs(90)));
        assert!(exited.is_some_and(|s| !s.success()), "the relay did not stop at {label}");
        tokio::task::block_in_place(|| w.stack.restart_relay(&[]));
        let session: Value = settle(&w, &newest_session(&w, &id, "shield").await).await;
        assert_eq!(session["state"], "settled", "{label}: {session}");
        paid += 10 * USDC;
        assert_eq!(w.balance(&destination, &w.usdc).await, 10 * USDC, "{label}: delivered once");
        assert_eq!(w.balance(&wallet, &w.usdc).await, 100 * USDC - paid, "{label}: paid once");
        assert!(key_empty(&w, &session).await, "{label}: {session}");
        let statement = w.client().reserves(&w.usdc.to_string()).await.unwrap();
        assert_eq!((statement.liabilities.as_str(), statement.pool_balance.0), ("0", 0), "{label}");
    }
}
