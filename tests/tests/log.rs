//! The transparency log end to end (docs/log.md), with the real model server, enclave, relay
//! and client: every receipt of a run is in the log, as the Rust client and an independent
//! Python verifier (tests/peers/tlog_verify.py, RFC 9162 from scratch) both check; a tampered
//! proof and a forked head are caught; the log stays consistent across a relay restart; heads
//! are anchored once each, and a restart duplicates none; a relay killed inside a group commit
//! loses no receipt it answered for.

use std::process::Command;
use std::time::Duration;

use client::chat::ChatOptions;
use client::log::LogError;
use e2e::http::get;
use e2e::{Stack, StackOptions, binary};
use serde_json::{Value, json};
use shared::tlog::sth::TreeHead;
use shared::tlog::wire::{Anchor, Anchors, SignedTreeHead, WireError};
use shared::tlog::{entry, leaf_hash, verify_consistency};
use standins::openai::{self, Turn};

fn options() -> ChatOptions {
    ChatOptions { max_tokens: Some(8), ..ChatOptions::default() }
}

async fn sth(stack: &Stack) -> SignedTreeHead {
    serde_json::from_value(get(&format!("{}/log/v1/sth", stack.relay_url)).await.1).unwrap()
}

async fn anchors(stack: &Stack) -> Vec<Anchor> {
    let (_, body) = get(&format!("{}/log/v1/anchors?limit=100", stack.relay_url)).await;
    serde_json::from_value::<Anchors>(body).unwrap().anchors
}

