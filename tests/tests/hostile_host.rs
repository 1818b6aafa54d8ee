//! The host that runs the enclave tries to take funds (DESIGN §13, issue 24). The test plays it:
//! it holds the relay's database, calls the enclave's internal API itself and carries the
//! enclave's messages to the freshness witness (the key holder) as it likes. Each attack must
//! fail with its code, and the chain must show what the books say, to the base unit. On the
//! real local chain (Surfpool), a real relay and real enclaves; SQLite and PostgreSQL.
//!
//! - N concurrent withdrawals of one balance from one book (2, 4, 8): one payout;
//! - sibling books (one deposit credited twice from one parent; a withdrawal from each);
//! - an old book after an enclave restart;
//! - two enclaves given one book;
//! - a captured owner request replayed after a restart;
//! - a lost answer: the same signed bytes again, before and after a restart; the same nonce
//!   over another body.

use std::time::Duration;

use chain::{Chain, Commitment, Confirmation};
use e2e::host::{Host, OwnedWallet, owner_request, proposal, refusal, withdrawal, witnessed};
use e2e::swaps::SwapWorld;
use e2e::wallets::{WAIT, owned_wallet, settle, svc, svc_output};
use e2e::{chain::address_of, chain::new_key};
use ed25519_dalek::SigningKey;
use serde_json::{Value, json};
use shared::address::Address;
use shared::privacy::PrivacyRequest;
use shared::time::unix_now;

const USDC: u64 = 1_000_000;

/// A world whose relay keeps its rows in `database_url` (else SQLite), with `extra` enclaves.
async fn world(database_url: Option<String>, extra: usize) -> (SwapWorld, String, Host) {
    let port = e2e::free_port();
    let mut relay = json!({"apiKeys": [e2e::API_KEY]});
    if let Some(url) = &database_url {
        relay["databaseUrl"] = json!(url);
    }
    let agents = json!({"wallets": {"webhookAllow": [format!("127.0.0.1:{port}")], "pollMillis": 200}});
    let w = SwapWorld::start_tuned(agents, |_, _, _| relay, None, |o| o.extra_enclaves = extra).await;
    let host = Host::of(&w, database_url.as_deref()).await;
    (w, format!("http://127.0.0.1:{port}/hook"), host)
}

/// An owned wallet with `private` base units encrypted through the relay (the honest path).
async fn funded(w: &SwapWorld, hook: &str, private: u64) -> (String, Address, SigningKey) {
    let (id, address, owner) = owned_wallet(w, hook, private).await;
    let started = w.client().wallet_encrypt(&id, &w.usdc.to_string(), &private.to_string(), Some(&owner)).await;
    let session = settle(w, started.unwrap()["sessionId"].as_str().unwrap()).await;
    assert_eq!(session["state"], "settled", "{session}");
    (id, address, owner)
}

/// Sends a transaction the enclave signed (a payout it released, a deposit) and waits for the
/// chain's verdict.
async fn land(w: &SwapWorld, signed: &Value) {
    let bytes = shared::b64::decode(signed["transaction"].as_str().unwrap()).unwrap();
    let signature = w.rpc.send_transaction(&bytes).await.unwrap();
    let height = signed["lastValidBlockHeight"].as_u64().unwrap();
    let verdict = chain::confirm(&w.rpc, &signature, height, Commitment::Confirmed, WAIT).await.unwrap();
    assert_eq!(verdict, Confirmation::Confirmed);
}

/// The statement of reserves balances against the chain: the pool holds exactly what it owes.
async fn books_match_chain(w: &SwapWorld, owed: u64) {
    let statement = w.client().reserves(&w.usdc.to_string()).await.unwrap();
    let pool = statement.pool;
    let held = w.balance(&pool, &w.usdc).await;
    assert_eq!((statement.liabilities, statement.pool_balance.0, held), (owed.to_string(), owed, owed));
}

fn withdraw_path(id: &str) -> String {
    format!("/agents/v1/wallets/{id}/withdraw")
}

