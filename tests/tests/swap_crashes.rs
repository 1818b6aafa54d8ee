//! Nothing is lost: the relay aborted (as by SIGKILL) at each step of a swap session, and the
//! enclave restarted (new keys, provisioned again) before the session goes on. Each session
//! still ends exactly once: the destination receives the output once, the payer pays the
//! amount once (or gets it all back), the pool swaps once, the session key ends empty.
//!
//! The relay's crash points (`SVC_RELAY_EXIT_AT`, relay feature `failpoints`) sit after each
//! durable record and between signing, sending and recording a transaction.

use std::time::Duration;

use client::swap::{Limits, fund};
use e2e::swaps::{SOL, SwapWorld};
use serde_json::json;
use shared::address::Address;

const TEN_USDC: u64 = 10_000_000;

/// Runs one session with the relay set to abort at `label`, then brings everything back and
/// checks the books and the chain.
async fn crash_at(w: &mut SwapWorld, label: &str, refund: bool) {
    tokio::task::block_in_place(|| w.stack.restart_relay(&[("SVC_RELAY_EXIT_AT", label)]));
    w.router.fail_with(None);
    let payer = w.payer(SOL, TEN_USDC).await;
    let client = w.client();
    let request = w.request(&payer, TEN_USDC);
    let start = client.start_oneshot(&request).await.unwrap();
    let checked = client.check_start(start, &request, Limits::default()).await.unwrap();
    let id = checked.start.session_id.clone();
    let lamports_before = w.lamports(&payer.address).await;
    let pool = w.router.authority();
    let (pool_usdc, pool_token) = (w.balance(&pool, &w.usdc).await, w.balance(&pool, &w.token).await);
    let funding = fund(&w.rpc, &checked, &payer.key).await.unwrap();
    // For a refund, the router goes down once the session is funded.
    w.router.fail_with(refund.then_some(standins::Failure::Status(503)));
    // The execute that crashes the relay at `swap:funding:recorded` gets no answer.
    let _ = client.execute_oneshot(&id, &funding).await;

    let exited = tokio::task::block_in_place(|| w.stack.relay.wait_exit(Duration::from_secs(60)));
    assert!(exited.is_some_and(|s| !s.success()), "the relay did not stop at {label}: {}", w.stack.relay.log_text());
    // The enclave goes away too; the relay comes back first and finds it gone, then a new
    // enclave boots and is provisioned.
    w.stack.enclave.stop();
    tokio::task::block_in_place(|| w.stack.restart_relay(&[]));
    tokio::time::sleep(Duration::from_millis(500)).await;
    tokio::task::block_in_place(|| w.stack.restart_enclave());
    // The client, told nothing, executes again: the same answer.
    assert_eq!(client.execute_oneshot(&id, &funding).await.unwrap()["status"], "running", "{label}");

    let session = client.follow(&id, Duration::from_secs(120)).await.unwrap();
    let destination = Address::parse(&request.destination_pubkey).unwrap();
    let out = w.balance(&destination, &w.token).await;
    let spent = lamports_before - w.lamports(&payer.address).await;
    if refund {
        assert_eq!(
            (session["state"].as_str(), session["reason"].as_str()),
            (Some("failed"), Some("router_error")),
            "{label}: {session}"
        );
        assert_eq!(w.balance(&payer.address, &w.usdc).await, TEN_USDC, "{label}");
        assert_eq!((out, spent), (0, 10_000), "{label}: only the funding's and the refund's fees");
        assert_eq!(w.balance(&pool, &w.usdc).await, pool_usdc, "{label}");
    } else {
        assert_eq!(session["state"], "settled", "{label}: {session}");
        assert_eq!(out.to_string(), session["actualOut"].as_str().unwrap(), "{label}: delivered once");
        assert_eq!(w.balance(&payer.address, &w.usdc).await, 0, "{label}");
        assert_eq!(w.balance(&pool, &w.usdc).await, pool_usdc + TEN_USDC, "{label}: swapped once");
        assert_eq!(w.balance(&pool, &w.token).await, pool_token - out, "{label}");
        let receipt = client.swap_receipt(&id, Some((&checked.terms, &funding))).await.unwrap();
        assert_eq!(receipt.receipt.actual_out, out.to_string());
    }
    assert_eq!(w.lamports(&checked.ephemeral).await, 0, "{label}: the session key ends empty");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_settling_session_survives_a_crash_at_every_step() {
    let mut w = SwapWorld::start(json!({})).await;
    for label in [
        "swap:funding:recorded",
        "swap:swap:signed",
        "swap:saved:swapping",
        "swap:swap:sent",
        "swap:saved:swapped",
        "swap:deliver:signed",
        "swap:saved:delivering",
        "swap:deliver:sent",
        "swap:saved:delivered",
        "swap:receipt:committed",
        "swap:saved:settled",
    ] {
        crash_at(&mut w, label, false).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_refunding_session_survives_a_crash_at_every_step() {
    let mut w = SwapWorld::start(json!({"maxAttempts": 1})).await;
    for label in ["swap:saved:refunding", "swap:refund:signed", "swap:refund:sent", "swap:saved:failed"] {
        crash_at(&mut w, label, true).await;
    }
}
