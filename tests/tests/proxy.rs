//! `svc proxy` with the official OpenAI SDKs, unchanged, pointed at it: the Python `openai`
//! package (tests/peers/openai_proxy.py, venv from tools/peers.sh) and the npm `openai`
//! package (tests/openai-peer). Real relay, enclave and model server. Each asks a completion,
//! a streamed completion, the model list and an unknown model; the receipts the proxy names
//! exist and verify; the relay's log and database never hold the prompt (a canary); a proxy
//! that cannot verify the enclave does not start.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use e2e::{Process, Stack, binary, free_port, wait_http};
use rand_core::RngCore;
use serde_json::Value;

fn peers_dir() -> PathBuf {
    let dir = std::env::var("SVC_PEERS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| Path::new(env!("CARGO_MANIFEST_DIR")).join("../.cache/peers"));
    assert!(dir.join("requirements-openai/bin/python").exists(), "run tools/peers.sh (make test does)");
    dir
}

fn svc(stack: &Stack, dev_root: bool) -> Command {
    let mut cmd = Command::new(binary("svc"));
    cmd.args(["--relay", &stack.relay_url, "--api-key", &stack.api_key]);
    cmd.arg("--measurements").arg(concat!(env!("CARGO_MANIFEST_DIR"), "/../measurements/dev.json"));
    if dev_root {
        cmd.arg("--dev-root").arg(stack.dev_root_pem_path());
    }
    cmd
}

/// Starts the proxy; returns it and its base URL (`…/v1`).
fn proxy(stack: &Stack) -> (Process, String) {
    let port = free_port();
    let mut cmd = svc(stack, true);
    cmd.args(["proxy", "--listen", &format!("127.0.0.1:{port}")]);
    let process = Process::spawn_command(&mut cmd, stack.dir.path().join("proxy.log"));
    // Any answer (a 404 JSON) means it is up.
    wait_http(&format!("http://127.0.0.1:{port}/v1/models"));
    (process, format!("http://127.0.0.1:{port}/v1"))
}

fn run_peer(program: &Path, script: &Path, base: &str, prompt: &str) -> Value {
    let out = Command::new(program).arg(script).args([base, prompt]).output().expect("peer runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}: {stdout}\n{}", script.display(), String::from_utf8_lossy(&out.stderr));
    serde_json::from_str(&stdout).unwrap_or_else(|_| panic!("no JSON from {}: {stdout}", script.display()))
}

/// What both SDKs must see.
async fn check_report(stack: &Stack, report: &Value) {
    let c = &report["completion"];
    assert_eq!(c["object"], "chat.completion", "{report}");
    assert_eq!(c["role"], "assistant");
    assert_eq!(c["model"], "svc-gpu:gpt-oss:20b");
    assert!(c["content"].as_str().is_some_and(|t| !t.is_empty()), "{report}");
    assert!(c["total_tokens"].as_u64().unwrap() > 0);
    // The receipt the proxy names is the completion's, and the relay serves and the client
    // verifies it.
    let address = c["receipt"].as_str().expect("x-receipt-address");
    assert_eq!(c["id"], format!("chatcmpl-{address}"));
    let (receipt, _) = stack.client().receipt(&client::receipts::ReceiptQuery::parse(address).unwrap()).await.unwrap();
    assert_eq!(receipt.address, address);

    let s = &report["stream"];
    assert!(s["chunks"].as_u64().unwrap() >= 3, "{report}");
    assert_eq!(s["ids"].as_array().unwrap().len(), 1, "one completion id across chunks: {report}");
    assert!(s["content"].as_str().is_some_and(|t| !t.is_empty()), "{report}");
    assert_eq!(s["finish_reason"], "stop");

    let models: Vec<&str> = report["models"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert!(models.iter().any(|m| m.ends_with("gpt-oss:20b")), "{report}");

    let e = &report["error"];
    assert_eq!((e["status"].as_u64(), e["code"].as_str()), (Some(501), Some("gpu_not_configured")), "{report}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn openai_sdks_talk_privately_through_the_proxy() {
    let mut stack = tokio::task::spawn_blocking(Stack::start).await.unwrap();
    // Chat completions are paid per token from the key's balance.
    stack.credit_usdc(&relay::accounts::key_id(&stack.api_key), 1_000_000);
    let (mut proxy_process, base) = tokio::task::block_in_place(|| proxy(&stack));
    let mut random = [0u8; 12];
    rand_core::OsRng.fill_bytes(&mut random);
    let canary = format!("CANARY{}", hex::encode(random));
    let prompt = format!("Repeat this word: {canary}");

    let python = peers_dir().join("requirements-openai/bin/python");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("peers/openai_proxy.py");
    let report = tokio::task::block_in_place(|| run_peer(&python, &script, &base, &prompt));
    check_report(&stack, &report).await;

    let peer = Path::new(env!("CARGO_MANIFEST_DIR")).join("openai-peer");
    assert!(peer.join("node_modules/openai").exists(), "run tools/npm-install.sh tests/openai-peer (make test does)");
    let report = tokio::task::block_in_place(|| run_peer(Path::new("node"), &peer.join("openai.mjs"), &base, &prompt));
    check_report(&stack, &report).await;

    // A request the proxy cannot seal faithfully is refused before anything is sent.
    let bad = reqwest::Client::new()
        .post(format!("{base}/chat/completions"))
        .json(&serde_json::json!({"messages": [{"role": "tool", "content": canary}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status().as_u16(), 400);
    let body: Value = bad.json().await.unwrap();
    assert_eq!(body["error"]["type"], "invalid_request_error", "{body}");

    // The relay saw ciphertext only: no canary in its log or its database files.
    proxy_process.stop();
    stack.relay.stop();
    let log = stack.relay.log_text();
    assert!(log.contains("/api/v1/chat/completions"), "the relay log recorded the requests");
    assert!(!log.contains(&canary), "canary in the relay log");
    for entry in std::fs::read_dir(stack.relay_data_dir()).unwrap() {
        let path = entry.unwrap().path();
        let bytes = std::fs::read(&path).unwrap();
        assert!(!String::from_utf8_lossy(&bytes).contains(&canary), "canary in {}", path.display());
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_proxy_does_not_start_for_an_enclave_that_fails_verification() {
    let stack = tokio::task::spawn_blocking(Stack::start).await.unwrap();
    let port = free_port();
    // Without the dev root the development quote does not verify.
    let mut cmd = svc(&stack, false);
    let mut child = cmd.args(["proxy", "--listen", &format!("127.0.0.1:{port}")]).spawn().unwrap();
    let mut status = None;
    for _ in 0..100 {
        if let Some(s) = child.try_wait().unwrap() {
            status = Some(s);
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let Some(status) = status else {
        child.kill().unwrap();
        panic!("the proxy kept running for an enclave that failed verification");
    };
    assert_eq!(status.code(), Some(10));
    assert!(std::net::TcpStream::connect(("127.0.0.1", port)).is_err(), "nothing listens");
    // It answers in plaintext, so it listens on loopback only, named by address.
    for listen in ["0.0.0.0:8000", "localhost.example:8000", "localhost:8000", "not an address"] {
        let out = svc(&stack, true).args(["proxy", "--listen", listen]).output().unwrap();
        assert_eq!(out.status.code(), Some(30), "{listen}: {}", String::from_utf8_lossy(&out.stderr));
        assert!(String::from_utf8_lossy(&out.stderr).contains("loopback"), "{listen}");
    }
}