/// 2, 4 and 8 withdrawals of a whole balance, each signed by the owner, sent to the enclave at
/// once with the same book: each seals a successor, the witness appends one, and only that one
/// gives out a payout. A bystander's balance stays backed to the base unit.
async fn concurrent_withdrawals(database_url: Option<String>) {
    let (w, hook, host) = world(database_url, 0).await;
    let usdc = w.usdc.to_string();
    funded(&w, &hook, 3 * USDC).await;
    let port = w.stack.enclave_port;
    for n in [2usize, 4, 8] {
        let (id, _, owner) = funded(&w, &hook, 2 * USDC).await;
        let wallet = OwnedWallet::of(&host, &id, &owner, &usdc).await;
        let (book, version) = host.book(&usdc).await.unwrap();
        let destinations: Vec<Address> = (0..n).map(|_| address_of(&new_key())).collect();
        let steps: Vec<PrivacyRequest> = (destinations.iter().enumerate())
            .map(|(i, d)| wallet.withdraw((2 * USDC, d), (unix_now(), &format!("n{n}-{i}")), Some(&book)))
            .collect();
        let answers = e2e::join_all(steps.iter().map(|s| host.step(port, s))).await;
        // Each is a sealed successor and a request to the witness; nothing is given out yet.
        let proposals: Vec<_> = answers.iter().map(proposal).collect();
        for a in &answers {
            assert!(a.1.get("transaction").is_none() && a.1.get("order").is_none(), "given out early: {}", a.1);
        }
        let verdicts: Vec<_> = proposals.iter().map(|(_, append)| w.stack.witness.answer(append).unwrap()).collect();
        assert_eq!(verdicts.iter().filter(|v| v.appended()).count(), 1, "the witness appends one successor");
        let winner = verdicts.iter().position(|v| v.appended()).unwrap();
        let mut released = Vec::new();
        for (i, ((blob, _), verdict)) in proposals.iter().zip(&verdicts).enumerate() {
            let answer = host.step(port, &witnessed(Some(blob), verdict)).await;
            match i == winner {
                true => released.push(answer),
                false => {
                    assert_eq!(refusal(&answer), (409, "book_stale".into()), "n={n}: a refused sibling");
                    // A sibling presented with the winner's acknowledgement.
                    let forged = host.step(port, &witnessed(Some(blob), &verdicts[winner])).await;
                    assert_eq!(refusal(&forged), (400, "invalid_field".into()), "n={n}: {}", forged.1);
                }
            }
        }
        assert_eq!(released.len(), 1);
        let payout = &released[0];
        assert_eq!(payout.0, 200, "{}", payout.1);
        assert_eq!(payout.1["order"]["destination"], destinations[winner].to_string());
        land(&w, &payout.1["payout"]).await;
        // The host stores the head as a relay would; the refused books open nowhere.
        host.store_book(&usdc, &proposals[winner].0, version + 1).await;
        for (i, (blob, _)) in proposals.iter().enumerate().filter(|(i, _)| *i != winner) {
            let again = wallet.withdraw((USDC, &destinations[i]), (unix_now(), &format!("again{n}-{i}")), Some(blob));
            assert_eq!(refusal(&host.step(port, &again).await), (409, "book_rollback".into()));
        }
        let paid: Vec<u64> = e2e::join_all(destinations.iter().map(|d| w.balance(d, &w.usdc))).await;
        let mut expected = vec![0; n];
        expected[winner] = 2 * USDC;
        assert_eq!(paid, expected, "n={n}: one payout of the balance");
        books_match_chain(&w, 3 * USDC).await;
    }
}

e2e::on_sqlite_and_postgres!(concurrent_withdrawals: concurrent_withdrawals_of_one_balance_pay_it_once, on_postgres_concurrent_withdrawals_of_one_balance_pay_it_once);

