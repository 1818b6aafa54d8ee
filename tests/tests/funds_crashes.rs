//! Crashes in the freshness witness's path (DESIGN §13), real processes on the real local
//! chain: the key holder (`svc keyholder`, the witness) killed while books are being appended,
//! and the enclave killed between the relay storing a step and the witness's answer. Nothing is
//! paid twice, nothing is lost, and the pool holds exactly what it owes, to the base unit.

use std::time::{Duration, Instant};

use e2e::keyholder::{age_encrypt, has_age, provisioner_file};
use e2e::swaps::SwapWorld;
use e2e::wallets::{WAIT, code, get, post_once, settle, signed};
use e2e::{API_KEY, chain::address_of, chain::new_key};
use ed25519_dalek::SigningKey;
use serde_json::json;
use shared::address::Address;
use shared::time::unix_now;

const USDC: u64 = 1_000_000;

async fn world(tune: impl FnOnce(&mut e2e::StackOptions)) -> (SwapWorld, String) {
    let port = e2e::free_port();
    let agents = json!({"wallets": {"webhookAllow": [format!("127.0.0.1:{port}")], "pollMillis": 200,
                                    "witnessWaitSecs": 3}});
    let w = SwapWorld::start_tuned(agents, |_, _, _| json!({}), None, tune).await;
    (w, format!("http://127.0.0.1:{port}/hook"))
}

/// An owned wallet with `private` encrypted (the pool funded).
async fn funded(w: &SwapWorld, hook: &str, private: u64) -> (String, SigningKey) {
    let (id, _, owner) = e2e::wallets::owned_wallet(w, hook, private).await;
    let started = w.client().wallet_encrypt(&id, &w.usdc.to_string(), &private.to_string(), Some(&owner)).await;
    let session = settle(w, started.unwrap()["sessionId"].as_str().unwrap()).await;
    assert_eq!(session["state"], "settled", "{session}");
    (id, owner)
}

async fn books_match_chain(w: &SwapWorld, owed: u64) {
    let statement = w.client().reserves(&w.usdc.to_string()).await.unwrap();
    let held = w.balance(&statement.pool, &w.usdc).await;
    assert_eq!((statement.liabilities, statement.pool_balance.0, held), (owed.to_string(), owed, owed));
}

