//! Managed wallets (Mode A), first slice, end to end on a real local chain (Surfpool): create
//! (with `svc wallet create`), fund-intent signed by a payer and sent on the chain, the balance
//! that then reports it, the audit log's order and pages, 403 for another account on every
//! route, bad input on every route with its code, and webhooks verified by the Standard
//! Webhooks reference library (PyPI `standardwebhooks`, tests/peers/webhook_peer.py), retried
//! after the receiver was down, none lost across a relay SIGKILL.
//!
//! Needs `tools/peers.sh` (the peers' location comes in `SVC_PEERS_DIR`).

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use e2e::swaps::{SOL, SwapWorld};
use e2e::wallets::svc;
use e2e::{API_KEY, Process};
use serde_json::{Value, json};
use shared::address::Address;

/// A second account: its key is configured too, so its key id differs from [`API_KEY`]'s.
const OTHER_KEY: &str = "sk_svc_e2e_other_account";
const TEN_USDC: u64 = 10_000_000;
const WAIT: Duration = Duration::from_secs(90);

fn python() -> PathBuf {
    let dir = std::env::var("SVC_PEERS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| Path::new(env!("CARGO_MANIFEST_DIR")).join("../.cache/peers"));
    let python = dir.join("requirements-webhooks/bin/python");
    assert!(python.exists(), "{} is missing: run tools/peers.sh (make test does)", python.display());
    python
}

fn peer_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("peers/webhook_peer.py")
}

/// The Standard Webhooks receiver on 127.0.0.1:`port`, recording into `log`.
fn start_receiver(port: u16, log: &Path, dir: &Path) -> Process {
    let mut cmd = Command::new(python());
    cmd.arg(peer_script()).arg("serve").arg(port.to_string()).arg(log);
    let process = Process::spawn_command(&mut cmd, dir.join(format!("receiver-{port}-{}.log", e2e::free_port())));
    let deadline = Instant::now() + Duration::from_secs(20);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "the webhook receiver did not start");
        std::thread::sleep(Duration::from_millis(100));
    }
    process
}