/// One deposit credited twice from one book (two siblings), then a withdrawal from each: the
/// witness keeps one sibling; the other opens nowhere, and the deposit counts once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sibling_books_are_refused() {
    let (w, hook, host) = world(None, 0).await;
    let usdc = w.usdc.to_string();
    let port = w.stack.enclave_port;
    let (id, address, owner) = funded(&w, &hook, USDC).await;
    let owned = OwnedWallet::of(&host, &id, &owner, &usdc).await;
    let (wallet, pool) = (owned.blob.clone(), owned.pool.clone());
    w.chain.mint_to(&w.usdc, &address, 5 * USDC).await;
    // The host has the enclave sign an encrypt of 5, lands it itself and tells the relay nothing.
    let body = json!({"mint": usdc, "amount": (5 * USDC).to_string()});
    let path = format!("/agents/v1/wallets/{id}/encrypt");
    let request = owner_request(&wallet, &path, &body, &owner, (unix_now(), "deposit"));
    let built = host.step(port, &PrivacyRequest::EncryptBuild { request, pool: pool.clone() }).await;
    assert_eq!(built.0, 200, "{}", built.1);
    land(&w, &built.1["deposit"]).await;
    let deposit = built.1["deposit"]["signature"].as_str().unwrap().to_string();
    let (book, version) = host.book(&usdc).await.unwrap();
    let credit = || PrivacyRequest::EncryptCredit {
        wallet: wallet.clone(),
        pool: pool.clone(),
        book: Some(book.clone()),
        mint: usdc.clone(),
        signature: deposit.clone(),
    };
    let (a, b) = (proposal(&host.step(port, &credit()).await), proposal(&host.step(port, &credit()).await));
    assert_ne!(a.0, b.0, "two successors of one book");
    let (va, vb) = (w.stack.witness.answer(&a.1).unwrap(), w.stack.witness.answer(&b.1).unwrap());
    assert!(va.appended() && !vb.appended());
    assert_eq!(host.step(port, &witnessed(Some(&a.0), &va)).await.1["balance"], (6 * USDC).to_string());
    assert_eq!(refusal(&host.step(port, &witnessed(Some(&b.0), &vb)).await), (409, "book_stale".into()));
    host.store_book(&usdc, &a.0, version + 1).await;
    // A withdrawal from the sibling the witness refused: it is not the head.
    let to = address_of(&new_key());
    let take = |blob: &str, nonce: &str| owned.withdraw((6 * USDC, &to), (unix_now(), nonce), Some(blob));
    assert_eq!(refusal(&host.step(port, &take(&b.0, "from-b")).await), (409, "book_rollback".into()));
    // The deposit credited again on the head: already credited.
    let again = PrivacyRequest::EncryptCredit {
        wallet: wallet.clone(),
        pool: pool.clone(),
        book: Some(a.0.clone()),
        mint: usdc.clone(),
        signature: deposit.clone(),
    };
    assert_eq!(refusal(&host.step(port, &again).await), (409, "nothing_to_do".into()));
    // From the head: the 6 (1 + 5, counted once) are paid once.
    let (blob, append) = proposal(&host.step(port, &take(&a.0, "from-a")).await);
    let verdict = w.stack.witness.answer(&append).unwrap();
    let released = host.step(port, &witnessed(Some(&blob), &verdict)).await;
    assert_eq!(released.0, 200, "{}", released.1);
    land(&w, &released.1["payout"]).await;
    host.store_book(&usdc, &blob, version + 2).await;
    assert_eq!(w.balance(&to, &w.usdc).await, 6 * USDC);
    books_match_chain(&w, 0).await;
}