async fn wait_paid(w: &SwapWorld, destinations: &[Address], amount: u64) {
    let deadline = Instant::now() + WAIT;
    for d in destinations {
        while w.balance(d, &w.usdc).await < amount {
            assert!(Instant::now() < deadline, "{d} was never paid");
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }
    // Given time to be paid twice, each was paid once.
    tokio::time::sleep(Duration::from_secs(3)).await;
    for d in destinations {
        assert_eq!(w.balance(d, &w.usdc).await, amount, "{d} paid once");
    }
}

/// The key holder runs as its own process and is killed (SIGKILL) while six withdrawals are
/// being appended, then started again from its heads file: withdrawals that met the dead witness
/// answer `503 witness_unavailable` and are finished when it is back (the owners' clients send
/// the same signed bytes again); every one is paid once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_witness_killed_mid_append_loses_and_doubles_nothing() {
    if !has_age() {
        eprintln!("the `age` CLI is not installed: test not run (tools/test.sh installs it)");
        return;
    }
    let (w, hook) = world(|o| {
        o.provision = false;
        o.witness = false;
    })
    .await;
    let dir = w.stack.dir.path().to_path_buf();
    let kek = shared::b64::encode(shared::sha256(dir.to_string_lossy().as_bytes()));
    let (secrets, identity) = age_encrypt(&dir, "secrets", &json!({"version": 1, "kek": kek}));
    let key = provisioner_file(&dir, &e2e::provisioner());
    let start = |log: &str| e2e::keyholder::spawn(&w.stack, &secrets, &identity, &key, log);
    let mut holder = start("keyholder-1.log");
    let deadline = Instant::now() + WAIT;
    loop {
        let (_, a) = get(&w, "/tee/attestation", None).await;
        if a["provisioning"]["provisioned"] == true {
            break;
        }
        assert!(Instant::now() < deadline, "the key holder did not provision the enclave");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let mut wallets = Vec::new();
    for _ in 0..6 {
        wallets.push(funded(&w, &hook, 2 * USDC).await);
    }
    let usdc = w.usdc.to_string();
    let destinations: Vec<Address> = (0..6).map(|_| address_of(&new_key())).collect();
    // Six owner-signed withdrawals at once, the witness killed a moment after they start.
    let requests: Vec<(String, String, (String, String, String))> = wallets
        .iter()
        .zip(&destinations)
        .enumerate()
        .map(|(i, ((id, owner), d))| {
            let path = format!("/agents/v1/wallets/{id}/withdraw");
            let body = json!({"mint": usdc, "amount": (2 * USDC).to_string(), "destinationPubkey": d.to_string()});
            let body = body.to_string();
            let headers = signed(owner, &path, &body, unix_now(), &format!("crash-{i}"));
            (path, body, headers)
        })
        .collect();
    let send = |r: &(String, String, (String, String, String))| {
        let (path, body, (t, n, s)) = r.clone();
        let w = &w;
        async move { post_once(w, &path, API_KEY, &body, Some((&t, &n, &s))).await }
    };
    let burst = e2e::join_all(requests.iter().map(send));
    let kill = async {
        tokio::time::sleep(Duration::from_millis(150)).await;
        holder.stop();
    };
    let (first, ()) = tokio::join!(burst, kill);
    let mut unavailable = 0;
    for answer in &first {
        match code(answer) {
            (200, _) => {}
            (503, "witness_unavailable") | (503, "pool_warming_up") => unavailable += 1,
            other => panic!("unexpected {other:?}: {}", answer.1),
        }
    }
    eprintln!("{unavailable} of 6 met the dead witness or the quiet period");
    let mut holder = start("keyholder-2.log");
    // The owners' clients send the same signed bytes again until each has its answer.
    let deadline = Instant::now() + WAIT;
    for r in &requests {
        loop {
            let answer = send(r).await;
            if answer.0 == 200 {
                break;
            }
            assert!(
                matches!(
                    code(&answer),
                    (503, "witness_unavailable" | "pool_warming_up") | (409, "request_in_progress")
                ),
                "{}",
                answer.1
            );
            assert!(Instant::now() < deadline, "a withdrawal never finished");
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }
    wait_paid(&w, &destinations, 2 * USDC).await;
    books_match_chain(&w, 0).await;
    holder.stop();
}

/// The enclave is killed after the relay stored a withdrawal's step and before the witness
/// answered; a new boot (provisioned with the witness's heads) takes the answer and gives out
/// the payout sealed in the stored book: the withdrawal is paid once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_enclave_killed_before_the_acknowledgement_pays_the_stored_step_once() {
    let (mut w, hook) = world(|o| o.witness = false).await;
    // The test carries the witness's messages itself, as the key holder would.
    let carried = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let carry = {
        let (client, witness, carried) = (w.stack.bare_client(), w.stack.witness.clone(), carried.clone());
        tokio::spawn(async move {
            while carried.load(std::sync::atomic::Ordering::SeqCst) {
                let _ = client.witness_round(&witness).await;
            }
        })
    };
    let (id, owner) = funded(&w, &hook, 3 * USDC).await;
    carried.store(false, std::sync::atomic::Ordering::SeqCst);
    let _ = tokio::time::timeout(Duration::from_secs(30), carry).await;

    let to = address_of(&new_key());
    let path = format!("/agents/v1/wallets/{id}/withdraw");
    let body =
        json!({"mint": w.usdc.to_string(), "amount": (3 * USDC).to_string(), "destinationPubkey": to.to_string()});
    let body = body.to_string();
    let (t, n, s) = signed(&owner, &path, &body, unix_now(), "before-ack");
    // Nobody answers for the witness: the relay stores the step and gives up waiting.
    let answer = e2e::wallets::post(&w, &path, API_KEY, &body, Some((&t, &n, &s))).await;
    assert_eq!(code(&answer), (503, "witness_unavailable"), "{}", answer.1);
    let (_, pending) = get(&w, "/tee/witness/appends", None).await;
    let appends: Vec<shared::witness::AppendRequest> = serde_json::from_value(pending["appends"].clone()).unwrap();
    assert_eq!(appends.len(), 1, "{pending}");
    assert_eq!(w.balance(&to, &w.usdc).await, 0, "nothing was given out");

    // The enclave dies; a new boot starts with the witness's heads (the parent still).
    tokio::task::block_in_place(|| w.stack.restart_enclave());
    // Now the witness answers the stored append, and the relay carries the answer on.
    let verdict = w.stack.witness.answer(&appends[0]).unwrap();
    assert!(verdict.appended());
    let host = e2e::host::Host::of(&w, None).await;
    let answers_url = format!("{}/tee/witness/answers", w.stack.relay_url);
    // Not an answers body: refused with its code; an answer signed by a key no enclave names as
    // its witness (anyone can post here): not kept.
    let (status, refused) = host.post(&answers_url, &json!({"answers": "all of them"})).await;
    assert_eq!((status, refused["error"].as_str()), (400, Some("bad_request")), "{refused}");
    let forged = shared::witness::WitnessAnswer::signed(&appends[0], appends[0].next.clone(), &new_key());
    let (status, posted) = host.post(&answers_url, &json!({"answers": [forged]})).await;
    assert_eq!((status, &posted["stored"]), (200, &json!(0)), "{posted}");
    let (status, posted) = host.post(&answers_url, &json!({"answers": [verdict]})).await;
    assert_eq!((status, &posted["stored"]), (200, &json!(1)), "{posted}");
    wait_paid(&w, &[to], 3 * USDC).await;
    // The owner's client, sending the same bytes again after the restart (signed again with the
    // same nonce), gets the order that was paid.
    let (t2, n2, s2) = signed(&owner, &path, &body, unix_now(), "before-ack");
    let again = e2e::wallets::post(&w, &path, API_KEY, &body, Some((&t2, &n2, &s2))).await;
    assert_eq!(again.0, 200, "{}", again.1);
    assert_eq!(again.1["order"]["destination"], to.to_string());
    books_match_chain(&w, 0).await;
}
