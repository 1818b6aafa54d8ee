//! The Solana ledger writer (issue 15 part 3, docs/log.md "Ledger writer") on the local chain:
//! receipt commits and log anchors land as real transactions, `GET /attestation/by-tx` finds a
//! receipt from the chain's copy of its commit, receipts say `pending` until they land, a
//! ledger key without SOL holds commits queued (not lost), and a relay killed after recording
//! an attempt, or after sending it, lands each commit exactly once.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use chain::Chain;
use client::chat::{ChatOptions, ChatOutcome};
use client::onchain::LedgerStatus;
use e2e::chain::{LocalChain, address_of, new_key, noop_program_elf};
use e2e::http::get;
use e2e::{Stack, StackOptions, binary};
use serde_json::json;
use shared::address::{Address, default_program_id};
use shared::tlog::wire::{Anchor, Anchors};

const SOL: u64 = 1_000_000_000;

struct World {
    chain: LocalChain,
    stack: Stack,
    ledger_key: Address,
    _keys: tempfile::TempDir,
}

/// A chain with the no-op program at the attestation program id, and a relay in solana mode
/// whose ledger key holds `lamports`.
fn world(lamports: u64) -> World {
    let chain = LocalChain::start();
    chain.deploy(&default_program_id(), &noop_program_elf());
    let keys = tempfile::tempdir().unwrap();
    let key = new_key();
    let key_file = keys.path().join("ledger-key");
    std::fs::write(&key_file, key.to_bytes()).unwrap();
    let ledger_key = address_of(&key);
    if lamports > 0 {
        chain.fund_sol(&ledger_key, lamports);
    }
    let relay = json!({
        "ledgerKeyFile": key_file,
        "ledger": {"mode": "solana", "rpcUrl": chain.rpc_url, "pollMillis": 100, "maxBackoffSecs": 1},
        "log": {"anchorSecs": 1},
    });
    let stack = Stack::start_with(StackOptions { relay, ..StackOptions::default() });
    World { chain, stack, ledger_key, _keys: keys }
}

async fn chat(stack: &Stack, prompt: &str) -> ChatOutcome {
    let options = ChatOptions { max_tokens: Some(8), ..ChatOptions::default() };
    stack.client().chat(prompt, &options).await.unwrap()
}

async fn status(stack: &Stack, address: &str) -> LedgerStatus {
    stack.client().ledger_status(address).await.unwrap()
}

