//! Managed swaps (docs/wallets.md "Swap"), end to end on a real local chain (Surfpool), the
//! router stand-in, a real relay and a real enclave:
//! - the swap is a session the wallet funds: the destination receives the output once, the
//!   wallet pays the amount once, the session key ends empty, the receipt verifies;
//! - a swap the router cannot make is refunded to the wallet;
//! - the owner's signature is checked by the enclave (missing, or over a body the relay changed);
//! - bad input has its code; another account gets 403;
//! - the relay killed after sending the funding, and after recording it landed: one swap.

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

fn swap_body(w: &SwapWorld, amount: u64, destination: &Address) -> String {
    json!({"fromMint": w.usdc.to_string(), "toMint": w.token.to_string(), "amount": amount.to_string(),
           "destinationPubkey": destination.to_string(), "slippageBps": 50})
    .to_string()
}

async fn session_key_empty(w: &SwapWorld, session: &Value) -> bool {
    key_empty(w, session).await && w.balance(&ephemeral(session), &w.token).await == 0
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_managed_swap_pays_the_destination_once_and_a_failed_one_refunds_the_wallet() {
    let (w, hook) = world_with(json!({"maxAttempts": 1}), None).await;
    let (id, wallet, owner) = owned_wallet(&w, &hook, 50 * USDC).await;
    let path = format!("/agents/v1/wallets/{id}/swap");
    let destination = address_of(&new_key());
    let body = swap_body(&w, 10 * USDC, &destination);

    // The enclave refuses without the owner, and over a body the relay changed.
    assert_eq!(code(&post(&w, &path, API_KEY, &body, None).await), (401, "owner_signature_required"));
    let thief = address_of(&new_key());
    let (t, n, s) = signed(&owner, &path, &body, shared::time::unix_now(), "n-alter");
    let altered = body.replace(&destination.to_string(), &thief.to_string());
    assert_eq!(code(&post(&w, &path, API_KEY, &altered, Some((&t, &n, &s))).await), (403, "owner_signature_invalid"));
    // Bad input, each with its code; nothing moved.
    let to_self = swap_body(&w, 10 * USDC, &wallet);
    assert_eq!(code(&post_signed(&w, &path, &owner, &to_self).await), (400, "invalid_field"));
    let missing = json!({"fromMint": w.usdc.to_string(), "amount": "1000000"}).to_string();
    let refused = post_signed(&w, &path, &owner, &missing).await;
    assert_eq!(code(&refused), (400, "missing_required_fields"));
    assert!(refused.1["message"].as_str().unwrap().contains("toMint"), "{}", refused.1);
    let unlisted = body.replace(&w.token.to_string(), &address_of(&new_key()).to_string());
    assert_eq!(code(&post_signed(&w, &path, &owner, &unlisted).await), (400, "invalid_mint"));
    let too_much = swap_body(&w, 60 * USDC, &destination);
    assert_eq!(code(&post_signed(&w, &path, &owner, &too_much).await), (409, "insufficient_public_balance"));
    assert_eq!(code(&post(&w, &path, OTHER_KEY, &body, None).await), (403, "forbidden"));
    assert_eq!(code(&post(&w, &path, API_KEY, "not json", None).await), (400, "bad_request"));
    assert_eq!(w.balance(&wallet, &w.usdc).await, 50 * USDC);

    // Through the CLI, signing as the owner from a keypair file.
    let owner_file = w.stack.dir.path().join("swap-owner.json");
    let mut pair = owner.to_bytes().to_vec();
    pair.extend_from_slice(&address_of(&owner).0);
    std::fs::write(&owner_file, serde_json::to_string(&pair).unwrap()).unwrap();
    let (usdc, token) = (w.usdc.to_string(), w.token.to_string());
    let pool = w.client().reserves(&usdc).await.unwrap().pool;
    let rpc = &w.rpc;
    let sol = |who: Address| async move { rpc.balance(&who).await.unwrap() };
    let (pool_sol, wallet_sol) = (sol(pool).await, sol(wallet).await);
    let started = svc(
        &w,
        &[
            "wallet",
            "swap",
            &id,
            "--from-mint",
            &usdc,
            "--to-mint",
            &token,
            "--amount",
            "10000000",
            "--to",
            &destination.to_string(),
            "--slippage-bps",
            "50",
            "--owner-key",
            owner_file.to_str().unwrap(),
        ],
    );
    assert_eq!(started["status"], "running", "{started}");
    let session_id = started["sessionId"].as_str().unwrap();
    let session = settle(&w, session_id).await;
    assert_eq!(session["state"], "settled", "{session}");
    assert_eq!((session["mode"].as_str(), session["walletId"].as_str()), (Some("managed"), Some(id.as_str())));
    let out = w.balance(&destination, &w.token).await;
    assert_eq!(out.to_string(), session["actualOut"].as_str().unwrap(), "delivered once: {session}");
    let min_out: u64 = session["minOut"].as_str().unwrap().parse().unwrap();
    assert!(min_out > 0 && out >= min_out, "{out} against {min_out}");
    assert_eq!(w.balance(&wallet, &w.usdc).await, 40 * USDC, "the wallet paid once");
    assert!(session_key_empty(&w, &session).await, "{session}");
    // The session's SOL went back to the pool that funded it: the pool spent the fees and the
    // rent of the fresh destination's token account, and the wallet's SOL is untouched.
    let rent = w.rpc.minimum_balance_for_rent_exemption(165).await.unwrap();
    let spent = pool_sol - sol(pool).await;
    assert!(spent > rent && spent <= rent + 100_000, "the pool spent {spent} lamports (rent {rent})");
    assert_eq!(sol(wallet).await, wallet_sol);
    // The receipt, signed by the attested enclave, names the wallet's funding.
    let receipt = w.client().swap_receipt(session_id, None).await.unwrap();
    assert!(receipt.signer_attested);
    assert_eq!(receipt.receipt.actual_out, out.to_string());
    assert_eq!(Some(receipt.receipt.funding_tx_sig.as_str()), session["fundingTxSig"].as_str());
    assert_eq!(receipt.receipt.destination, destination.to_string());
    // The audit log's newest entry is the swap, with its session and funding.
    let (_, audit) = get(&w, &format!("/agents/v1/wallets/{id}/audit"), Some(API_KEY)).await;
    let newest = &audit["entries"][0];
    assert_eq!(newest["kind"], "swap", "{audit}");
    assert_eq!(newest["details"]["sessionId"].as_str(), Some(session_id));
    assert_eq!(newest["details"]["txSignature"], session["fundingTxSig"]);

    // Its webhook events: the swap, and one per state the session entered (queued in the
    // database with each state; their order within a millisecond is not kept).
    let (_, log) = get(&w, &format!("/agents/v1/wallets/{id}/webhooks"), Some(API_KEY)).await;
    let mut types: Vec<&str> =
        log["messages"].as_array().unwrap().iter().map(|m| m["eventType"].as_str().unwrap()).collect();
    types.retain(|t| *t == "wallet.swap" || t.starts_with("session."));
    types.sort_unstable();
    assert_eq!(
        types,
        [
            "session.delivered",
            "session.delivering",
            "session.funded",
            "session.settled",
            "session.swapped",
            "session.swapping",
            "wallet.swap"
        ],
        "{log}"
    );

    // A swap the router cannot make (its transaction pays less than it quoted): refunded whole
    // to the wallet.
    w.router.tamper(Some(standins::router::Tamper::OutputBelowQuote));
    let second = address_of(&new_key());
    let started = w
        .client()
        .wallet_swap(&id, &usdc, &token, &(5 * USDC).to_string(), &second.to_string(), None, Some(&owner))
        .await
        .unwrap();
    let session = settle(&w, started["sessionId"].as_str().unwrap()).await;
    w.router.tamper(None);
    assert_eq!(
        (session["state"].as_str(), session["reason"].as_str()),
        (Some("failed"), Some("slippage_exceeded")),
        "{session}"
    );
    assert!(!session["refundTxSig"].as_str().unwrap().is_empty(), "{session}");
    assert_eq!(w.balance(&wallet, &w.usdc).await, 40 * USDC, "refunded to the wallet");
    assert_eq!(w.balance(&second, &w.token).await, 0);
    assert!(session_key_empty(&w, &session).await, "{session}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_managed_swap_survives_relay_kills_around_its_funding() {
    let (mut w, hook) = world_with(json!({}), None).await;
    let (id, wallet, owner) = owned_wallet(&w, &hook, 50 * USDC).await;
    let mut paid = 0;
    for label in ["swap:fund:sent", "swap:saved:funded"] {
        tokio::task::block_in_place(|| w.stack.restart_relay(&[("SVC_RELAY_EXIT_AT", label)]));
        let destination = address_of(&new_key());
        let path = format!("/agents/v1/wallets/{id}/swap");
        // The relay may die before it answers: the session is found in the audit log.
        let answer = post_signed(&w, &path, &owner, &swap_body(&w, 10 * USDC, &destination)).await;
        assert!(answer.0 == 200 || answer.0 == 0, "{label}: {}", answer.1);
        let exited = tokio::task::block_in_place(|| w.stack.relay.wait_exit(Duration::from_secs(60)));
        assert!(exited.is_some_and(|s| !s.success()), "the relay did not stop at {label}");
        tokio::task::block_in_place(|| w.stack.restart_relay(&[]));
        let session = settle(&w, &newest_session(&w, &id, "swap").await).await;
        assert_eq!(session["state"], "settled", "{label}: {session}");
        paid += 10 * USDC;
        assert_eq!(w.balance(&wallet, &w.usdc).await, 50 * USDC - paid, "{label}: the wallet paid once");
        let out = w.balance(&destination, &w.token).await;
        assert_eq!(out.to_string(), session["actualOut"].as_str().unwrap(), "{label}: delivered once");
        assert!(session_key_empty(&w, &session).await, "{label}: {session}");
    }
}

/// The pool pays the SOL of swaps, shields and withdrawals, so an account starts at most
/// `dailyPoolOperations` of them a day: past it `429 rate_limited` (with `Retry-After`), nothing
/// moved; the same signed request resent is still answered (a retry is not a new operation).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_account_starts_at_most_its_daily_pool_operations() {
    let (w, hook) = world_with(json!({"wallets": {"dailyPoolOperations": 1}}), None).await;
    let (id, wallet, owner) = owned_wallet(&w, &hook, 50 * USDC).await;
    let path = format!("/agents/v1/wallets/{id}/swap");
    let body = swap_body(&w, 10 * USDC, &address_of(&new_key()));
    let (t, n, s) = signed(&owner, &path, &body, shared::time::unix_now(), "first");
    let first = post(&w, &path, API_KEY, &body, Some((&t, &n, &s))).await;
    assert_eq!(first.0, 200, "{}", first.1);
    let again = post(&w, &path, API_KEY, &body, Some((&t, &n, &s))).await;
    assert_eq!(again.1["sessionId"], first.1["sessionId"], "the retry is answered as before");
    let second = swap_body(&w, 10 * USDC, &address_of(&new_key()));
    let refused = post_signed(&w, &path, &owner, &second).await;
    assert_eq!(code(&refused), (429, "rate_limited"), "{}", refused.1);
    let withdraw = format!("/agents/v1/wallets/{id}/withdraw");
    let out = json!({"mint": w.usdc.to_string(), "amount": USDC.to_string(),
                     "destinationPubkey": address_of(&new_key()).to_string()})
    .to_string();
    assert_eq!(code(&post_signed(&w, &withdraw, &owner, &out).await), (429, "rate_limited"));
    let session = e2e::wallets::settle(&w, first.1["sessionId"].as_str().unwrap()).await;
    assert_eq!(session["state"], "settled", "{session}");
    assert_eq!(w.balance(&wallet, &w.usdc).await, 40 * USDC, "only the first swap moved anything");
}