/// After an enclave restart the host presents the book from before a withdrawal (and no book,
/// and a book it made up): the new boot opens only the witnessed head; one payout on chain.
/// Then a captured owner request is replayed to the new boot: it predates the boot.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_old_book_or_a_captured_request_after_a_restart_is_refused() {
    let (mut w, hook, host) = world(None, 0).await;
    let usdc = w.usdc.to_string();
    let (id, _, owner) = funded(&w, &hook, 4 * USDC).await;
    let (old, _) = host.book(&usdc).await.unwrap();
    let to = address_of(&new_key());
    let path = withdraw_path(&id);
    let body = withdrawal(&usdc, 4 * USDC, &to.to_string());
    let captured = owner_request(&host.wallet_blob(&id).await, &path, &body, &owner, (unix_now(), "captured"));
    let (t, n, s) =
        (captured.auth.as_ref().unwrap().timestamp.to_string(), "captured", captured.auth.clone().unwrap().signature);
    let done = e2e::wallets::post(&w, &path, e2e::API_KEY, &body.to_string(), Some((&t, n, &s))).await;
    assert_eq!(done.0, 200, "{}", done.1);
    wait_balance(&w, &to, 4 * USDC).await;

    tokio::task::block_in_place(|| w.stack.restart_enclave());
    let port = w.stack.enclave_port;
    let owned = OwnedWallet::of(&host, &id, &owner, &usdc).await;
    let (wallet, pool) = (owned.blob.clone(), owned.pool.clone());
    let thief = address_of(&new_key());
    let steal = |book: Option<&str>, nonce: &str| owned.withdraw((4 * USDC, &thief), (unix_now(), nonce), book);
    assert_eq!(refusal(&host.step(port, &steal(Some(&old), "old")).await), (409, "book_rollback".into()));
    assert_eq!(refusal(&host.step(port, &steal(None, "none")).await), (409, "book_rollback".into()));
    let reserves = PrivacyRequest::Reserves { pool: pool.clone(), book: Some(old.clone()), mint: usdc.clone() };
    assert_eq!(refusal(&host.step(port, &reserves).await), (409, "book_rollback".into()));
    let balance = PrivacyRequest::Balance { wallet: wallet.clone(), book: Some(old.clone()), mint: usdc.clone() };
    assert_eq!(refusal(&host.step(port, &balance).await), (409, "book_rollback".into()));
    // The captured request, replayed to the new boot with the book it was carried out on.
    let replay = PrivacyRequest::Withdraw { request: captured, pool: pool.clone(), book: Some(old) };
    assert_eq!(refusal(&host.step(port, &replay).await), (400, "request_predates_boot".into()));
    let head = host.book(&usdc).await.unwrap().0;
    let replay = match replay {
        PrivacyRequest::Withdraw { request, pool, .. } => PrivacyRequest::Withdraw { request, pool, book: Some(head) },
        _ => unreachable!(),
    };
    assert_eq!(refusal(&host.step(port, &replay).await), (400, "request_predates_boot".into()));
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!((w.balance(&to, &w.usdc).await, w.balance(&thief, &w.usdc).await), (4 * USDC, 0));
    books_match_chain(&w, 0).await;
}

