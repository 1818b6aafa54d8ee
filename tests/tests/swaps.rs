//! One-shot private swaps end to end on a real local chain (Surfpool) with the router stand-in
//! moving real tokens: the happy path to a verified receipt with exact balances, refunds after
//! a router failure and after expiry, wrong fundings refused with their codes, twenty sessions
//! at once, and a relay that rewrites the destination caught by the client before funding.

use std::time::Duration;

use chain::Chain;
use client::swap::{Limits, fund};
use e2e::chain::{address_of, new_key};
use e2e::http::get;
use e2e::swaps::{SOL, SwapWorld, pool_out, token_account_rent, units};
use serde_json::{Value, json};
use shared::address::Address;
use shared::swap::funding;

const TEN_USDC: u64 = 10_000_000;
const FOLLOW: Duration = Duration::from_secs(90);

async fn post(url: &str, body: Value) -> (u16, Value) {
    e2e::http::post(url, &body, Some(e2e::API_KEY)).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_oneshot_swap_settles_with_exact_balances_and_a_verified_receipt() {
    let w = SwapWorld::start(json!({})).await;
    let payer = w.payer(SOL, 100_000_000).await;
    let client = w.client();

    // The quote: the pool's constant product, less the spread, bucketed.
    let quote = client.swap_quote(&w.usdc.to_string(), &w.token.to_string(), "10000000", Some(100)).await.unwrap();
    let raw = pool_out(e2e::swaps::POOL_USDC, e2e::swaps::POOL_TOKEN, TEN_USDC);
    assert_eq!(units(&quote["rawRouteOut"]), raw, "{quote}");
    assert_eq!(units(&quote["expectedOut"]), raw * 9_970 / 10_000, "30 bps less, rounded down: {quote}");
    assert_eq!((quote["spreadBps"].as_u64(), quote["slippageBps"].as_u64()), (Some(30), Some(100)));
    assert_eq!((quote["bucketed"].as_bool(), quote["bucketLabel"].as_str()), (Some(true), Some("10 USDC")));
    assert_eq!((quote["nearestBucket"].as_str(), quote["routePlanLength"].as_u64()), (Some("10000000"), Some(1)));
    assert!(quote["privacyNotes"].as_str().unwrap().contains("standard denomination"));
    let own = client::swap::own_floor(&w.router_url, &w.request(&payer, TEN_USDC)).await.unwrap();
    assert_eq!(own, (u128::from(raw) * 9_800 / 10_000) as u64, "the router's quote less 100 bps slippage, 100 spread");

    let (usdc_before, lamports_before) = (w.balance(&payer.address, &w.usdc).await, w.lamports(&payer.address).await);
    let pool = w.router.authority();
    let (pool_usdc, pool_token) = (w.balance(&pool, &w.usdc).await, w.balance(&pool, &w.token).await);
    let (id, checked, funding_sig) = w.run_session(&payer, TEN_USDC).await;
    assert!(checked.start.bucketed);
    let now = shared::time::unix_now();
    assert!(shared::time::parse_rfc3339(&checked.start.expires_at).unwrap() > now);
    let session = client.follow(&id, FOLLOW).await.unwrap();
    assert_eq!(session["state"], "settled", "{session}");

    // §2.10, field by field.
    let destination = Address::parse(session["destinationPubkey"].as_str().unwrap()).unwrap();
    let out = units(&session["actualOut"]);
    assert_eq!(session["id"], id.as_str());
    assert_eq!(session["mode"], "oneshot");
    assert_eq!(session["walletId"], Value::Null);
    assert_eq!(session["ephemeralPubkey"], checked.ephemeral.to_string().as_str());
    assert_eq!(session["fromMint"], w.usdc.to_string().as_str());
    assert_eq!(session["toMint"], w.token.to_string().as_str());
    assert_eq!(session["amountBaseUnits"], "10000000");
    assert_eq!(session["fundingTxSig"], funding_sig.as_str());
    assert!(session["finalTxSig"].as_str().unwrap().len() > 80);
    assert!(out >= checked.terms.min_out && out == raw, "actualOut {out}, quoted {raw}");

    // The chain agrees: the destination holds the output, the payer paid the amount and the
    // fees (funding, swap with the pool's co-signature, delivery) and the destination
    // account's rent; everything else came back; the session key is empty and closed.
    assert_eq!(w.balance(&destination, &w.token).await, out);
    assert_eq!(usdc_before - w.balance(&payer.address, &w.usdc).await, TEN_USDC);
    assert_eq!(
        lamports_before - w.lamports(&payer.address).await,
        5_000 + 10_000 + 5_000 + token_account_rent(&w.rpc).await
    );
    assert_eq!(w.lamports(&checked.ephemeral).await, 0);
    for mint in [w.usdc, w.token] {
        assert!(w.rpc.account(&funding::token_account(&checked.ephemeral, &mint)).await.unwrap().is_none());
    }
    assert_eq!(w.balance(&pool, &w.usdc).await, pool_usdc + TEN_USDC);
    assert_eq!(w.balance(&pool, &w.token).await, pool_token - out);

    // The receipt: signed by the attested enclave, for the committed terms and this funding.
    let verified = client.swap_receipt(&id, Some((&checked.terms, &funding_sig))).await.unwrap();
    assert!(verified.signer_attested);
    let receipt = verified.receipt;
    assert_eq!(
        (receipt.actual_out.as_str(), receipt.address.as_str()),
        (session["actualOut"].as_str().unwrap(), session["attestationPda"].as_str().unwrap())
    );
    let base = &w.stack.relay_url;
    let (status, view) = get(&format!("{base}/agents/v1/attestations/{id}")).await;
    assert_eq!(status, 200, "{view}");
    assert_eq!(view["swap"]["finalTxSig"], session["finalTxSig"]);
    assert_eq!(
        view["explorer"]["finalTx"],
        format!("https://explorer.solana.com/tx/{}", receipt.final_tx_sig).as_str()
    );
    let commit = view["attestationTxSig"].as_str().unwrap();
    assert_eq!(view["explorer"]["attestation"], format!("{base}/attestation/by-tx/{commit}").as_str());
    // The receipt is a leaf of the transparency log, appended with its commit (docs/log.md).
    let entry = shared::tlog::entry::swap(&receipt).unwrap();
    let logged = client.log_proof(&entry, None).await.unwrap();
    let (status, entries) =
        get(&format!("{base}/log/v1/entries?start={0}&end={1}", logged.leaf_index, logged.leaf_index + 1)).await;
    assert_eq!(status, 200, "{entries}");
    assert_eq!(entries["entries"][0]["address"], receipt.address.as_str());
    assert_eq!(entries["entries"][0]["entry"], hex::encode(&entry).as_str());

    // Execute again with the same funding: the same answer, nothing moves.
    let again = client.execute_oneshot(&id, &funding_sig).await.unwrap();
    assert_eq!(again["status"], "running");
    assert_eq!(client.session(&id).await.unwrap()["state"], "settled");

    // The funding counts in its bucket's anonymity set.
    let (status, set) = get(&format!("{base}/agents/v1/anonymity-set?mint={}&amount=10000000", w.usdc)).await;
    assert_eq!(status, 200, "{set}");
    let ten = set["buckets"].as_array().unwrap().iter().find(|b| b["amount"] == "10000000").unwrap();
    assert_eq!((ten["label"].as_str(), ten["count"].as_i64()), (Some("10 USDC"), Some(1)));
    assert_eq!((set["requested"]["bucketed"].as_bool(), set["requested"]["count"].as_i64()), (Some(true), Some(1)));
    assert_eq!((set["symbol"].as_str(), set["windowHours"].as_u64()), (Some("USDC"), Some(24)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_router_failure_after_funding_refunds_the_payer() {
    let w = SwapWorld::start(json!({"maxAttempts": 2})).await;
    let payer = w.payer(SOL, 50_000_000).await;
    let client = w.client();
    let request = w.request(&payer, TEN_USDC);
    let start = client.start_oneshot(&request).await.unwrap();
    let checked = client.check_start(start, &request, Limits::default()).await.unwrap();
    let (usdc_before, lamports_before) = (w.balance(&payer.address, &w.usdc).await, w.lamports(&payer.address).await);
    let funding_sig = fund(&w.rpc, &checked, &payer.key).await.unwrap();
    // The router goes down between the funding and the swap.
    w.router.fail_with(Some(standins::Failure::Status(503)));
    let id = checked.start.session_id.clone();
    client.execute_oneshot(&id, &funding_sig).await.unwrap();
    let session = client.follow(&id, FOLLOW).await.unwrap();
    assert_eq!(
        (session["state"].as_str(), session["reason"].as_str()),
        (Some("failed"), Some("router_error")),
        "{session}"
    );
    assert!(session["refundTxSig"].as_str().unwrap().len() > 80);
    assert_eq!((session["finalTxSig"].as_str(), session["actualOut"].as_str()), (Some(""), Some("")));
    // Everything back but two fees (the funding's and the refund's).
    assert_eq!(w.balance(&payer.address, &w.usdc).await, usdc_before);
    assert_eq!(lamports_before - w.lamports(&payer.address).await, 10_000);
    assert_eq!(w.lamports(&checked.ephemeral).await, 0);
    let destination = Address::parse(&request.destination_pubkey).unwrap();
    assert_eq!(w.balance(&destination, &w.token).await, 0);
    let (status, body) = get(&format!("{}/agents/v1/attestations/{id}", w.stack.relay_url)).await;
    assert_eq!((status, body["error"].as_str()), (404, Some("not_found")), "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn expired_sessions_fail_and_late_fundings_are_refunded() {
    // Sessions live two seconds; the funding transaction handed out lives on until its
    // blockhash expires (about 11 s on the local chain).
    let w = SwapWorld::start(json!({"blockhashLifetimeSecs": 2})).await;
    let client = w.client();
    let never = w.payer(SOL, TEN_USDC).await;
    let late = w.payer(SOL, TEN_USDC).await;
    let silent = w.payer(SOL, TEN_USDC).await;
    let mut sessions = Vec::new();
    for payer in [&never, &late, &silent] {
        let request = w.request(payer, TEN_USDC);
        let start = client.start_oneshot(&request).await.unwrap();
        sessions.push(client.check_start(start, &request, Limits::default()).await.unwrap());
    }
    tokio::time::sleep(Duration::from_secs(3)).await;
    // Past expiry, the client refuses to fund on its own.
    let request = w.request(&never, TEN_USDC);
    let start = client.start_oneshot(&request).await.unwrap();
    let expires = shared::time::parse_rfc3339(&start.expires_at).unwrap();
    assert!(client::swap::check_terms(&start, &request, Limits::default(), expires).is_err());
    // `late` funds after expiry and executes; `silent` funds after expiry and never executes.
    let late_sig = fund(&w.rpc, &sessions[1], &late.key).await.unwrap();
    fund(&w.rpc, &sessions[2], &silent.key).await.unwrap();
    client.execute_oneshot(&sessions[1].start.session_id, &late_sig).await.unwrap();
    for (checked, payer) in sessions.iter().zip([&never, &late, &silent]) {
        let session = client.follow(&checked.start.session_id, FOLLOW).await.unwrap();
        assert_eq!(
            (session["state"].as_str(), session["reason"].as_str()),
            (Some("failed"), Some("expired")),
            "{session}"
        );
        let refunded = !session["refundTxSig"].as_str().unwrap().is_empty();
        assert_eq!(refunded, !std::ptr::eq(payer, &never), "{session}");
        assert_eq!(w.balance(&payer.address, &w.usdc).await, TEN_USDC, "{session}");
        assert_eq!(w.lamports(&checked.ephemeral).await, 0);
    }
}

/// Signs and sends `tx` for `payer` without preflight (so a transaction that fails lands
/// failed); returns its signature once the chain has it.
async fn send_unchecked(
    w: &SwapWorld,
    mut tx: shared::solana::Transaction,
    signer: &ed25519_dalek::SigningKey,
) -> String {
    tx.sign(&[signer]).unwrap();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "sendTransaction",
                      "params": [shared::b64::encode(tx.serialize()), {"encoding": "base64", "skipPreflight": true}]});
    let answer: Value =
        reqwest::Client::new().post(&w.chain.rpc_url).json(&body).send().await.unwrap().json().await.unwrap();
    let signature = answer["result"].as_str().unwrap_or_else(|| panic!("{answer}")).to_string();
    for _ in 0..100 {
        if w.rpc.transaction(&signature).await.unwrap().is_some() {
            return signature;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{signature} did not land");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn wrong_fundings_are_refused_with_their_codes_and_the_right_one_still_settles() {
    let w = SwapWorld::start(json!({})).await;
    let client = w.client();
    // Everyone first: a session's funding must land within its blockhash's life (~11 s here).
    let payer = w.payer(SOL, 100_000_000).await;
    let other = w.chain.create_mint(6).await;
    w.chain.mint_to(&other, &payer.address, TEN_USDC).await;
    let stranger = w.payer(SOL, TEN_USDC).await;
    let poor = w.payer(SOL, 1_000_000).await;
    let other_payer = w.payer(SOL, 100_000_000).await;
    let (other_id, _, used) = w.run_session(&other_payer, TEN_USDC).await;

    let request = w.request(&payer, TEN_USDC);
    let start = client.start_oneshot(&request).await.unwrap();
    let target = client.check_start(start, &request, Limits::default()).await.unwrap();
    let id = target.start.session_id.clone();
    let blockhash = w.rpc.latest_blockhash().await.unwrap().blockhash;
    let execute = |id: String, sig: String| {
        let url = format!("{}/agents/v1/swaps/oneshot/{id}/execute", w.stack.relay_url);
        async move { post(&url, json!({"fundingTxSig": sig})).await }
    };
    let refused = |(status, body): (u16, Value), code: &str| {
        assert_eq!((status, body["error"].as_str()), (400, Some(code)), "{body}");
    };
    let terms = target.terms;
    let wrong = |t: shared::swap::ParsedTerms| funding::build(&t, &target.ephemeral, 6, target.lamports, blockhash);

    // One base unit short.
    let short = wrong(shared::swap::ParsedTerms { amount: TEN_USDC - 1, ..terms });
    refused(execute(id.clone(), send_unchecked(&w, short, &payer.key).await).await, "funding_wrong_amount");
    // Another mint (neither side of the swap), to the session key, with the session's memo.
    let wrong_mint = wrong(shared::swap::ParsedTerms { from_mint: other, ..terms });
    refused(execute(id.clone(), send_unchecked(&w, wrong_mint, &payer.key).await).await, "funding_wrong_mint");
    // Someone else pays, with the session's memo.
    let wrong_payer = wrong(shared::swap::ParsedTerms { payer: stranger.address, ..terms });
    refused(execute(id.clone(), send_unchecked(&w, wrong_payer, &stranger.key).await).await, "funding_wrong_payer");
    // A signature that already funded another session.
    let (status, body) = execute(id.clone(), used).await;
    assert_eq!((status, body["error"].as_str()), (409, Some("funding_already_used")), "{body}");

    // Still waiting; the right funding settles it. What the wrong ones put in the session key's
    // input account (one unit short of ten from the payer, ten from the stranger) goes to the
    // session's payer with the delivery: the session key pays only the destination or the payer.
    assert_eq!(client.session(&id).await.unwrap()["state"], "awaiting_funding");
    let usdc_before = w.balance(&payer.address, &w.usdc).await;
    let good = fund(&w.rpc, &target, &payer.key).await.unwrap();
    client.execute_oneshot(&id, &good).await.unwrap();
    let session = client.follow(&id, FOLLOW).await.unwrap();
    assert_eq!(session["state"], "settled", "{session}");
    assert_eq!(w.balance(&payer.address, &w.usdc).await, usdc_before - TEN_USDC + (TEN_USDC - 1) + TEN_USDC);
    assert_eq!(client.follow(&other_id, FOLLOW).await.unwrap()["state"], "settled");

    // A funding that failed on chain: a payer without the tokens.
    let poor_request = w.request(&poor, TEN_USDC);
    let poor_start = client.start_oneshot(&poor_request).await.unwrap();
    let poor_session = client.check_start(poor_start, &poor_request, Limits::default()).await.unwrap();
    let poor_id = poor_session.start.session_id.clone();
    let failed = send_unchecked(&w, poor_session.funding.clone(), &poor.key).await;
    refused(execute(poor_id.clone(), failed).await, "funding_failed");
    // A signature the chain never saw (the relay waits a while for it first).
    let (status, body) = execute(poor_id.clone(), bs58::encode([7u8; 64]).into_string()).await;
    assert_eq!((status, body["error"].as_str()), (404, Some("funding_not_found")), "{body}");
    assert_eq!(client.session(&poor_id).await.unwrap()["state"], "awaiting_funding");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn twenty_sessions_in_parallel_all_settle() {
    let w = SwapWorld::start(json!({})).await;
    let mut payers = Vec::new();
    for _ in 0..20 {
        payers.push(w.payer(SOL, TEN_USDC).await);
    }
    let pool = w.router.authority();
    let pool_usdc = w.balance(&pool, &w.usdc).await;
    let runs = payers.iter().map(|p| w.run_session(p, TEN_USDC));
    let started = e2e::join_all(runs).await;
    let mut delivered = 0;
    for (id, checked, _) in &started {
        let session = w.client().follow(id, FOLLOW).await.unwrap();
        assert_eq!(session["state"], "settled", "{session}");
        assert_eq!(w.balance(&checked.terms.destination, &w.token).await, units(&session["actualOut"]));
        delivered += units(&session["actualOut"]);
    }
    assert_eq!(w.balance(&pool, &w.usdc).await, pool_usdc + 20 * TEN_USDC);
    assert!(delivered > 0);
    for p in &payers {
        assert_eq!(w.balance(&p.address, &w.usdc).await, 0);
    }
}

/// A relay that asks the enclave for a session to its own destination gets a validly signed
/// commitment, for the wrong terms: the client refuses it before signing anything. A relay
/// that edits the commitment breaks its signature.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_relay_that_changes_the_destination_is_caught_before_funding() {
    let w = SwapWorld::start(json!({})).await;
    let payer = w.payer(SOL, TEN_USDC).await;
    let client = w.client();
    let request = w.request(&payer, TEN_USDC);
    let thief = address_of(&new_key()).to_string();

    // The relay's own request to the enclave (what a dishonest relay would send).
    let swapped = client::swap::OneshotRequest { destination_pubkey: thief.clone(), ..request.clone() };
    let start = client.start_oneshot(&swapped).await.unwrap();
    assert_eq!(start.commitment.terms.destination, thief);
    let err = client.check_start(start, &request, Limits::default()).await.unwrap_err();
    assert!(err.to_string().contains("not for the swap asked"), "{err}");

    // The relay edits the answer instead.
    let mut edited = client.start_oneshot(&request).await.unwrap();
    edited.commitment.terms.destination = thief;
    let err = client.check_start(edited, &request, Limits::default()).await.unwrap_err();
    assert!(err.to_string().contains("signature does not verify"), "{err}");

    // A funding transaction that pays someone else is caught too.
    let mut honest = client.start_oneshot(&request).await.unwrap();
    let checked_terms = honest.commitment.terms.parse().unwrap();
    let elsewhere = address_of(&new_key());
    let blockhash = w.rpc.latest_blockhash().await.unwrap().blockhash;
    honest.funding_tx =
        shared::b64::encode(funding::build(&checked_terms, &elsewhere, 6, 1_000_000, blockhash).serialize());
    assert!(client.check_start(honest, &request, Limits::default()).await.is_err());
    // Nothing moved.
    assert_eq!(w.balance(&payer.address, &w.usdc).await, TEN_USDC);
}
