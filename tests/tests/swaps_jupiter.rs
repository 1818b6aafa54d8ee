//! One-shot swaps routed as Jupiter routes, end to end on the local chain (issue 27): the
//! enclave asks the router stand-in's `/swap/v2/build`, compiles the instructions with the
//! router's lookup table, checks them with the Jupiter rule set and signs a
//! `shared_accounts_route_v2` that the route program stand-in at Jupiter's id carries out with
//! real SPL Token transfers. Then the two ways it must not pay: a route whose minimum the pool
//! cannot meet fails on chain (6001) and the session refunds; a route the rules refuse is never
//! signed and the session refunds.

use std::time::Duration;

use chain::Chain;
use e2e::swaps::{POOL_TOKEN, POOL_USDC, SOL, SwapWorld, pool_out, token_account_rent, units};
use serde_json::json;
use shared::address::Address;
use shared::solana::Transaction;
use shared::solana::jupiter::{SharedRouteV2, shared_v2};
use shared::solana::programs::JUPITER_PROGRAM;
use shared::swap::funding;
use standins::router::Tamper;

const TEN_USDC: u64 = 10_000_000;
const FOLLOW: Duration = Duration::from_secs(90);

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_jupiter_route_settles_with_exact_balances_and_a_verified_receipt() {
    let w = SwapWorld::start_jupiter(json!({})).await;
    let payer = w.payer(SOL, 100_000_000).await;
    let pool = w.router.authority();
    let (usdc_before, lamports_before) = (w.balance(&payer.address, &w.usdc).await, w.lamports(&payer.address).await);
    let (id, checked, funding_sig) = w.run_session(&payer, TEN_USDC).await;
    let client = w.client();
    let session = client.follow(&id, FOLLOW).await.unwrap();
    assert_eq!(session["state"], "settled", "{session}");

    // The output is the route's quote, paid by the route program out of its pool.
    let out = units(&session["actualOut"]);
    assert_eq!(out, pool_out(POOL_USDC, POOL_TOKEN, TEN_USDC));
    assert!(out >= checked.terms.min_out);
    let destination = Address::parse(session["destinationPubkey"].as_str().unwrap()).unwrap();
    assert_eq!(w.balance(&destination, &w.token).await, out);
    assert_eq!(usdc_before - w.balance(&payer.address, &w.usdc).await, TEN_USDC);
    // Three transactions of one signature each (funding, the route, delivery) and the
    // destination account's rent; the session key's rent and fee budget came back.
    assert_eq!(lamports_before - w.lamports(&payer.address).await, 3 * 5_000 + token_account_rent(&w.rpc).await);
    assert_eq!(w.lamports(&checked.ephemeral).await, 0);
    for mint in [w.usdc, w.token] {
        assert!(w.rpc.account(&funding::token_account(&checked.ephemeral, &mint)).await.unwrap().is_none());
    }
    assert_eq!(w.balance(&pool, &w.usdc).await, POOL_USDC + TEN_USDC);
    assert_eq!(w.balance(&pool, &w.token).await, POOL_TOKEN - out);

    // The enclave asked `/swap/v2/build` for the session key, and what it signed is the v2
    // shared route, the session key its only signer, loading the pool's accounts from the
    // router's lookup table while the session's accounts and the output mint stay static.
    let builds: Vec<_> = w.router.requests().into_iter().filter(|r| r.path == "/swap/v2/build").collect();
    let taker = format!("taker={}", checked.ephemeral);
    assert!(builds.iter().any(|r| r.query.as_deref().is_some_and(|q| q.contains(&taker))), "{builds:?}");
    let swap_sig = session["swapTxSig"].as_str().unwrap();
    let landed = w.rpc.transaction(swap_sig).await.unwrap().unwrap();
    let tx = Transaction::parse(&landed.transaction).unwrap();
    let message = &tx.message;
    assert_eq!(message.signer_keys(), [checked.ephemeral]);
    assert_eq!(message.address_table_lookups().len(), 1);
    let route = message.instructions().iter().find(|ix| message.program_id(ix) == Some(&JUPITER_PROGRAM)).unwrap();
    let args = SharedRouteV2::decode(&route.data).unwrap();
    assert_eq!((args.in_amount, args.quoted_out_amount, args.platform_fee_bps), (TEN_USDC, out, 0));
    let slot = |n| message.instruction_account(route, n).copied();
    assert_eq!(slot(shared_v2::USER_TRANSFER_AUTHORITY), Some(checked.ephemeral));
    assert_eq!(slot(shared_v2::DESTINATION_MINT), Some(w.token));
    assert_eq!(slot(shared_v2::PROGRAM_AUTHORITY), None, "loaded from the table");

    let verified = client.swap_receipt(&id, Some((&checked.terms, &funding_sig))).await.unwrap();
    assert!(verified.signer_attested);
    assert_eq!(verified.receipt.actual_out, out.to_string());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_route_whose_minimum_the_pool_cannot_meet_fails_on_chain_and_refunds() {
    let w = SwapWorld::start_jupiter(json!({"maxAttempts": 2})).await;
    let payer = w.payer(SOL, 50_000_000).await;
    let pool = w.router.authority();
    let usdc_before = w.balance(&payer.address, &w.usdc).await;
    // The route promises twice what the pool holds: the enclave's check passes (it reads the
    // instruction's numbers) and the program refuses on chain, as Jupiter's does.
    w.router.tamper(Some(Tamper::QuoteAbovePool));
    let (id, checked, _) = w.run_session(&payer, TEN_USDC).await;
    let session = w.client().follow(&id, FOLLOW).await.unwrap();
    assert_eq!(
        (session["state"].as_str(), session["reason"].as_str()),
        (Some("failed"), Some("swap_failed")),
        "{session}"
    );
    // No route landed (the node's preflight runs the program, which fails with 6001 as in
    // tests/route_program.rs): the session key's history is its funding and its refund.
    let history = w.rpc.signatures_for_address(&checked.ephemeral, None, 20).await.unwrap();
    assert_eq!(history.len(), 2, "{history:?}");
    assert!(history.iter().all(|s| s.err.is_none()), "{history:?}");
    let refund = session["refundTxSig"].as_str().unwrap();
    assert!(history.iter().any(|s| s.signature == refund), "{history:?}");
    assert_eq!(w.balance(&payer.address, &w.usdc).await, usdc_before);
    let destination = Address::parse(session["destinationPubkey"].as_str().unwrap()).unwrap();
    assert_eq!(w.balance(&destination, &w.token).await, 0);
    assert_eq!((w.balance(&pool, &w.usdc).await, w.balance(&pool, &w.token).await), (POOL_USDC, POOL_TOKEN));
    assert_eq!(w.lamports(&checked.ephemeral).await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_route_the_rules_refuse_is_never_signed_and_the_session_refunds() {
    let w = SwapWorld::start_jupiter(json!({"maxAttempts": 2})).await;
    let payer = w.payer(SOL, 50_000_000).await;
    let pool = w.router.authority();
    let (usdc_before, lamports_before) = (w.balance(&payer.address, &w.usdc).await, w.lamports(&payer.address).await);
    // A second transfer of the input out of the session key beside the route.
    w.router.tamper(Some(Tamper::ExtraTransferOutOfUser));
    let (id, checked, _) = w.run_session(&payer, TEN_USDC).await;
    let session = w.client().follow(&id, FOLLOW).await.unwrap();
    assert_eq!(
        (session["state"].as_str(), session["reason"].as_str()),
        (Some("failed"), Some("router_transaction_refused")),
        "{session}"
    );
    assert_eq!(session["swapTxSig"], "", "nothing was signed");
    // Everything back but the funding's and the refund's fees; the pool untouched.
    assert_eq!(w.balance(&payer.address, &w.usdc).await, usdc_before);
    assert_eq!(lamports_before - w.lamports(&payer.address).await, 10_000);
    assert_eq!((w.balance(&pool, &w.usdc).await, w.balance(&pool, &w.token).await), (POOL_USDC, POOL_TOKEN));
    assert_eq!(w.lamports(&checked.ephemeral).await, 0);
}