async fn wait_balance(w: &SwapWorld, owner: &Address, amount: u64) {
    let deadline = std::time::Instant::now() + WAIT;
    while w.balance(owner, &w.usdc).await < amount {
        assert!(std::time::Instant::now() < deadline, "{owner} never received {amount}");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// Two enclaves behind the relay, both provisioned with the witness's heads, each given the same
/// book for a withdrawal of the whole balance: one extends the head, the other is refused, and
/// learns the new head from the refusal.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_enclaves_given_one_book_extend_it_once() {
    let (w, hook, host) = world(None, 1).await;
    let usdc = w.usdc.to_string();
    let (id, _, owner) = funded(&w, &hook, 3 * USDC).await;
    let owned = OwnedWallet::of(&host, &id, &owner, &usdc).await;
    let (book, version) = host.book(&usdc).await.unwrap();
    let ports = w.stack.enclave_ports();
    let (to_a, to_b) = (address_of(&new_key()), address_of(&new_key()));
    let take = |to: &Address, nonce: &str| owned.withdraw((3 * USDC, to), (unix_now(), nonce), Some(&book));
    // An enclave may not have seen the head's acknowledgement (the relay spreads its steps):
    // the host shows it to both, as the relay does on `book_rollback`.
    let head_answer = head_acknowledgement(&host, &book).await;
    for port in &ports {
        assert_eq!(host.step(*port, &witnessed(Some(&book), &head_answer)).await.0, 200);
    }
    let (a, b) = (
        proposal(&host.step(ports[0], &take(&to_a, "a")).await),
        proposal(&host.step(ports[1], &take(&to_b, "b")).await),
    );
    let (va, vb) = (w.stack.witness.answer(&a.1).unwrap(), w.stack.witness.answer(&b.1).unwrap());
    assert!(va.appended() && !vb.appended(), "one extends the head");
    assert_eq!(refusal(&host.step(ports[1], &witnessed(Some(&b.0), &vb)).await), (409, "book_stale".into()));
    // The second enclave learned the head from the refusal: its own book opens no more.
    let again = owned.withdraw((USDC, &to_b), (unix_now(), "b2"), Some(&b.0));
    assert_eq!(refusal(&host.step(ports[1], &again).await), (409, "book_rollback".into()));
    let released = host.step(ports[0], &witnessed(Some(&a.0), &va)).await;
    assert_eq!(released.0, 200, "{}", released.1);
    land(&w, &released.1["payout"]).await;
    host.store_book(&usdc, &a.0, version + 1).await;
    assert_eq!((w.balance(&to_a, &w.usdc).await, w.balance(&to_b, &w.usdc).await), (3 * USDC, 0));
    books_match_chain(&w, 0).await;
}

/// The witness's acknowledgement of the stored head, as the relay kept it.
async fn head_acknowledgement(host: &Host, blob: &str) -> shared::witness::WitnessAnswer {
    let row: (String,) = sqlx::query_as("SELECT answer_json FROM privacy_book_steps WHERE digest = $1")
        .bind(shared::witness::digest(blob))
        .fetch_one(&host.db)
        .await
        .unwrap();
    serde_json::from_str(&row.0).unwrap()
}

/// A lost answer: the owner's client sends the same signed bytes again, through the relay (which
/// kept the answer) and straight to the enclave (a relay that lost its rows): the same order, no
/// second debit. After a restart the client signs the same nonce again: still the same order. The
/// same nonce over another body is refused. One transfer on chain.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_lost_answer_resent_moves_nothing_twice() {
    let (mut w, hook, host) = world(None, 0).await;
    let usdc = w.usdc.to_string();
    let (id, _, owner) = funded(&w, &hook, 5 * USDC).await;
    let path = withdraw_path(&id);
    let to = address_of(&new_key());
    let body = withdrawal(&usdc, 2 * USDC, &to.to_string()).to_string();
    let (t, n, s) = e2e::wallets::signed(&owner, &path, &body, unix_now(), "lost-once");
    let first = e2e::wallets::post(&w, &path, e2e::API_KEY, &body, Some((&t, &n, &s))).await;
    assert_eq!(first.0, 200, "{}", first.1);
    let again = e2e::wallets::post(&w, &path, e2e::API_KEY, &body, Some((&t, &n, &s))).await;
    assert_eq!((again.0, &again.1["order"]), (200, &first.1["order"]), "the relay kept the answer");
    // Straight to the enclave, with the head: the order it debited already.
    let owned = OwnedWallet::of(&host, &id, &owner, &usdc).await;
    let direct = |timestamp: u64, book: &str| owned.withdraw((2 * USDC, &to), (timestamp, "lost-once"), Some(book));
    let head = host.book(&usdc).await.unwrap().0;
    let timestamp: u64 = t.parse().unwrap();
    let same = host.step(w.stack.enclave_port, &direct(timestamp, &head)).await;
    assert_eq!(same.0, 200, "{}", same.1);
    assert!(same.1.get("book").is_none(), "no new book: nothing debited again");
    assert_eq!(same.1["order"], first.1["order"]);
    // Another body under the same nonce.
    let other = withdrawal(&usdc, 3 * USDC, &to.to_string()).to_string();
    let (t2, n2, s2) = e2e::wallets::signed(&owner, &path, &other, unix_now(), "lost-once");
    let reused = e2e::wallets::post(&w, &path, e2e::API_KEY, &other, Some((&t2, &n2, &s2))).await;
    assert_eq!(e2e::wallets::code(&reused), (422, "idempotency_key_reused"));

    // After a restart: the old bytes predate the boot; the same nonce signed again names the
    // same order, which the book holds (open, or done once its payout landed).
    tokio::task::block_in_place(|| w.stack.restart_enclave());
    let port = w.stack.enclave_port;
    let head = host.book(&usdc).await.unwrap().0;
    assert_eq!(refusal(&host.step(port, &direct(timestamp, &head)).await), (400, "request_predates_boot".into()));
    let resigned = host.step(port, &direct(unix_now(), &head)).await;
    match resigned.0 {
        200 => assert_eq!(resigned.1["order"], first.1["order"]),
        _ => assert_eq!(refusal(&resigned), (409, "replay_detected".into())),
    }
    wait_balance(&w, &to, 2 * USDC).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(w.balance(&to, &w.usdc).await, 2 * USDC, "one transfer");
    books_match_chain(&w, 3 * USDC).await;
    // The kept answer is readable by its nonce.
    let (status, kept) =
        e2e::wallets::get(&w, &format!("/agents/v1/wallets/{id}/requests/lost-once"), Some(e2e::API_KEY)).await;
    assert_eq!(
        (status, kept["operation"].as_str(), &kept["answer"]["order"]),
        (200, Some("withdraw"), &first.1["order"])
    );
}

