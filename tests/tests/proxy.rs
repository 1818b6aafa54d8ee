//! `svc proxy` with the official OpenAI SDKs, unchanged, pointed at it: the Python `openai`
//! package (tests/peers/openai_proxy.py, venv from tools/peers.sh) and the npm `openai`
//! package (tests/openai-peer). Real relay, enclave and model server. Each asks a completion,
//! a streamed completion, the model list and an unknown model; the receipts the proxy names
//! exist and verify; the relay's log and database never hold the prompt (a canary); a proxy
//! that cannot verify the enclave does not start; web pages and callers without the token are
//! refused, and a relay that rate limits the proxy's start is waited out.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use e2e::{Process, Stack, StackOptions, binary, free_port};
use rand_core::RngCore;
use serde_json::{Value, json};

/// The proxy's `--token`, which the SDKs send as their API key.
const TOKEN: &str = "proxy-token-for-local-programs";

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

/// Starts the proxy with `--token`; returns it and its base URL (`…/v1`).
fn start_proxy(stack: &Stack) -> (Process, String) {
    let port = free_port();
    let mut cmd = svc(stack, true);
    cmd.args(["proxy", "--listen", &format!("127.0.0.1:{port}"), "--token", TOKEN]);
    let process = Process::spawn_command(&mut cmd, stack.dir.path().join("proxy.log"));
    (process, format!("http://127.0.0.1:{port}/v1"))
}

/// Waits until the proxy serves a caller with the token (`GET /v1/models` answers 200).
async fn wait_served(process: &Process, base: &str, within: Duration) {
    let http = reqwest::Client::builder().timeout(Duration::from_secs(5)).build().unwrap();
    let deadline = Instant::now() + within;
    loop {
        let answer = http.get(format!("{base}/models")).bearer_auth(TOKEN).send().await;
        if answer.as_ref().is_ok_and(|r| r.status().as_u16() == 200) {
            return;
        }
        assert!(Instant::now() < deadline, "the proxy never served: {}", process.log_text());
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Starts the proxy and waits until it serves.
async fn proxy(stack: &Stack) -> (Process, String) {
    let (process, base) = start_proxy(stack);
    wait_served(&process, &base, Duration::from_secs(30)).await;
    (process, base)
}

fn run_peer(program: &Path, script: &Path, base: &str, prompt: &str) -> Value {
    let out =
        Command::new(program).arg(script).args([base, prompt]).env("PROXY_TOKEN", TOKEN).output().expect("peer runs");
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
    let (mut proxy_process, base) = proxy(&stack).await;
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
        .bearer_auth(TOKEN)
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

/// What a refusal of the proxy says: (status, OpenAI error type, code).
async fn refusal(response: reqwest::Response) -> (u16, String, String) {
    let status = response.status().as_u16();
    let body: Value = response.json().await.unwrap();
    let text = |k: &str| body["error"][k].as_str().unwrap_or_default().to_string();
    (status, text("type"), text("code"))
}

/// The proxy spends the user's key on whoever reaches it. A relay that rate limits its start
/// is waited out (the `Retry-After`), not an exit. Then a web page's requests (from another
/// origin, or through the page's own name rebound to 127.0.0.1) get 403, a caller without the
/// token 401, a POST that is not JSON 415; a local program with the token is served.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_proxy_serves_local_programs_only_and_waits_out_a_rate_limit() {
    let options = StackOptions {
        relay: json!({"rateLimits": {"perAddressPerMinute": 8, "perKeyPerMinute": 0, "store": "memory"}}),
        ..StackOptions::default()
    };
    let stack = tokio::task::spawn_blocking(move || Stack::start_with(options)).await.unwrap();
    let http = reqwest::Client::builder().timeout(Duration::from_secs(5)).build().unwrap();

    // Use up this minute's requests from 127.0.0.1, then start the proxy.
    let retry_after: u64 = loop {
        let r = http.get(format!("{}/tee/public-key", stack.relay_url)).send().await.unwrap();
        if r.status().as_u16() == 429 {
            break r.headers()["retry-after"].to_str().unwrap().parse().unwrap();
        }
    };
    let started = Instant::now();
    let (mut process, base) = start_proxy(&stack);
    wait_served(&process, &base, Duration::from_secs(retry_after + 30)).await;
    let models = format!("{base}/models");
    assert!(process.log_text().contains("rate limiting; asking again in"), "{}", process.log_text());
    assert!(started.elapsed() >= Duration::from_secs(retry_after.saturating_sub(1)), "it waited the window out");

    let port = base.trim_start_matches("http://127.0.0.1:").trim_end_matches("/v1").to_string();
    let chat = format!("{base}/chat/completions");
    let body = json!({"messages": [{"role": "user", "content": "Say hi."}]}).to_string();
    // A page on another origin posting a "simple" request (no preflight), as a browser sends it.
    let csrf = http
        .post(&chat)
        .header("origin", "https://attacker.example")
        .header("sec-fetch-site", "cross-site")
        .header("sec-fetch-mode", "no-cors")
        .header("content-type", "text/plain;charset=UTF-8")
        .body(body.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(refusal(csrf).await, (403, "permission_error".into(), "forbidden_origin".into()));
    // DNS rebinding: the page's own name now resolves to 127.0.0.1, so its requests are
    // same-origin to the browser; the Host still names the page.
    let rebound = http
        .post(&chat)
        .header("host", format!("attacker.example:{port}"))
        .bearer_auth(TOKEN)
        .header("content-type", "application/json")
        .body(body.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(refusal(rebound).await, (403, "permission_error".into(), "forbidden_host".into()));
    for shown in [None, Some("wrong-token")] {
        let mut request = http.get(&models);
        if let Some(token) = shown {
            request = request.bearer_auth(token);
        }
        let answer = request.send().await.unwrap();
        assert_eq!(refusal(answer).await, (401, "authentication_error".into(), "invalid_api_key".into()));
    }
    let plain = http.post(&chat).bearer_auth(TOKEN).header("content-type", "text/plain").body(body).send().await;
    assert_eq!(refusal(plain.unwrap()).await, (415, "invalid_request_error".into(), "unsupported_media_type".into()));
    let listed: Value = http.get(&models).bearer_auth(TOKEN).send().await.unwrap().json().await.unwrap();
    assert!(listed["data"].as_array().is_some_and(|m| !m.is_empty()), "{listed}");
    process.stop();
}