/// Every recorded request verified with `secret` by the reference library.
fn verify(secret: &str, log: &Path) -> Value {
    let out = Command::new(python()).arg(peer_script()).arg("verify").arg(secret).arg(log).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn recorded(log: &Path) -> usize {
    std::fs::read_to_string(log).map(|t| t.lines().count()).unwrap_or(0)
}

/// The relay's `agents` section for wallets whose webhooks go to 127.0.0.1:`port` (allowed
/// explicitly: the guard refuses loopback otherwise), retried every second or two.
fn agents(port: u16) -> Value {
    json!({"wallets": {"webhookAllow": [format!("127.0.0.1:{port}")], "retryBaseSecs": 1, "retryMaxSecs": 2,
                       "webhookTimeoutSecs": 2,
                       "pollMillis": 200}})
}

async fn world(port: u16) -> SwapWorld {
    world_on(port, None).await
}

/// As [`world`], on the PostgreSQL at `database_url` when given (else the relay's SQLite).
async fn world_on(port: u16, database_url: Option<String>) -> SwapWorld {
    let mut relay = json!({"apiKeys": [API_KEY, OTHER_KEY]});
    if let Some(url) = database_url {
        relay["databaseUrl"] = json!(url);
    }
    SwapWorld::start_with(agents(port), relay).await
}

async fn call(method: &str, url: &str, key: Option<&str>, body: Option<&str>) -> (u16, Value) {
    let mut request = reqwest::Client::new().request(method.parse().unwrap(), url);
    if let Some(key) = key {
        request = request.bearer_auth(key);
    }
    if let Some(body) = body {
        request = request.header("content-type", "application/json").body(body.to_string());
    }
    let r = request.send().await.unwrap();
    (r.status().as_u16(), r.json().await.unwrap_or(Value::Null))
}

async fn wait_until<F: std::future::Future<Output = bool>>(what: &str, mut f: impl FnMut() -> F) {
    let deadline = Instant::now() + WAIT;
    while !f().await {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn delivery_log(w: &SwapWorld, id: &str) -> Value {
    let (status, log) =
        call("GET", &format!("{}/agents/v1/wallets/{id}/webhooks", w.stack.relay_url), Some(API_KEY), None).await;
    assert_eq!(status, 200, "{log}");
    log
}

fn code(answer: &(u16, Value)) -> (u16, &str) {
    (answer.0, answer.1["error"].as_str().unwrap_or("?"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_wallet_is_created_funded_audited_and_its_webhooks_verify() {
    let port = e2e::free_port();
    let w = world(port).await;
    let base = w.stack.relay_url.clone();
    let hooks = w.stack.dir.path().join("hooks.jsonl");
    let _receiver = start_receiver(port, &hooks, w.stack.dir.path());

    // Create, through the CLI.
    let created = svc(&w, &["wallet", "create", "--webhook-url", &format!("http://127.0.0.1:{port}/hook")]);
    let id = created["walletId"].as_str().unwrap().to_string();
    assert!(shared::swap::parse_uuid(&id).is_some(), "{created}");
    let address = Address::parse(created["privAddress"].as_str().unwrap()).expect("a base58 address");
    assert_eq!(created["network"], "mainnet");
    assert!(created["fundingHint"].as_str().unwrap().contains(&address.to_string()));
    let secret = created["webhookSecret"].as_str().unwrap().to_string();
    assert!(secret.starts_with("whsec_") && shared::b64::decode(&secret[6..]).unwrap().len() == 32);

    // Fund through the CLI: the payer signs the relay's transaction, checked first; the chain
    // moves exactly that.
    let payer = w.payer(SOL, 100_000_000).await;
    let (usdc, token) = (w.usdc.to_string(), w.token.to_string());
    let funded = svc(
        &w,
        &[
            "wallet",
            "fund",
            &id,
            "--mint",
            &usdc,
            "--amount",
            &TEN_USDC.to_string(),
            "--payer-key",
            payer.key_file.to_str().unwrap(),
            "--rpc-url",
            &w.chain.rpc_url,
            "--to",
            &address.to_string(),
        ],
    );
    assert_eq!(funded["to"], address.to_string().as_str(), "{funded}");
    assert_eq!(w.balance(&address, &w.usdc).await, TEN_USDC);
    assert_eq!(w.balance(&payer.address, &w.usdc).await, 100_000_000 - TEN_USDC);

    // A second funding through the library, and the balance route reports both, in order of
    // the mints asked, each mint's private (encrypted) balance first: none was encrypted; the
    // token never sent is a public zero.
    let client = w.client();
    let intent = client.fund_intent(&id, &usdc, "5000000", &payer.address.to_string()).await.unwrap();
    assert_eq!((intent.mint, intent.amount.0, intent.to), (w.usdc, 5_000_000, address));
    let tx = client::wallets::check_intent(&intent, &payer.address, &w.usdc, 5_000_000, 6).unwrap();
    client::wallets::sign_and_send(&w.rpc, tx, &payer.key, intent.last_valid_block_height).await.unwrap();
    // Each private balance carries the enclave's signed statement of it (svc checked each against
    // the attested key): the genesis book of each mint, nothing credited.
    let mut balances = svc(&w, &["wallet", "balance", &id, "--mints", &format!("{usdc},{token}")]);
    for entry in balances["balances"].as_array_mut().unwrap().iter_mut().filter(|e| e["state"] == "encrypted") {
        let statement = entry.as_object_mut().unwrap().remove("statement").unwrap();
        assert_eq!((statement["balance"].as_str(), statement["bookVersion"].as_u64()), (Some("0"), Some(0)));
        assert_eq!((statement["walletId"].as_str(), &statement["mint"]), (Some(id.as_str()), &entry["mint"]));
    }
    assert_eq!(
        balances,
        json!({"balances": [{"mint": usdc, "state": "encrypted", "raw": "0"},
                            {"mint": usdc, "state": "public", "raw": "15000000"},
                            {"mint": token, "state": "encrypted", "raw": "0"},
                            {"mint": token, "state": "public", "raw": "0"}]})
    );

    // The audit log: newest first, paged.
    let audit = svc(&w, &["wallet", "audit", &id]);
    let kinds: Vec<&str> = audit["entries"].as_array().unwrap().iter().map(|e| e["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["fund_intent", "fund_intent", "created"], "{audit}");
    let times: Vec<&str> = audit["entries"].as_array().unwrap().iter().map(|e| e["at"].as_str().unwrap()).collect();
    assert!(times.windows(2).all(|p| p[0] > p[1]), "strictly newest first: {times:?}");
    assert_eq!(audit["entries"][0]["details"]["amount"], "5000000");
    assert_eq!(audit["entries"][1]["details"]["amount"], TEN_USDC.to_string().as_str());
    assert_eq!(audit["nextOffset"], Value::Null);
    let page = |q: &str| {
        let url = format!("{base}/agents/v1/wallets/{id}/audit?{q}");
        async move { call("GET", &url, Some(API_KEY), None).await }
    };
    let first = page("limit=2").await.1;
    assert_eq!((first["entries"].as_array().unwrap().len(), first["nextOffset"].as_i64()), (2, Some(2)));
    let last = page("limit=2&offset=2").await.1;
    assert_eq!((last["entries"][0]["kind"].as_str(), last["nextOffset"].as_i64()), (Some("created"), None));

    // Another account gets 403 on every route of the wallet; no key, 401; no wallet, 404.
    let routes = [
        ("POST", format!("/agents/v1/wallets/{id}/fund-intent"), Some(r#"{"mint": "x"}"#)),
        ("GET", format!("/agents/v1/wallets/{id}/balance?mints={usdc}"), None),
        ("GET", format!("/agents/v1/wallets/{id}/audit"), None),
        ("GET", format!("/agents/v1/wallets/{id}/webhooks"), None),
        ("GET", format!("/agents/v1/wallets/{id}/certificate"), None),
        ("GET", format!("/agents/v1/wallets/{id}/requests/some-nonce"), None),
    ];
    for (method, path, body) in &routes {
        let url = format!("{base}{path}");
        assert_eq!(code(&call(method, &url, Some(OTHER_KEY), *body).await), (403, "forbidden"), "{method} {path}");
        assert_eq!(code(&call(method, &url, None, *body).await), (401, "unauthorized"), "{method} {path}");
        let missing = url.replace(&id, "0f8e4a2c-1b3d-4e5f-8a9b-0c1d2e3f4a5b");
        assert_eq!(code(&call(method, &missing, Some(API_KEY), *body).await), (404, "not_found"), "{method} {path}");
    }

    // A nonce no request was signed with: 404 on the account's own wallet.
    let unknown = format!("{base}/agents/v1/wallets/{id}/requests/never-used");
    assert_eq!(code(&call("GET", &unknown, Some(API_KEY), None).await), (404, "not_found"));
    // The certificate names this wallet, as the enclave sealed it (no owner).
    let certificate = call("GET", &format!("{base}/agents/v1/wallets/{id}/certificate"), Some(API_KEY), None).await;
    assert_eq!(certificate.0, 200, "{}", certificate.1);
    assert_eq!(
        (certificate.1["walletId"].as_str(), certificate.1["address"].as_str(), &certificate.1["ownerPubkey"]),
        (Some(id.as_str()), Some(address.to_string().as_str()), &Value::Null)
    );

    // Webhooks: one event per operation, each verified by the reference library.
    wait_until("three webhook deliveries", || async { recorded(&hooks) >= 3 }).await;
    let verified = verify(&secret, &hooks);
    assert_eq!(verified["failed"], json!([]), "{verified}");
    let events = verified["verified"].as_array().unwrap();
    let types: Vec<&str> = events.iter().map(|e| e["payload"]["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["wallet.created", "wallet.fund_intent", "wallet.fund_intent"]);
    assert_eq!(events[0]["payload"]["data"]["walletId"], id.as_str());
    assert_eq!(events[0]["payload"]["data"]["privAddress"], address.to_string().as_str());
    // Each event's webhook-id is its audit entry's id.
    let audit_ids: Vec<&str> =
        audit["entries"].as_array().unwrap().iter().rev().map(|e| e["id"].as_str().unwrap()).collect();
    let event_ids: Vec<&str> = events.iter().map(|e| e["id"].as_str().unwrap()).collect();
    assert_eq!(event_ids, audit_ids);
    // The library does check: another secret verifies none.
    let wrong = verify(&format!("whsec_{}", shared::b64::encode([7u8; 32])), &hooks);
    assert_eq!((wrong["verified"].as_array().unwrap().len(), wrong["failed"].as_array().unwrap().len()), (0, 3));
    let log = delivery_log(&w, &id).await;
    assert!(log["messages"].as_array().unwrap().iter().all(|m| m["state"] == "delivered"), "{log}");
    assert!(log["deliveries"].as_array().unwrap().iter().all(|d| d["httpStatus"] == 204), "{log}");
}

e2e::on_sqlite_and_postgres!(retried_and_kept: webhooks_are_retried_after_the_receiver_was_down_and_none_is_lost_across_a_relay_kill, on_postgres_webhooks_are_retried_and_none_is_lost_across_a_relay_kill);

/// A delivery is guarded too: a URL allowed at create is refused at delivery once the
/// configuration no longer allows its address (as a host whose DNS moved to a private address
/// would be), and the refusal is a failed attempt in the log.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_private_address_is_refused_at_delivery() {
    let port = e2e::free_port();
    let mut w = world(port).await;
    let base = w.stack.relay_url.clone();
    let body = json!({"webhookUrl": format!("http://127.0.0.1:{port}/hook")}).to_string();
    let (status, created) = call("POST", &format!("{base}/agents/v1/wallets"), Some(API_KEY), Some(&body)).await;
    assert_eq!(status, 201, "{created}");
    let id = created["walletId"].as_str().unwrap().to_string();
    let config_path = w.stack.dir.path().join("relay.json");
    let mut config: Value = serde_json::from_str(&std::fs::read_to_string(&config_path).unwrap()).unwrap();
    config["agents"]["wallets"]["webhookAllow"] = json!([]);
    std::fs::write(&config_path, config.to_string()).unwrap();
    w.stack.restart_relay(&[]);
    let hooks = w.stack.dir.path().join("hooks.jsonl");
    let _receiver = start_receiver(port, &hooks, w.stack.dir.path());
    let ww = &w;
    wait_until("a refused attempt", || async {
        delivery_log(ww, &id).await["deliveries"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["error"].as_str().is_some_and(|e| e.contains("private, local or reserved")))
    })
    .await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(recorded(&hooks), 0, "nothing reached the private address");
    let log = delivery_log(&w, &id).await;
    assert_eq!(log["messages"][0]["state"], "pending", "{log}");
}

async fn retried_and_kept(database_url: Option<String>) {
    let port = e2e::free_port();
    let mut w = world_on(port, database_url).await;
    let base = w.stack.relay_url.clone();
    let hooks = w.stack.dir.path().join("hooks.jsonl");

    // The receiver is down: the created event fails, and is tried again, with backoff.
    let body = json!({"webhookUrl": format!("http://127.0.0.1:{port}/hook")}).to_string();
    let (status, created) = call("POST", &format!("{base}/agents/v1/wallets"), Some(API_KEY), Some(&body)).await;
    assert_eq!(status, 201, "{created}");
    let id = created["walletId"].as_str().unwrap().to_string();
    let secret = created["webhookSecret"].as_str().unwrap().to_string();
    let ww = &w;
    wait_until("two failed attempts", || async {
        let log = delivery_log(ww, &id).await;
        log["deliveries"].as_array().unwrap().len() >= 2
    })
    .await;
    let log = delivery_log(&w, &id).await;
    let first = &log["deliveries"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(
        (first["attempt"].as_i64(), first["delivered"].as_bool(), first["httpStatus"].as_i64()),
        (Some(1), Some(false), None),
        "{log}"
    );
    assert_eq!(log["messages"][0]["state"], "pending");

    // Up again: the next retry delivers it.
    let mut receiver = start_receiver(port, &hooks, w.stack.dir.path());
    wait_until("the created event delivered", || async { recorded(&hooks) >= 1 }).await;
    let log = delivery_log(&w, &id).await;
    let delivered = &log["deliveries"][0];
    assert_eq!((delivered["delivered"].as_bool(), delivered["httpStatus"].as_i64()), (Some(true), Some(204)), "{log}");
    assert!(delivered["attempt"].as_i64().unwrap() >= 3, "{log}");

    // Down again; three operations; the relay is SIGKILLed with their events undelivered and
    // started again; the receiver comes back: every event arrives.
    receiver.stop();
    let payer = e2e::chain::address_of(&e2e::chain::new_key()).to_string();
    for amount in ["1000000", "2000000", "3000000"] {
        let body = json!({"mint": w.usdc.to_string(), "amount": amount, "payerPubkey": payer}).to_string();
        let answer =
            call("POST", &format!("{base}/agents/v1/wallets/{id}/fund-intent"), Some(API_KEY), Some(&body)).await;
        assert_eq!(answer.0, 200, "{}", answer.1);
    }
    w.stack.restart_relay(&[]);
    let pending = delivery_log(&w, &id).await;
    let states: Vec<&str> =
        pending["messages"].as_array().unwrap().iter().map(|m| m["state"].as_str().unwrap()).collect();
    assert_eq!(states, ["pending", "pending", "pending", "delivered"], "{pending}");
    let _receiver = start_receiver(port, &hooks, w.stack.dir.path());
    wait_until("four events delivered", || async { recorded(&hooks) >= 4 }).await;
    let ww = &w;
    wait_until("every message delivered", || async {
        delivery_log(ww, &id).await["messages"].as_array().unwrap().iter().all(|m| m["state"] == "delivered")
    })
    .await;
    let verified = verify(&secret, &hooks);
    assert_eq!(verified["failed"], json!([]), "{verified}");
    let mut amounts: Vec<&str> = verified["verified"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["payload"]["data"]["amount"].as_str())
        .collect();
    amounts.sort();
    amounts.dedup();
    assert_eq!(amounts, ["1000000", "2000000", "3000000"], "{verified}");
}