/// The relay names its own address as the wallet, then swaps in a wallet the host had the
/// enclave make under the same id without the owner: `svc wallet fund` compares the address
/// with the one the enclave certified at create and refuses before the payer signs.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_substituted_wallet_address_is_refused_before_any_funds_move() {
    let (w, hook, host) = world(None, 0).await;
    let usdc = w.usdc.to_string();
    let owner = address_of(&new_key()).to_string();
    let created = svc(&w, &["wallet", "create", "--webhook-url", &hook, "--owner-pubkey", &owner]);
    let id = created["walletId"].as_str().unwrap().to_string();
    assert_eq!(created["certificate"]["ownerPubkey"], owner.as_str());
    let payer = w.payer(e2e::swaps::SOL, 5 * USDC).await;
    let key_file = payer.key_file.to_string_lossy().to_string();
    // `svc wallet fund` must refuse: the address is not the one the enclave certified.
    let refused = |w: &SwapWorld| {
        // Each argument whole (a path with a space stays one argument).
        let fund: [&str; 5] = ["wallet", "fund", &id, "--mint", &usdc];
        let from: [&str; 6] = ["--amount", "1000000", "--payer-key", &key_file, "--rpc-url", &w.chain.rpc_url];
        let out = tokio::task::block_in_place(|| svc_output(w, &[&fund[..], &from[..]].concat()));
        assert!(
            !out.status.success() && String::from_utf8_lossy(&out.stderr).contains("the enclave certified"),
            "{out:?}"
        );
    };
    // The relay's own address.
    let relays = address_of(&new_key());
    sqlx::query("UPDATE wallets SET address = $1 WHERE id = $2")
        .bind(relays.to_string())
        .bind(&id)
        .execute(&host.db)
        .await
        .unwrap();
    refused(&w);
    // A wallet without the owner, made by the enclave under the same id, swapped in.
    let request = shared::privacy::NewWallet { wallet_id: id.clone(), owner_pubkey: None };
    let url = format!("http://127.0.0.1:{}/wallets", w.stack.enclave_port);
    let (status, made) = host.post(&url, &serde_json::to_value(&request).unwrap()).await;
    assert_eq!(status, 200, "{made}");
    let object = &made["object"];
    sqlx::query("INSERT INTO sealed_objects (id, kind, version, blob, public_key, created_at, updated_at) VALUES ($1, $2, 1, $3, $4, 0, 0)")
        .bind(object["id"].as_str().unwrap())
        .bind(object["kind"].as_str().unwrap())
        .bind(object["blob"].as_str().unwrap())
        .bind(object["publicKey"].as_str().unwrap())
        .execute(&host.db)
        .await
        .unwrap();
    sqlx::query("UPDATE wallets SET address = $1, object_id = $2, owner_pubkey = NULL WHERE id = $3")
        .bind(object["publicKey"].as_str().unwrap())
        .bind(object["id"].as_str().unwrap())
        .bind(&id)
        .execute(&host.db)
        .await
        .unwrap();
    refused(&w);
    // Asked again, the enclave certifies what the relay swapped in: no owner.
    let certificate = w.client().wallet_certificate(&id).await.unwrap();
    let substitute = Address::parse(object["publicKey"].as_str().unwrap()).unwrap();
    assert_eq!((certificate.owner_pubkey, certificate.address), (None, substitute));
    assert_eq!(
        (
            w.balance(&payer.address, &w.usdc).await,
            w.balance(&relays, &w.usdc).await,
            w.balance(&substitute, &w.usdc).await
        ),
        (5 * USDC, 0, 0),
        "nothing moved"
    );
}

