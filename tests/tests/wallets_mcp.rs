//! The owner's local MCP tool server (`svc mcp`, docs/mcp.md) driven by the official MCP
//! TypeScript SDK over stdio, against a real local chain, relay and enclave:
//! - the tools are listed with their schemas; an encrypt and a withdrawal for a wallet with an
//!   owner go through, signed by the server's owner key and checked by the enclave, and every
//!   amount is checked on chain;
//! - the relay's own MCP server, which holds no owner key, is refused by the enclave for the
//!   same wallet; a server holding another key is refused (403) and nothing moves;
//! - bad arguments are tool errors with the contract's codes;
//! - without the trust root the server cannot verify the enclave: it does not start, and
//!   nothing is sent.
//!
//! Needs `tools/npm-install.sh tests/mcp-peer tests/chain` (tools/test.sh runs it).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use e2e::swaps::SwapWorld;
use e2e::wallets::{WAIT, fund_pool, owned_wallet, settle, world_on};
use e2e::{API_KEY, chain::address_of, chain::new_key};
use ed25519_dalek::SigningKey;
use serde_json::{Value, json};
use shared::address::Address;

const USDC: u64 = 1_000_000;

fn mcp_peer() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("mcp-peer");
    assert!(dir.join("node_modules/@modelcontextprotocol/sdk").exists(), "run tools/npm-install.sh tests/mcp-peer");
    dir
}

/// Writes `key` as a Solana CLI keypair file under the stack's folder.
fn keypair_file(w: &SwapWorld, name: &str, key: &SigningKey) -> PathBuf {
    let path = w.stack.dir.path().join(name);
    let mut pair = key.to_bytes().to_vec();
    pair.extend_from_slice(&address_of(key).0);
    std::fs::write(&path, serde_json::to_string(&pair).unwrap()).unwrap();
    path
}

/// `svc mcp` as the SDK starts it: the stack's relay and key, trusting the dev root unless
/// `trusted` is false.
fn server_command(w: &SwapWorld, owner_file: &Path, trusted: bool) -> Vec<String> {
    let measurements = Path::new(env!("CARGO_MANIFEST_DIR")).join("../measurements/dev.json");
    let mut command = vec![
        e2e::binary("svc").display().to_string(),
        "--relay".into(),
        w.stack.relay_url.clone(),
        "--api-key".into(),
        API_KEY.into(),
        "--measurements".into(),
        measurements.display().to_string(),
    ];
    if trusted {
        command.extend(["--dev-root".into(), w.stack.dev_root_pem_path().display().to_string()]);
    }
    command.extend(["mcp".into(), "--owner-key".into(), owner_file.display().to_string()]);
    command
}