/// Waits until the newest anchor covers `size` leaves (anchorSecs is 1 here).
async fn anchored(stack: &Stack, size: u64) -> Vec<Anchor> {
    for _ in 0..100 {
        let list = anchors(stack).await;
        if list.first().is_some_and(|a| a.sth.tree_size == size) {
            return list;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("no anchor of {size} leaves: {:?}", anchors(stack).await);
}

/// The Python verifier's verdict on the whole log.
fn python_verifier(stack: &Stack, firsts: &[u64]) -> Value {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/peers/tlog_verify.py");
    let mut cmd = Command::new("python3");
    cmd.arg(script).arg(&stack.relay_url);
    for f in firsts {
        cmd.arg("--first").arg(f.to_string());
    }
    let out = cmd.output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(text.trim())
        .unwrap_or_else(|_| panic!("verifier said {text} / {}", String::from_utf8_lossy(&out.stderr)))
}

/// A signed head of `size` leaves with root `root`, anchored in a Memo transaction by `key`.
fn forged_anchor(key: &ed25519_dalek::SigningKey, size: u64, root: [u8; 32]) -> Anchor {
    let head = TreeHead { size, root, timestamp: 1 };
    let sig = head.sign(key);
    let sth_hash = head.signed_hash(&sig);
    let (tx, parsed) = shared::ledger::anchor::build(key, &[0; 32], &sth_hash);
    Anchor {
        sth: SignedTreeHead::new(&head, &sig, &key.verifying_key().to_bytes()),
        sth_hash: hex::encode(sth_hash),
        tx_signature: parsed.id(),
        transaction: shared::b64::encode(&tx),
        anchored_at: 1,
        ledger_signature: None,
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn every_receipt_is_logged_proved_anchored_and_survives_a_restart() {
    let mut stack =
        Stack::start_with(StackOptions { relay: json!({"log": {"anchorSecs": 1}}), ..StackOptions::default() });
    let client = stack.client();
    let mut entries = Vec::new();
    for prompt in ["What is 2+2?", "Name a colour.", "Say hello."] {
        let out = client.chat(prompt, &options()).await.unwrap();
        entries.push(entry::chat(&out.receipt).unwrap());
    }

    // Each receipt is in the log at once (appended in its commit's transaction), after the
    // leaf of the web bundle the relay serves (appended at start, docs/web.md).
    let head = sth(&stack).await;
    assert_eq!(head.tree_size, 4);
    assert_eq!(head.verify(None).unwrap().size, 4);
    let key = shared::tlog::hash::parse_hex(&head.log_key).unwrap();
    let mut indexes = Vec::new();
    for e in &entries {
        let check = client.log_proof(e, Some(&key)).await.unwrap();
        indexes.push(check.leaf_index);
    }
    indexes.sort_unstable();
    assert_eq!(indexes, vec![1, 2, 3], "dense, one leaf per receipt");
    let bundle = shared::tlog::hash::parse_hex(web_bundle::bundle_sha256()).unwrap();
    let logged = client.log_proof(&entry::web_bundle(&bundle), Some(&key)).await.unwrap();
    assert_eq!(logged.leaf_index, 0, "the served bundle is the first leaf");

    // The independent verifier agrees on every leaf, the root and a consistency proof.
    let verdict = python_verifier(&stack, &[1, 2]);
    assert_eq!(verdict["ok"], true, "{verdict}");
    assert_eq!(verdict["checked"], 4);
    assert_eq!(verdict["root"], head.root_hash);

    // Anchored: the newest anchor covers the 4 leaves, and the client checks against it.
    let before = anchored(&stack, 4).await;
    let check = client.log_proof(&entries[0], Some(&key)).await.unwrap();
    assert_eq!(check.anchor.as_ref().map(|a| a.tree_size), Some(4));
    // The anchor's transaction is a ledger commit, not a receipt: by-tx says so with a 404.
    let (s, body) = get(&format!("{}/attestation/by-tx/{}", stack.relay_url, before[0].tx_signature)).await;
    assert_eq!((s, body["error"].as_str()), (404, Some("not_found")));

    // A tampered proof is caught.
    let evidence = client.log_evidence(&entries[1], client::log::AnchorChoice::Newest).await.unwrap();
    let mut tampered = evidence.clone();
    let mut bytes = hex::decode(&tampered.proof.audit_path[0]).unwrap();
    bytes[31] ^= 0x80;
    tampered.proof.audit_path[0] = hex::encode(bytes);
    assert!(matches!(tampered.check(&entries[1], None), Err(LogError::Inclusion(_))));
    let mut moved = evidence.clone();
    moved.proof.leaf_index = (moved.proof.leaf_index + 1) % 4;
    assert!(moved.check(&entries[1], None).is_err());

    // A forked head: a different root at the anchored size, signed by another key.
    let other = ed25519_dalek::SigningKey::from_bytes(&[42; 32]);
    let (anchor, consistency) = evidence.anchored.clone().expect("an anchor");
    let fork = forged_anchor(&other, anchor.sth.tree_size, leaf_hash(b"another history"));
    let mut forked = evidence.clone();
    forked.anchored = Some((fork, consistency.clone()));
    assert_eq!(forked.check(&entries[1], None), Err(LogError::Wire(WireError::WrongKey)));
    // The proof's own head replaced by such a fork: caught even with the key unpinned.
    let mut forked_proof = evidence.clone();
    forked_proof.proof.sth = forged_anchor(&other, 4, leaf_hash(b"another history")).sth;
    assert!(forked_proof.check(&entries[1], None).is_err());
    assert_eq!(forked_proof.check(&entries[1], Some(&key)), Err(LogError::Wire(WireError::WrongKey)));
    assert!(evidence.check(&entries[1], Some(&key)).is_ok(), "the untouched evidence still verifies");

    // Bad input: 400 with the contract's body; an unknown leaf: 404.
    for (path, code) in [
        ("/log/v1/proof/inclusion", "bad_request"),
        ("/log/v1/proof/inclusion?leafHash=zz", "invalid_field"),
        ("/log/v1/proof/inclusion?address=notbase58!", "invalid_field"),
        ("/log/v1/proof/consistency?first=2&second=1", "invalid_field"),
        ("/log/v1/proof/consistency?first=1&second=99", "invalid_field"),
        ("/log/v1/proof/consistency?first=x&second=1", "invalid_field"),
        ("/log/v1/entries?start=0&end=1001", "invalid_field"),
        ("/log/v1/entries?start=0", "bad_request"),
        ("/log/v1/anchors?limit=0", "invalid_field"),
    ] {
        let (s, body) = get(&format!("{}{path}", stack.relay_url)).await;
        assert_eq!((s, body["error"].as_str()), (400, Some(code)), "{path}: {body}");
        assert!(body["message"].is_string());
    }
    let (s, body) = get(&format!("{}/log/v1/proof/inclusion?leafHash={}", stack.relay_url, "00".repeat(32))).await;
    assert_eq!((s, body["error"].as_str()), (404, Some("not_found")));
    let cors = reqwest::get(format!("{}/log/v1/sth", stack.relay_url)).await.unwrap();
    assert_eq!(cors.headers()["access-control-allow-origin"], "*");

    // A restart: the log continues from where it was, consistent with the head before.
    stack.restart_relay(&[]);
    let client = stack.client();
    let out = client.chat("One more.", &options()).await.unwrap();
    entries.push(entry::chat(&out.receipt).unwrap());
    let after = sth(&stack).await;
    assert_eq!(after.tree_size, 5, "the bundle is logged once, not again at restart");
    let (s, body) = get(&format!("{}/log/v1/proof/consistency?first=4&second=5", stack.relay_url)).await;
    assert_eq!(s, 200);
    let proof: Vec<[u8; 32]> = body["proof"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| shared::tlog::hash::parse_hex(h.as_str().unwrap()).unwrap())
        .collect();
    let (h3, h4) = (head.verify(Some(&key)).unwrap(), after.verify(Some(&key)).unwrap());
    verify_consistency(4, 5, &h3.root, &h4.root, &proof).unwrap();
    let verdict = python_verifier(&stack, &[4]);
    assert_eq!(verdict["ok"], true, "{verdict}");
    assert_eq!(verdict["checked"], 5);

    // Anchors: the old ones kept, the new head anchored once, no size twice.
    let list = anchored(&stack, 5).await;
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let list_later = anchors(&stack).await;
    assert_eq!(list_later, list, "no new anchor without new leaves");
    // Earlier heads (1 to 3 leaves) may have been anchored between the chats: the interval is 1 s.
    let sizes: Vec<u64> = list.iter().map(|a| a.sth.tree_size).collect();
    assert_eq!(sizes[..2], [5, 4], "{sizes:?}");
    assert!(sizes.windows(2).all(|w| w[0] > w[1]), "newest first, no size twice: {sizes:?}");
    assert_eq!(list[1..], before[..], "the anchors from before the restart are unchanged");

    // `svc receipt --proof` and `svc chat` print what they checked.
    let svc = |args: &[&str]| {
        let out = Command::new(binary("svc"))
            .args(["--relay", &stack.relay_url, "--api-key", &stack.api_key])
            .arg("--measurements")
            .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/../measurements/dev.json"))
            .arg("--dev-root")
            .arg(stack.dev_root_pem_path())
            .args(args)
            .output()
            .unwrap();
        (out.status.code().unwrap(), String::from_utf8_lossy(&out.stderr).to_string())
    };
    let pinned = hex::encode(key);
    let (code, err) = svc(&["--log-key", &pinned, "receipt", "--proof", &out.receipt.address]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("log:      leaf 4 of 5"), "{err}");
    assert!(err.contains("anchor:   head of 5 leaves anchored in"), "{err}");
    let (code, err) = svc(&["--log-key", &pinned, "chat", "--max-tokens", "8", "Hi."]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("log:      leaf 5 of 6 (inclusion verified"), "{err}");
    let (code, err) = svc(&["--log-key", &hex::encode([9u8; 32]), "receipt", "--proof", &out.receipt.address]);
    assert_ne!(code, 0, "a head signed by another key than the pinned one must fail: {err}");
    assert!(err.contains("signed by another key"), "{err}");
    // `svc chat` shows the reply, then fails on the log check.
    let (code, err) = svc(&["--log-key", &hex::encode([9u8; 32]), "chat", "--max-tokens", "8", "Hi again."]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("receipt:  ") && err.contains("transparency log check failed"), "{err}");

    // The operator publishes the log key beside the measurements (`log-key`): svc requires it
    // without being told, and a relay signing with another key fails the check.
    let published = stack.dir.path().join("published");
    std::fs::create_dir_all(&published).unwrap();
    std::fs::copy(
        concat!(env!("CARGO_MANIFEST_DIR"), "/../measurements/dev.json"),
        published.join("measurements.json"),
    )
    .unwrap();
    let chat_with_published = |log_key: &str| {
        std::fs::write(published.join("log-key"), format!("{log_key}\n")).unwrap();
        let out = Command::new(binary("svc"))
            .args(["--relay", &stack.relay_url, "--api-key", &stack.api_key])
            .arg("--measurements")
            .arg(published.join("measurements.json"))
            .arg("--dev-root")
            .arg(stack.dev_root_pem_path())
            .args(["chat", "--max-tokens", "8", "Hi."])
            .output()
            .unwrap();
        (out.status.code().unwrap(), String::from_utf8_lossy(&out.stderr).to_string())
    };
    let (code, err) = chat_with_published(&pinned);
    assert_eq!(code, 0, "{err}");
    let (code, err) = chat_with_published(&hex::encode([9u8; 32]));
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("signed by another key") && err.contains("published beside the measurements"), "{err}");
}

/// `n` sealed requests posted to the relay's `/tee/process` at once; the body of each 200
/// answer, `None` where the relay died first.
async fn burst(stack: &Stack, n: usize) -> Vec<Option<Value>> {
    let http = reqwest::Client::new();
    let enclave = format!("http://127.0.0.1:{}", stack.enclave_port);
    let key = get(&format!("{enclave}/public-key")).await.1;
    let key: [u8; 32] = shared::b64::decode_array(key["publicKey"].as_str().unwrap()).unwrap();
    let now = shared::time::unix_now();
    let plaintext = serde_json::to_vec(&shared::envelope::PromptPlaintext::from_prompt("Say ok.", now)).unwrap();
    let posts = (0..n).map(|_| {
        let envelope = shared::envelope::seal(&key, &plaintext, &mut rand_core::OsRng).unwrap().0;
        let post = http
            .post(format!("{}/tee/process", stack.relay_url))
            .bearer_auth(&stack.api_key)
            .json(&json!({"encryptedPrompt": envelope.to_json_string()}))
            .send();
        async move {
            let answer = post.await.ok()?;
            let status = answer.status().as_u16();
            let body: Value = answer.json().await.ok()?;
            assert_eq!(status, 200, "{body}");
            Some(body)
        }
    });
    e2e::join_all(posts).await
}

/// Receipts, and the charges and completions of paid calls, are committed in groups
/// (`relay/src/receipts/commit_log.rs`, `relay/src/billing/usage_writer.rs`). A relay killed
/// inside a group's transaction, and one killed right after a group committed but before any
/// answer left, loses no receipt it answered for and takes no money it did not earn: after the
/// restarts each answered receipt is there as it was answered, with its commit, in a log the
/// independent verifier accepts, the next receipts commit after them, no usage row stays
/// pending, and the balance is what was credited less the price of each completed call.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_relay_killed_mid_group_commit_loses_no_answered_receipt() {
    const PRICE: i64 = 1_000;
    const CREDIT: i64 = 1_000 * PRICE;
    let (model, _) = openai::start(vec![Turn::text("ok")]).await;
    let relay = json!({
        "rateLimits": {"perAddressPerMinute": 0, "perKeyPerMinute": 0},
        "teeProcessPricePerCall": PRICE,
        "abandonedUsageSecs": 3,
    });
    let options =
        StackOptions { model_base_url: Some(format!("{}/v1", model.base_url)), relay, ..StackOptions::default() };
    let mut stack = tokio::task::spawn_blocking(move || Stack::start_with(options)).await.unwrap();
    stack.credit_usdc(&relay::accounts::key_id(&stack.api_key), CREDIT);
    let mut answered: Vec<Value> = burst(&stack, 8).await.into_iter().map(Option::unwrap).collect();
    let failpoints =
        ["receipts:group:written", "receipts:group:committed", "billing:group:written", "billing:group:committed"];
    for failpoint in failpoints {
        tokio::task::block_in_place(|| stack.restart_relay(&[("SVC_RELAY_EXIT_AT", failpoint)]));
        // Requests arriving while a transaction runs wait for it and go together in the next.
        let wave = burst(&stack, 48).await;
        let exited = tokio::task::block_in_place(|| stack.relay.wait_exit(Duration::from_secs(30)));
        assert!(exited.is_some_and(|s| !s.success()), "{failpoint}: a group formed and the relay died");
        assert!(wave.iter().any(Option::is_none), "{failpoint}: some request was cut off");
        answered.extend(wave.into_iter().flatten());
        tokio::task::block_in_place(|| stack.restart_relay(&[]));
    }
    answered.extend(burst(&stack, 8).await.into_iter().map(Option::unwrap));

    for body in &answered {
        let onchain = &body["onchainAttestation"];
        let address = onchain["address"].as_str().unwrap();
        let (status, stored) = get(&format!("{}/attestation/{address}", stack.relay_url)).await;
        assert_eq!(status, 200, "answered receipt {address} is kept");
        assert_eq!(stored["enclaveSigR"], body["receipt"]["enclaveSigR"], "{stored}");
        let (status, by_tx) =
            get(&format!("{}/attestation/by-tx/{}", stack.relay_url, onchain["signature"].as_str().unwrap())).await;
        assert_eq!((status, by_tx["address"].as_str()), (200, Some(address)), "its commit is kept");
    }
    let head = sth(&stack).await;
    assert!(head.tree_size > answered.len() as u64, "the bundle's leaf and every answered receipt");
    let verdict = python_verifier(&stack, &[]);
    assert_eq!(verdict["ok"], true, "{verdict}");
    assert_eq!(verdict["checked"], head.tree_size);

    // The books: no call is left pending once the sweep ran, every answered call was charged,
    // and the balance is the credit less exactly one price per completed call.
    let mut rows = Vec::new();
    for _ in 0..100 {
        rows = usage_rows(&stack).await;
        if rows.iter().all(|r| r["status"] != "pending") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let completed = rows.iter().filter(|r| r["status"] == "completed").count();
    assert!(rows.iter().all(|r| r["status"] == "completed" || r["status"] == "refunded"), "{rows:?}");
    let price = json!(PRICE.to_string());
    assert!(rows.iter().all(|r| r["charged"] == price), "{rows:?}");
    assert!(completed >= answered.len(), "{completed} completed, {} answered", answered.len());
    let (status, balance) = e2e::http::send(
        reqwest::Client::new().get(format!("{}/api/v1/balance", stack.relay_url)).bearer_auth(&stack.api_key),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(balance["balances"][0]["amount"], (CREDIT - PRICE * completed as i64).to_string(), "{balance}");
}

/// Every usage row of the stack's key, paging with `nextCursor`.
async fn usage_rows(stack: &Stack) -> Vec<Value> {
    let mut rows = Vec::new();
    let mut cursor = String::new();
    loop {
        let url = format!("{}/api/v1/usage?limit=200{cursor}", stack.relay_url);
        let (status, page) = e2e::http::send(reqwest::Client::new().get(url).bearer_auth(&stack.api_key)).await;
        assert_eq!(status, 200, "{page}");
        rows.extend(page["data"].as_array().unwrap().iter().cloned());
        match page["nextCursor"].as_str() {
            Some(next) => cursor = format!("&cursor={next}"),
            None => return rows,
        }
    }
}