/// Waits until the receipt at `address` has landed; its status.
async fn landed(stack: &Stack, address: &str, within: Duration) -> LedgerStatus {
    let deadline = Instant::now() + within;
    loop {
        let s = status(stack, address).await;
        if s.status == "landed" {
            return s;
        }
        assert!(Instant::now() < deadline, "not landed in {within:?}: {s:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// What the ledger key's successful transactions on the chain commit: receipt prompt hashes
/// (hex) and anchor head hashes (hex), each with how many times it landed.
async fn on_chain(w: &World) -> (BTreeMap<String, usize>, BTreeMap<String, usize>) {
    let rpc = w.chain.rpc();
    let (mut receipts, mut anchors) = (BTreeMap::new(), BTreeMap::new());
    for info in rpc.signatures_for_address(&w.ledger_key, None, 1000).await.unwrap() {
        if info.err.is_some() {
            continue;
        }
        let tx = rpc.transaction(&info.signature).await.unwrap().expect("a listed transaction is found");
        if let Ok(c) = shared::ledger::parse_and_verify(&tx.transaction) {
            assert_eq!((c.payer, c.program_id), (w.ledger_key.0, default_program_id()));
            *receipts.entry(hex::encode(c.prompt_hash.0)).or_default() += 1;
        } else if let Ok(a) = shared::ledger::anchor::parse_and_verify(&tx.transaction) {
            assert_eq!(a.payer, w.ledger_key.0);
            *anchors.entry(hex::encode(a.sth_hash)).or_default() += 1;
        } else {
            panic!("the ledger key signed something else: {}", info.signature);
        }
    }
    (receipts, anchors)
}

async fn anchors(stack: &Stack) -> Vec<Anchor> {
    let (_, body) = get(&format!("{}/log/v1/anchors?limit=100", stack.relay_url)).await;
    serde_json::from_value::<Anchors>(body).unwrap().anchors
}

#[tokio::test(flavor = "multi_thread")]
async fn receipts_and_anchors_land_on_the_chain_and_are_found_by_their_signatures() {
    let w = world(SOL);
    let first = chat(&w.stack, "Name a colour.").await;
    let second = chat(&w.stack, "Name a fruit.").await;
    let mut hashes = Vec::new();
    for outcome in [&first, &second] {
        // Answered before the chain has it: the receipt says so.
        assert_eq!(outcome.onchain.status.as_deref(), Some("pending"), "{:?}", outcome.onchain);
        let s = landed(&w.stack, &outcome.onchain.address, Duration::from_secs(30)).await;
        assert_eq!((s.ledger.as_str(), s.commit_signature.as_str()), ("solana", outcome.onchain.signature.as_str()));
        let chain_sig = s.ledger_signature.clone().expect("a landed commit names its transaction");
        assert_ne!(chain_sig, outcome.onchain.signature, "the chain copy is built on a real blockhash");
        assert!(s.landed_at.is_some());

        // The chain holds the commit; by-tx re-derives the receipt's address from its data.
        let tx = w.chain.rpc().transaction(&chain_sig).await.unwrap().expect("on the chain");
        let commit = shared::ledger::parse_and_verify(&tx.transaction).unwrap();
        assert_eq!(hex::encode(commit.prompt_hash.0), outcome.onchain.encrypted_prompt_hash);
        let (code, by_tx) = get(&format!("{}/attestation/by-tx/{chain_sig}", w.stack.relay_url)).await;
        let (_, by_address) = get(&format!("{}/attestation/{}", w.stack.relay_url, outcome.onchain.address)).await;
        assert_eq!(code, 200, "{by_tx}");
        assert_eq!(by_tx, by_address);
        assert_eq!(by_tx["address"], outcome.onchain.address.as_str());
        hashes.push(outcome.onchain.encrypted_prompt_hash.clone());
    }

    // A signature the chain does not hold, and one of another payer's transaction.
    let unknown = shared::ledger::format_id(&[9; 64]);
    let (code, body) = get(&format!("{}/attestation/by-tx/{unknown}", w.stack.relay_url)).await;
    assert_eq!((code, body["error"].as_str()), (404, Some("not_found")), "{body}");
    let other = w.chain.send(&[shared::solana::memo::memo(b"not a commit", &[])], &[]).await.unwrap();
    let (code, body) = get(&format!("{}/attestation/by-tx/{other}", w.stack.relay_url)).await;
    assert_eq!(code, 404, "{body}");

    // The log's three leaves (the web bundle's and the two receipts') get anchored, and the
    // anchor's memo lands too.
    let deadline = Instant::now() + Duration::from_secs(30);
    let anchor = loop {
        let list = anchors(&w.stack).await;
        if let Some(a) = list.first().filter(|a| a.sth.tree_size == 3 && a.ledger_signature.is_some()) {
            break a.clone();
        }
        assert!(Instant::now() < deadline, "no landed anchor of 3 leaves: {list:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let signature = client::onchain::check_anchor(&w.chain.rpc(), &anchor, &w.ledger_key.0).await.unwrap();
    assert_eq!(Some(signature), anchor.ledger_signature);
    // A forged anchor naming another head is caught by the same check.
    let mut forged = anchor.clone();
    forged.sth_hash = hex::encode([7u8; 32]);
    assert!(client::onchain::check_anchor(&w.chain.rpc(), &forged, &w.ledger_key.0).await.is_err());

    // Each commit landed once; nothing else was signed by the ledger key.
    let (receipts, anchored) = on_chain(&w).await;
    let want: BTreeMap<String, usize> = hashes.iter().map(|h| (h.clone(), 1)).collect();
    assert_eq!(receipts, want);
    assert!(anchored.values().all(|n| *n == 1), "{anchored:?}");
    assert!(anchored.contains_key(&anchor.sth_hash));

    // `svc receipt --proof --rpc` checks both on the chain, through its own RPC connection.
    let out = std::process::Command::new(binary("svc"))
        .args(["--relay", &w.stack.relay_url, "receipt", &first.onchain.address, "--proof", "--rpc", &w.chain.rpc_url])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("ledger:   landed (solana ledger)"), "{stderr}");
    assert!(stderr.contains("chain:    receipt commit landed in"), "{stderr}");
    assert!(stderr.contains("chain:    anchor memo landed in"), "{stderr}");

    // With an RPC node configured (SVC_RPC_URL), `svc chat` checks the newest anchor there too.
    let out = std::process::Command::new(binary("svc"))
        .args(["--relay", &w.stack.relay_url, "--api-key", &w.stack.api_key])
        .arg("--measurements")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/../measurements/dev.json"))
        .arg("--dev-root")
        .arg(w.stack.dev_root_pem_path())
        .args(["chat", "--max-tokens", "8", "Hi."])
        .env("SVC_RPC_URL", &w.chain.rpc_url)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("chain:    anchor memo landed in"), "{stderr}");
}

/// Reads the outbox row of commit `signature`: (state, attempts, last_error).
async fn outbox_row(stack: &Stack, signature: &str) -> (String, i64, Option<String>) {
    let url = format!("sqlite://{}?mode=ro", stack.relay_data_dir().join("relay.sqlite3").display());
    sqlx::any::install_default_drivers();
    let pool = sqlx::AnyPool::connect(&url).await.unwrap();
    let row = sqlx::query_as("SELECT state, attempts, last_error FROM ledger_outbox WHERE commit_signature = $1")
        .bind(signature)
        .fetch_one(&pool)
        .await
        .unwrap();
    pool.close().await;
    row
}

/// How many outbox rows are in `state`.
async fn rows_in(stack: &Stack, state: &str) -> i64 {
    let url = format!("sqlite://{}?mode=ro", stack.relay_data_dir().join("relay.sqlite3").display());
    sqlx::any::install_default_drivers();
    let pool = sqlx::AnyPool::connect(&url).await.unwrap();
    let (n,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM ledger_outbox WHERE state = $1")
        .bind(state)
        .fetch_one(&pool)
        .await
        .unwrap();
    pool.close().await;
    n
}

#[tokio::test(flavor = "multi_thread")]
async fn commits_wait_for_sol_and_land_once_across_kills_mid_send() {
    // No SOL: the chain refuses every attempt; the commit stays queued and the receipt pending.
    let mut w = world(0);
    let first = chat(&w.stack, "Say yes.").await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(status(&w.stack, &first.onchain.address).await.status, "pending");
    let (state, attempts, error) = outbox_row(&w.stack, &first.onchain.signature).await;
    assert_eq!(state, "queued");
    assert!(attempts >= 1, "attempted and refused");
    assert!(error.is_some_and(|e| !e.is_empty()));

    // Killed right after recording an attempt, before sending it: the attempt never reaches
    // the chain, expires, and the commit is rebuilt and sent once.
    w.stack.restart_relay(&[("SVC_RELAY_EXIT_AT", "ledger:recorded")]);
    w.chain.fund_sol(&w.ledger_key, SOL);
    let exit = w.stack.relay.wait_exit(Duration::from_secs(20)).expect("the relay stops at the failpoint");
    assert!(!exit.success());
    // The attempt it recorded (the receipt's commit or the log anchor's, whichever came first).
    assert_eq!(rows_in(&w.stack, "sending").await, 1);
    w.stack.restart_relay(&[]);
    let s = landed(&w.stack, &first.onchain.address, Duration::from_secs(90)).await;
    assert!(s.ledger_signature.is_some());

    // Killed right after a send: the restarted relay finds it landed and sends nothing again.
    // (The commit is made while the key is empty again, so the kill cannot cut the answer.)
    w.chain.fund_sol(&w.ledger_key, 0);
    let second = chat(&w.stack, "Say no.").await;
    w.stack.restart_relay(&[("SVC_RELAY_EXIT_AT", "ledger:sent")]);
    w.chain.fund_sol(&w.ledger_key, SOL);
    let exit = w.stack.relay.wait_exit(Duration::from_secs(20)).expect("the relay stops at the failpoint");
    assert!(!exit.success());
    w.stack.restart_relay(&[]);
    landed(&w.stack, &second.onchain.address, Duration::from_secs(30)).await;

    let (receipts, anchored) = on_chain(&w).await;
    assert!(anchored.values().all(|n| *n == 1), "{anchored:?}");
    let want: BTreeMap<String, usize> =
        [&first, &second].iter().map(|o| (o.onchain.encrypted_prompt_hash.clone(), 1)).collect();
    assert_eq!(receipts, want, "each commit landed exactly once");
}
