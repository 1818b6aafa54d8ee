//! Helpers for managed-wallet tests (docs/wallets.md): raw requests with owner headers, the
//! owner's signature, `svc` against a swap world, polling sessions, funding the pool.

use std::time::{Duration, Instant};

use ed25519_dalek::{Signer, SigningKey};
use serde_json::{Value, json};
use shared::address::Address;

use crate::API_KEY;
use crate::swaps::{SOL, SwapWorld};

/// A second account: every route of another account's wallet answers it 403.
pub const OTHER_KEY: &str = "sk_svc_e2e_other_account";
pub const WAIT: Duration = Duration::from_secs(90);

/// A swap world whose relay knows both accounts, on the PostgreSQL at `database_url` when
/// given (else the relay's SQLite), and a webhook URL it accepts (nothing listens there; the
/// retries are not what these tests check).
pub async fn world_on(database_url: Option<String>) -> (SwapWorld, String) {
    world_with(json!({}), database_url).await
}

/// As [`world_on`], with `agents` merged into the relay's `agents` section.
pub async fn world_with(agents: Value, database_url: Option<String>) -> (SwapWorld, String) {
    let port = crate::free_port();
    let mut agents = agents;
    let mut wallets = json!({"webhookAllow": [format!("127.0.0.1:{port}")], "retryBaseSecs": 1,
                             "retryMaxSecs": 2, "webhookTimeoutSecs": 1, "pollMillis": 200});
    if let (Some(base), Some(extra)) = (wallets.as_object_mut(), agents["wallets"].as_object()) {
        base.extend(extra.clone());
    }
    agents["wallets"] = wallets;
    let mut relay = json!({"apiKeys": [API_KEY, OTHER_KEY]});
    if let Some(url) = database_url {
        relay["databaseUrl"] = json!(url);
    }
    (SwapWorld::start_with(agents, relay).await, format!("http://127.0.0.1:{port}/hook"))
}