/// The host opens one-shot sessions at the enclave itself, choosing the least output: below
/// the router's quote now less the enclave's most slippage (1,000 bps by default) nothing is
/// committed; at the quote less 1 % the enclave signs the terms as asked.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_one_shot_min_out_below_the_enclaves_quote_is_never_committed() {
    let (w, _, host) = world(None, 0).await;
    let router = chain::Router::new(&w.router_url, None, Duration::from_secs(10), None);
    let amount = 10 * USDC;
    let quoted = router.quote(&w.usdc, &w.token, amount, 0).await.unwrap().out_amount;
    let floor = (u128::from(quoted) * 9_000 / 10_000) as u64;
    let terms = |min_out: u64| {
        json!({"sessionId": "2b1f0c7e-9d3a-4c51-8e6f-0a9b8c7d6e5f", "payer": address_of(&new_key()).to_string(),
               "fromMint": w.usdc.to_string(), "toMint": w.token.to_string(), "amount": amount.to_string(),
               "destination": address_of(&new_key()).to_string(), "minOut": min_out.to_string(),
               "expiresAt": unix_now() + 300})
    };
    let url = format!("http://127.0.0.1:{}/swaps/sessions", w.stack.enclave_ports()[0]);
    for min_out in [0, 1, floor - 1] {
        let (status, body) = host.post(&url, &terms(min_out)).await;
        assert_eq!((status, body["error"].as_str()), (400, Some("invalid_field")), "minOut {min_out}: {body}");
        assert!(body["message"].as_str().unwrap().contains(&floor.to_string()), "{body}");
    }
    let (status, opened) = host.post(&url, &terms(quoted - quoted / 100)).await;
    assert_eq!(status, 200, "{opened}");
    assert_eq!(opened["commitment"]["terms"]["minOut"], (quoted - quoted / 100).to_string());
}

/// The host points a settled encrypt's credit at another transaction of the wallet (the mint's
/// payment to it, no deposit into the pool) and hands the session back to the worker: the
/// enclave refuses to credit it (`nothing_to_do`), the session fails with `credit_refused`
/// instead of retrying for ever, and the books still match the chain.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_credit_pointed_at_another_transaction_credits_nothing() {
    let (w, hook, host) = world(None, 0).await;
    let (id, wallet, owner) = owned_wallet(&w, &hook, 3 * USDC).await;
    let started = w.client().wallet_encrypt(&id, &w.usdc.to_string(), &(2 * USDC).to_string(), Some(&owner)).await;
    let session_id = started.unwrap()["sessionId"].as_str().unwrap().to_string();
    let session = settle(&w, &session_id).await;
    assert_eq!(session["state"], "settled", "{session}");
    let deposit = session["fundingTxSig"].as_str().unwrap();
    let other = w.rpc.signatures_for_address(&wallet, None, 20).await.unwrap();
    let other = other.into_iter().map(|s| s.signature).find(|s| s != deposit).unwrap();
    sqlx::query(
        "UPDATE swap_sessions SET state = 'crediting', funding_tx_sig = $1, final_tx_sig = NULL, lease_until = 0 \
         WHERE id = $2",
    )
    .bind(&other)
    .bind(&session_id)
    .execute(&host.db)
    .await
    .unwrap();
    let session = settle(&w, &session_id).await;
    assert_eq!((session["state"].as_str(), session["reason"].as_str()), (Some("failed"), Some("credit_refused")));
    books_match_chain(&w, 2 * USDC).await;
}
