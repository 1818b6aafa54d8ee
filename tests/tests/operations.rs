//! What operators read (issue 18, operations), against the real binaries: `GET /metrics` parsed
//! by a real Prometheus parser (prometheus_client's `text_string_to_metric_families`, run from
//! `tests/peers/metrics_parse.py`), its counters moving under the right route template and
//! status, nothing a caller sent in it, the enclave gauge falling to 0 when the enclave stops;
//! and the relay's JSON log lines (`SVC_LOG_FORMAT=json`).
//!
//! Needs `tools/peers.sh` (tools/test.sh runs it); the peers' location comes in `SVC_PEERS_DIR`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use e2e::{Stack, StackOptions};
use serde_json::{Value, json};
use standins::openai::{self, Turn};

/// An API key and a prompt this test sends; neither may appear in a scrape or a log line.
const CANARY_KEY: &str = "sk_svc_canary_key_5ee1b0a7c3";
const CANARY_PROMPT: &str = "canary prompt 7d1f3c: what is the airspeed of an unladen swallow";
const AGENT_PRICE: i64 = 1_000;
const CHAT_PRICE: i64 = 500;

fn metrics_python() -> PathBuf {
    let dir = std::env::var("SVC_PEERS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| Path::new(env!("CARGO_MANIFEST_DIR")).join("../.cache/peers"));
    let python = dir.join("requirements-metrics/bin/python");
    assert!(python.exists(), "{} is missing: run tools/peers.sh (make test does)", python.display());
    python
}

/// One scrape: its text and what the parser made of it.
struct Scrape {
    text: String,
    families: Vec<Value>,
}

impl Scrape {
    /// The value of the sample `name` whose labels are exactly `labels`.
    fn value(&self, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
        let want: serde_json::Map<String, Value> = labels.iter().map(|(k, v)| (k.to_string(), json!(v))).collect();
        self.families
            .iter()
            .flat_map(|f| f["samples"].as_array().into_iter().flatten())
            .find(|s| s["name"] == name && s["labels"].as_object() == Some(&want))
            .map(|s| s["value"].as_f64().unwrap_or(f64::INFINITY))
    }

    /// Like [`Self::value`], 0 when the series does not exist yet.
    fn count(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        self.value(name, labels).unwrap_or(0.0)
    }

    fn requests(&self, route: &str, method: &str, status: &str) -> f64 {
        self.count("svc_http_requests_total", &[("route", route), ("method", method), ("status", status)])
    }

    fn family(&self, name: &str) -> &Value {
        self.families.iter().find(|f| f["name"] == name).unwrap_or_else(|| panic!("no family {name}:\n{}", self.text))
    }

    /// The histogram of `route`: its buckets in order and its count.
    fn latency(&self, route: &str) -> (Vec<(String, f64)>, f64) {
        let family = self.family("svc_http_request_duration_seconds");
        assert_eq!(family["type"], "histogram");
        let samples = family["samples"].as_array().unwrap();
        let of_route =
            |name: &'static str| samples.iter().filter(move |s| s["name"] == name && s["labels"]["route"] == route);
        let buckets = of_route("svc_http_request_duration_seconds_bucket")
            .map(|s| {
                let le = s["labels"]["le"].as_str().unwrap().to_string();
                (le, s["value"].as_f64().unwrap())
            })
            .collect();
        let count = of_route("svc_http_request_duration_seconds_count").next().unwrap()["value"].as_f64().unwrap();
        (buckets, count)
    }
}

async fn scrape(base: &str) -> Scrape {
    let response = reqwest::get(format!("{base}/metrics")).await.unwrap();
    assert_eq!(response.status(), 200);
    let content_type = response.headers()["content-type"].to_str().unwrap().to_string();
    assert!(content_type.starts_with("text/plain; version=0.0.4"), "{content_type}");
    let text = response.text().await.unwrap();
    let mut child = Command::new(metrics_python())
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("peers/metrics_parse.py"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "the parser refused the scrape: {}\n{text}", String::from_utf8_lossy(&out.stderr));
    let parsed: Value = serde_json::from_slice(&out.stdout).unwrap();
    let families = parsed["families"].as_array().unwrap().clone();
    // The format wants each family in one piece: a name seen twice is a split family.
    let mut names: Vec<&str> = families.iter().map(|f| f["name"].as_str().unwrap()).collect();
    names.sort_unstable();
    let before = names.len();
    names.dedup();
    assert_eq!(before, names.len(), "a family appears twice:\n{text}");
    Scrape { text, families }
}

async fn agent(base: &str, key: &str, prompt: &str) -> (u16, Value) {
    let r = reqwest::Client::new()
        .post(format!("{base}/agent"))
        .bearer_auth(key)
        .json(&json!({"prompt": prompt, "useTools": false}))
        .send()
        .await
        .unwrap();
    (r.status().as_u16(), r.json().await.unwrap())
}

async fn status_of(url: &str) -> u16 {
    reqwest::get(url).await.unwrap().status().as_u16()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn metrics_count_by_template_keep_out_what_callers_send_and_see_the_enclave_stop() {
    // Turns in call order: the paid /agent call, the sealed chat (the enclave's call), then
    // failures for the second /agent call.
    let turns = vec![Turn::text("paid answer"), Turn::text("sealed answer"), Turn::Fail(500, "down".into())];
    let (model, _seen) = openai::start(turns).await;
    let relay = json!({
        "apiKeys": [e2e::API_KEY, CANARY_KEY],
        "agentPricePerCall": AGENT_PRICE,
        "teeProcessPricePerCall": CHAT_PRICE,
    });
    let options =
        StackOptions { model_base_url: Some(format!("{}/v1", model.base_url)), relay, ..StackOptions::default() };
    let mut stack = tokio::task::spawn_blocking(move || Stack::start_with(options)).await.unwrap();
    stack.credit_usdc(&relay::accounts::key_id(CANARY_KEY), 10 * AGENT_PRICE);
    stack.api_key = CANARY_KEY.into();
    let base = stack.relay_url.clone();

    let before = scrape(&base).await;
    assert_eq!(before.value("svc_enclave_up", &[("enclave", "0")]), Some(1.0), "{}", before.text);
    // The one leaf at start: the web bundle the relay serves (docs/web.md).
    assert_eq!(before.value("svc_tlog_size", &[]), Some(1.0));
    assert_eq!(before.value("svc_database_up", &[]), Some(1.0));
    for outcome in ["completed", "refunded", "abandoned_refunded"] {
        assert_eq!(before.value("svc_usage_rows_total", &[("outcome", outcome)]), Some(0.0), "{outcome}");
    }
    for outcome in ["succeeded", "failed"] {
        assert_eq!(before.value("svc_x402_settlements_total", &[("outcome", outcome)]), Some(0.0), "{outcome}");
    }
    for (name, kind) in [
        ("svc_http_requests", "counter"),
        ("svc_usage_rows", "counter"),
        ("svc_enclave_up", "gauge"),
        ("svc_tlog_size", "gauge"),
    ] {
        assert_eq!(before.family(name)["type"], kind, "{name}");
    }

    // Requests whose paths hold an address and a canary; none of it may reach a label.
    let address = shared::address::Address([7u8; 32]).to_string();
    for _ in 0..3 {
        assert_eq!(status_of(&format!("{base}/health")).await, 200);
    }
    assert_eq!(status_of(&format!("{base}/attestation/{address}")).await, 404);
    assert_eq!(status_of(&format!("{base}/nowhere/canary-path-4b2e")).await, 404);
    let unknown_key = reqwest::Client::new()
        .get(format!("{base}/api/v1/balance"))
        .bearer_auth("sk_svc_canary_unknown_91d0")
        .send()
        .await
        .unwrap();
    assert_eq!(unknown_key.status(), 401);

    // Paid calls: one completed, one refunded, and a sealed chat whose receipt joins the log.
    let (status, body) = agent(&base, CANARY_KEY, CANARY_PROMPT).await;
    assert_eq!(status, 200, "{body}");
    let chat = stack.client().chat(CANARY_PROMPT, &client::chat::ChatOptions::default()).await.unwrap();
    assert_eq!(chat.reply, "sealed answer");
    let (status, body) = agent(&base, CANARY_KEY, CANARY_PROMPT).await;
    assert_eq!((status, body["error"].as_str()), (502, Some("model_error")), "{body}");

    let after = scrape(&base).await;
    let delta = |route: &str, method: &str, status: &str| {
        after.requests(route, method, status) - before.requests(route, method, status)
    };
    assert_eq!(delta("/health", "GET", "200"), 3.0, "{}", after.text);
    assert_eq!(delta("/attestation/{address}", "GET", "404"), 1.0, "{}", after.text);
    assert!(delta("unmatched", "GET", "404") >= 1.0, "{}", after.text);
    assert_eq!(delta("/api/v1/balance", "GET", "401"), 1.0, "{}", after.text);
    assert_eq!(delta("/agent", "POST", "200"), 1.0, "{}", after.text);
    assert_eq!(delta("/agent", "POST", "502"), 1.0, "{}", after.text);
    assert_eq!(delta("/tee/process", "POST", "200"), 1.0, "{}", after.text);
    assert!(after.requests("/metrics", "GET", "200") >= 1.0, "the first scrape is counted");

    // The histogram of /agent: two observations, cumulative buckets ending at the count.
    let (buckets, count) = after.latency("/agent");
    assert_eq!(count, 2.0);
    assert_eq!(buckets.last().map(|(le, v)| (le.as_str(), *v)), Some(("+Inf", 2.0)), "{buckets:?}");
    assert!(buckets.windows(2).all(|w| w[0].1 <= w[1].1), "buckets are cumulative: {buckets:?}");
    assert!(buckets.len() > 10, "{buckets:?}");

    // Billing outcomes and the log.
    let usage = |s: &Scrape, outcome: &str| s.count("svc_usage_rows_total", &[("outcome", outcome)]);
    assert_eq!(usage(&after, "completed") - usage(&before, "completed"), 2.0, "the /agent call and the chat");
    assert_eq!(usage(&after, "refunded") - usage(&before, "refunded"), 1.0, "the failed /agent call");
    assert_eq!(after.value("svc_tlog_size", &[]), Some(2.0), "the chat's receipt is a leaf");

    // Nothing the callers sent, and no internal address.
    for secret in [CANARY_KEY, "canary", &address, "127.0.0.1", "http://", &relay::accounts::key_id(CANARY_KEY)] {
        assert!(!after.text.contains(secret), "{secret:?} in the scrape:\n{}", after.text);
    }

    // The enclave stops: its gauge falls to 0 within a few refreshes (1 s each here).
    stack.enclave.stop();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let now = scrape(&base).await;
        if now.value("svc_enclave_up", &[("enclave", "0")]) == Some(0.0) {
            assert_eq!(now.value("svc_database_up", &[]), Some(1.0));
            break;
        }
        assert!(Instant::now() < deadline, "the enclave gauge stayed up:\n{}", now.text);
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn relay_log_lines_are_json_objects_with_the_expected_fields() {
    let (model, _seen) = openai::start(vec![Turn::text("logged answer")]).await;
    let options = StackOptions {
        model_base_url: Some(format!("{}/v1", model.base_url)),
        env: vec![("SVC_LOG_FORMAT".into(), "json".into())],
        ..StackOptions::default()
    };
    let stack = tokio::task::spawn_blocking(move || Stack::start_with(options)).await.unwrap();
    let base = stack.relay_url.clone();
    let r = reqwest::Client::new()
        .post(format!("{base}/agent"))
        .json(&json!({"prompt": CANARY_PROMPT, "useTools": false}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(status_of(&format!("{base}/attestation/by-hash/{}", "ab".repeat(32))).await, 404);

    // The request lines are written once each response is ready; wait for the last one.
    let deadline = Instant::now() + Duration::from_secs(10);
    let lines: Vec<Value> = loop {
        let text = stack.relay.log_text();
        let parsed: Vec<Value> = text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not a JSON line ({e}): {l:?}")))
            .collect();
        if parsed.iter().any(|l| l["route"] == "/attestation/by-hash/{hash}") || Instant::now() > deadline {
            assert!(!text.contains("canary"), "the prompt reached the log");
            break parsed;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    for line in &lines {
        let object = line.as_object().unwrap_or_else(|| panic!("not an object: {line}"));
        assert!(object["timestamp"].is_string(), "{line}");
        assert!(
            ["TRACE", "DEBUG", "INFO", "WARN", "ERROR"].contains(&object["level"].as_str().unwrap_or("")),
            "{line}"
        );
        assert!(object["target"].is_string(), "{line}");
        assert!(object.get("fields").is_none(), "fields are flat: {line}");
    }
    let starting = lines.iter().find(|l| l["message"] == "relay starting").expect("the start line");
    assert_eq!((starting["level"].as_str(), starting["backend"].as_str()), (Some("INFO"), Some("sqlite")));
    let request = |route: &str| {
        lines.iter().find(|l| l["route"] == route).unwrap_or_else(|| panic!("no request line for {route}"))
    };
    let agent = request("/agent");
    assert_eq!(
        (agent["method"].as_str(), agent["path"].as_str(), agent["status"].as_u64()),
        (Some("POST"), Some("/agent"), Some(200))
    );
    assert!(agent["elapsed_ms"].is_u64(), "{agent}");
    let lookup = request("/attestation/by-hash/{hash}");
    assert_eq!(lookup["status"], 404);

    // An unknown format is refused at start, before anything else happens.
    let out = Command::new(e2e::binary("relay"))
        .args(["--config", "/nonexistent/relay.json"])
        .env("SVC_LOG_FORMAT", "xml")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("SVC_LOG_FORMAT must be `text` or `json`"), "{stderr}");
}