/// A raw POST: the body as given, the owner headers `(timestamp, nonce, signature)` if any,
/// sent again as the same bytes while the enclave's quiet period after its boot runs (503
/// `pool_warming_up`, as `svc` does). Status 0 when no answer came (a relay that died
/// mid-request).
pub async fn post(w: &SwapWorld, path: &str, key: &str, body: &str, owner: Option<(&str, &str, &str)>) -> (u16, Value) {
    let deadline = Instant::now() + WAIT;
    loop {
        let answer = post_once(w, path, key, body, owner).await;
        if code(&answer) != (503, "pool_warming_up") || Instant::now() > deadline {
            return answer;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// One raw POST, as [`post`] without waiting.
pub async fn post_once(
    w: &SwapWorld,
    path: &str,
    key: &str,
    body: &str,
    owner: Option<(&str, &str, &str)>,
) -> (u16, Value) {
    let mut request = reqwest::Client::new()
        .post(format!("{}{path}", w.stack.relay_url))
        .bearer_auth(key)
        .header("content-type", "application/json")
        .body(body.to_string());
    if let Some((timestamp, nonce, signature)) = owner {
        request = request
            .header("x-owner-timestamp", timestamp)
            .header("x-owner-nonce", nonce)
            .header("x-owner-signature", signature);
    }
    match request.send().await {
        Ok(r) => (r.status().as_u16(), r.json().await.unwrap_or(Value::Null)),
        Err(e) => (0, json!({"error": "no_answer", "message": e.to_string()})),
    }
}

/// The session of the wallet's newest operation of `kind` (its audit log).
pub async fn newest_session(w: &SwapWorld, wallet_id: &str, kind: &str) -> String {
    let (_, audit) = get(w, &format!("/agents/v1/wallets/{wallet_id}/audit"), Some(API_KEY)).await;
    let entries = audit["entries"].as_array().cloned().unwrap_or_default();
    let entry = entries.iter().find(|e| e["kind"] == kind).unwrap_or_else(|| panic!("no {kind} entry: {audit}"));
    entry["details"]["sessionId"].as_str().unwrap().to_string()
}

/// A POST signed by `owner` over exactly `body` (a fresh nonce).
pub async fn post_signed(w: &SwapWorld, path: &str, owner: &SigningKey, body: &str) -> (u16, Value) {
    let nonce = hex::encode(crate::chain::new_key().to_bytes());
    let (t, n, s) = signed(owner, path, body, shared::time::unix_now(), &nonce[..16]);
    post(w, path, API_KEY, body, Some((&t, &n, &s))).await
}

pub async fn get(w: &SwapWorld, path: &str, key: Option<&str>) -> (u16, Value) {
    let mut request = reqwest::Client::new().get(format!("{}{path}", w.stack.relay_url));
    if let Some(key) = key {
        request = request.bearer_auth(key);
    }
    crate::http::send(request).await
}

/// The owner headers for `body` at `path`, signed by `key`.
pub fn signed(key: &SigningKey, path: &str, body: &str, timestamp: u64, nonce: &str) -> (String, String, String) {
    let message = shared::privacy::owner_message("POST", path, body.as_bytes(), timestamp, nonce);
    (timestamp.to_string(), nonce.to_string(), shared::b64::encode(key.sign(&message).to_bytes()))
}

/// `svc --json ARGS` against the stack, verifying the dev enclave; its JSON.
pub fn svc(w: &SwapWorld, args: &[&str]) -> Value {
    let out = svc_output(w, args);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "svc {args:?}: {stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_str(&stdout).unwrap_or_else(|_| panic!("svc {args:?}: not JSON: {stdout}"))
}

/// `svc --json ARGS` as it ran (its state directory the stack's), whatever its exit.
pub fn svc_output(w: &SwapWorld, args: &[&str]) -> std::process::Output {
    let measurements = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../measurements/dev.json");
    std::process::Command::new(crate::binary("svc"))
        .args(["--json", "--relay", &w.stack.relay_url, "--api-key", API_KEY, "--measurements"])
        .arg(measurements)
        .arg("--dev-root")
        .arg(w.stack.dev_root_pem_path())
        .env("SVC_STATE_DIR", w.stack.dir.path().join("svc-state"))
        .args(args)
        .output()
        .unwrap()
}

/// `(status, error code)` of an answer.
pub fn code(answer: &(u16, Value)) -> (u16, &str) {
    (answer.0, answer.1["error"].as_str().unwrap_or("?"))
}

/// Polls a session until it is settled or failed.
pub async fn settle(w: &SwapWorld, session_id: &str) -> Value {
    let deadline = Instant::now() + WAIT;
    loop {
        let (status, s) = get(w, &format!("/agents/v1/sessions/{session_id}"), Some(API_KEY)).await;
        assert_eq!(status, 200, "{s}");
        if s["state"] == "settled" || s["state"] == "failed" {
            return s;
        }
        assert!(Instant::now() < deadline, "session {session_id} stuck in {}", s["state"]);
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// The pool's address, made on first use; funded with SOL for fees and rent.
pub async fn fund_pool(w: &SwapWorld) -> Address {
    let (status, statement) = get(w, &format!("/agents/v1/reserves?mint={}", w.usdc), None).await;
    assert_eq!(status, 200, "{statement}");
    let pool = Address::parse(statement["pool"].as_str().unwrap()).unwrap();
    w.chain.fund_sol(&pool, 5 * SOL);
    pool
}

/// A wallet with an owner and `usdc` base units on its public balance, the pool funded: its
/// id, address and owner key.
pub async fn owned_wallet(w: &SwapWorld, hook: &str, usdc: u64) -> (String, Address, SigningKey) {
    let owner = crate::chain::new_key();
    let owner_address = crate::chain::address_of(&owner).to_string();
    let created = w.client().create_wallet(hook, Some(&owner_address)).await.unwrap();
    let wallet = created.priv_address;
    w.chain.mint_to(&w.usdc, &wallet, usdc).await;
    fund_pool(w).await;
    (created.wallet_id, wallet, owner)
}

/// A session's key (`ephemeralPubkey`: a swap's session key, a shield's intermediate key).
pub fn ephemeral(session: &Value) -> Address {
    Address::parse(session["ephemeralPubkey"].as_str().unwrap()).unwrap()
}

/// The session's key holds no lamports and no stablecoin: it closed.
pub async fn key_empty(w: &SwapWorld, session: &Value) -> bool {
    let key = ephemeral(session);
    w.lamports(&key).await == 0 && w.balance(&key, &w.usdc).await == 0
}