/// Runs the SDK client over stdio against `server`, making `calls` in order: whether it
/// succeeded, its JSON (`{tools, results}` or `{error}`) and its stderr (the server's too).
fn run_stdio(w: &SwapWorld, server: &[String], calls: &Value) -> (bool, Value, String) {
    let file = w.stack.dir.path().join(format!("calls-{}.json", rand_suffix()));
    std::fs::write(&file, calls.to_string()).unwrap();
    let out = Command::new("node")
        .arg(mcp_peer().join("mcp.mjs"))
        .arg("--stdio")
        .arg(serde_json::to_string(server).unwrap())
        .arg("--calls")
        .arg(&file)
        // The peer passes its environment on to the server: only the flags above configure it.
        .env_remove("SVC_DEV_ROOT")
        .env_remove("SVC_MEASUREMENTS")
        .env_remove("SVC_RELAY_URL")
        .env_remove("SVC_API_KEY")
        // Where the guardrails keep the day's spending, across the servers this test starts.
        .env("SVC_STATE_DIR", w.stack.dir.path().join("svc-state"))
        .output()
        .expect("node runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let value = serde_json::from_str(stdout.trim().lines().last().unwrap_or_default())
        .unwrap_or_else(|_| panic!("no JSON from the MCP peer: {stdout}\n{stderr}"));
    (out.status.success(), value, stderr)
}

fn rand_suffix() -> String {
    hex::encode(&new_key().to_bytes()[..6])
}

/// The one result of a single call.
fn only_result(out: &Value) -> &Value {
    let results = out["results"].as_array().unwrap_or_else(|| panic!("no results: {out}"));
    assert_eq!(results.len(), 1, "{out}");
    &results[0]
}

/// A tool error's `(isError, error code, status)`.
fn refusal(r: &Value) -> (bool, &str, i64) {
    let error = &r["structuredContent"];
    (r["isError"] == true, error["error"].as_str().unwrap_or("?"), error["status"].as_i64().unwrap_or(0))
}

/// A listed tool's input properties and required fields, sorted.
fn inputs(listing: &Value, name: &str) -> (Vec<String>, Vec<String>) {
    let tool = listing["tools"].as_array().unwrap().iter().find(|t| t["name"] == name).unwrap();
    let schema = &tool["inputSchema"];
    let mut properties: Vec<String> = schema["properties"].as_object().unwrap().keys().cloned().collect();
    let mut required: Vec<String> =
        schema["required"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()).collect();
    properties.sort_unstable();
    required.sort_unstable();
    (properties, required)
}

/// The wallet's audit kinds, newest first.
async fn audit_kinds(w: &SwapWorld, id: &str) -> Vec<String> {
    let audit = w.client().wallet_audit(id, 50, 0).await.unwrap();
    audit["entries"].as_array().unwrap().iter().map(|e| e["kind"].as_str().unwrap().to_string()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_owners_local_mcp_server_signs_wallet_requests_the_relays_cannot() {
    let (w, hook) = world_on(None).await;
    let (id, wallet, owner) = owned_wallet(&w, &hook, 20 * USDC).await;
    let pool = fund_pool(&w).await;
    let usdc = w.usdc.to_string();
    let owner_file = keypair_file(&w, "owner.json", &owner);
    let server = server_command(&w, &owner_file, true);

    // The tools, listed by the SDK with their schemas.
    let (ok, listed, stderr) = run_stdio(&w, &server, &json!([]));
    assert!(ok, "{listed}\n{stderr}");
    let mut logs = stderr;
    let names: Vec<&str> = listed["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names.iter().copied().collect::<std::collections::BTreeSet<_>>(), client::mcp::TOOL_NAMES.into());
    let withdraw = listed["tools"].as_array().unwrap().iter().find(|t| t["name"] == "priv_withdraw").unwrap();
    let mut required: Vec<&str> =
        withdraw["inputSchema"]["required"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    required.sort_unstable();
    assert_eq!(required, ["amount", "destinationPubkey", "mint", "walletId"]);
    assert!(withdraw["description"].as_str().unwrap().contains("MOVES REAL FUNDS"));

    // The relay's MCP server has no owner key: the enclave refuses its encrypt for this wallet.
    let relay_mcp = w.stack.dir.path().join("relay-calls.json");
    let encrypt =
        json!({"name": "priv_encrypt", "arguments": {"walletId": id, "mint": usdc, "amount": (5 * USDC).to_string()}});
    std::fs::write(&relay_mcp, json!([encrypt]).to_string()).unwrap();
    let out = Command::new("node")
        .arg(mcp_peer().join("mcp.mjs"))
        .args(["--url", &format!("{}/mcp/v1", w.stack.relay_url), "--key", API_KEY, "--calls"])
        .arg(&relay_mcp)
        .output()
        .unwrap();
    let refused: Value = serde_json::from_slice(&out.stdout).unwrap();
    let r = only_result(&refused);
    assert_eq!(refusal(r), (true, "owner_signature_required", 401), "{r}");
    // The tools both servers offer take the same arguments (the local ones also refuse unknown
    // fields).
    for name in ["priv_swap_managed", "priv_encrypt", "priv_shield", "priv_balance", "priv_session_status"] {
        assert_eq!(inputs(&listed, name), inputs(&refused, name), "{name}");
    }

    // A local server holding another key: the enclave refuses its signature; nothing moves.
    let stranger = keypair_file(&w, "stranger.json", &new_key());
    let (ok, out, stderr) = run_stdio(&w, &server_command(&w, &stranger, true), &json!([encrypt]));
    assert!(ok, "{out}\n{stderr}");
    logs.push_str(&stderr);
    let r = only_result(&out);
    assert_eq!(refusal(r), (true, "owner_signature_invalid", 403), "{r}");
    assert_eq!(w.balance(&wallet, &w.usdc).await, 20 * USDC);

    // Bad arguments: tool errors with the contract's codes, before anything is sent.
    let bad = json!([
        {"name": "priv_encrypt", "arguments": {"walletId": id, "mint": usdc}},
        {"name": "priv_encrypt", "arguments": {"walletId": id, "mint": usdc, "amount": 5}},
        {"name": "priv_encrypt", "arguments": {"walletId": id, "mint": usdc, "amount": "5", "destination": "x"}},
    ]);
    let (ok, out, stderr) = run_stdio(&w, &server, &bad);
    assert!(ok, "{out}\n{stderr}");
    logs.push_str(&stderr);
    let codes: Vec<(bool, &str, i64)> = out["results"].as_array().unwrap().iter().map(refusal).collect();
    let expected = [(true, "missing_required_fields", 400), (true, "invalid_field", 400), (true, "invalid_field", 400)];
    assert_eq!(codes, expected, "{out}");
    assert_eq!(audit_kinds(&w, &id).await, ["created"]);

    // Encrypt through the local server: signed as the owner, 5 move into the pool.
    let (ok, out, stderr) = run_stdio(&w, &server, &json!([encrypt]));
    assert!(ok, "{out}\n{stderr}");
    logs.push_str(&stderr);
    let r = only_result(&out);
    assert_eq!(r["isError"], false, "{r}");
    assert_eq!(r["structuredContent"]["status"], "running");
    let session = settle(&w, r["structuredContent"]["sessionId"].as_str().unwrap()).await;
    assert_eq!((session["state"].as_str(), session["mode"].as_str()), (Some("settled"), Some("encrypt")), "{session}");
    assert_eq!(w.balance(&wallet, &w.usdc).await, 15 * USDC);
    assert_eq!(w.balance(&pool, &w.usdc).await, 5 * USDC);

    // Guardrails, before anything is signed: a server started without --allow-destination pays
    // no one; one that allows `destination` with --max-amount 2 refuses 2.5 and refuses
    // another address. Nothing reaches the relay.
    let destination = address_of(&new_key()).to_string();
    let withdraw = |amount: u64, to: &str| json!({"name": "priv_withdraw", "arguments": {"walletId": id, "mint": usdc, "amount": amount.to_string(), "destinationPubkey": to}});
    let guarded = |extra: &[String]| {
        let mut command = server.clone();
        command.extend(["--allow-destination".to_string(), destination.clone()]);
        command.extend(extra.iter().cloned());
        command
    };
    let (ok, out, stderr) = run_stdio(&w, &server, &json!([withdraw(2 * USDC, &destination)]));
    assert!(ok, "{out}\n{stderr}");
    logs.push_str(&stderr);
    assert_eq!(refusal(only_result(&out)), (true, "destination_not_allowed", 0), "{out}");
    let max_two = guarded(&["--max-amount".into(), (2 * USDC).to_string()]);
    let stranger_address = address_of(&new_key()).to_string();
    let calls = json!([withdraw(5 * USDC / 2, &destination), withdraw(2 * USDC, &stranger_address)]);
    let (ok, out, stderr) = run_stdio(&w, &max_two, &calls);
    assert!(ok, "{out}\n{stderr}");
    logs.push_str(&stderr);
    let codes: Vec<(bool, &str, i64)> = out["results"].as_array().unwrap().iter().map(refusal).collect();
    assert_eq!(codes, [(true, "amount_over_limit", 0), (true, "destination_not_allowed", 0)], "{out}");
    assert_eq!(audit_kinds(&w, &id).await, ["encrypt", "created"], "nothing was sent");

    // Withdraw 2 to the allowed address through the local server: the order is checked there
    // (its answer carries it), and the payout lands once. The pool's quiet period after the
    // enclave's boot answers 503 pool_warming_up: ask again until it ends.
    let calls = json!([withdraw(2 * USDC, &destination)]);
    let deadline = Instant::now() + WAIT;
    let withdrawn = loop {
        let (ok, out, stderr) = run_stdio(&w, &max_two, &calls);
        assert!(ok, "{out}\n{stderr}");
        logs.push_str(&stderr);
        let r = only_result(&out).clone();
        if r["structuredContent"]["error"] != "pool_warming_up" {
            break r;
        }
        assert!(Instant::now() < deadline, "the pool stayed warming up");
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    assert_eq!(withdrawn["isError"], false, "{withdrawn}");
    let order = &withdrawn["structuredContent"]["order"];
    assert_eq!(
        (order["destination"].as_str(), order["amount"].as_str()),
        (Some(destination.as_str()), Some("2000000"))
    );
    assert_eq!(withdrawn["structuredContent"]["queueSignature"], order["signature"]);
    let destination = Address::parse(&destination).unwrap();
    let deadline = Instant::now() + WAIT;
    while w.balance(&destination, &w.usdc).await < 2 * USDC {
        assert!(Instant::now() < deadline, "the payout did not land");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    assert_eq!(w.balance(&destination, &w.usdc).await, 2 * USDC);

    // The day's spending is kept on disk: a new server with --max-daily 3 knows the 2 (or
    // more: each warming-up call counted) already paid today and refuses 2 more, unsent.
    let daily = guarded(&["--max-daily".into(), format!("{usdc}={}", 3 * USDC)]);
    let (ok, out, stderr) = run_stdio(&w, &daily, &json!([withdraw(2 * USDC, &destination.to_string())]));
    assert!(ok, "{out}\n{stderr}");
    logs.push_str(&stderr);
    assert_eq!(refusal(only_result(&out)), (true, "daily_limit_exceeded", 0), "{out}");
    assert_eq!(audit_kinds(&w, &id).await, ["withdraw", "encrypt", "created"]);

    // The balance tool reads the private balance the enclave's book holds.
    let calls = json!([{"name": "priv_balance", "arguments": {"walletId": id, "mints": usdc}}]);
    let (ok, out, _) = run_stdio(&w, &server, &calls);
    assert!(ok);
    let balances = only_result(&out)["structuredContent"]["balances"].as_array().unwrap().clone();
    let encrypted = balances.iter().find(|b| b["state"] == "encrypted").unwrap();
    assert_eq!(encrypted["raw"], "3000000", "{balances:?}");

    // Without the trust root the server cannot verify the enclave: it does not start (exit 10
    // from svc, so the SDK's connection fails), and nothing is sent.
    let (ok, out, stderr) = run_stdio(&w, &server_command(&w, &owner_file, false), &json!([encrypt]));
    assert!(!ok, "{out}");
    assert!(stderr.contains("the enclave failed verification"), "{stderr}");
    assert_eq!(audit_kinds(&w, &id).await, ["withdraw", "encrypt", "created"]);
    assert_eq!(w.balance(&wallet, &w.usdc).await, 15 * USDC);
    logs.push_str(&stderr);

    // The owner's secret never reaches what the servers wrote.
    let secret = serde_json::to_string(&owner.to_bytes().to_vec()).unwrap();
    assert!(!logs.contains(&secret[1..secret.len() - 1]));
}
