//! Private requests per second at saturation (issue 30): 64 clients post sealed requests, as
//! fast as answers come, through the relay's `/tee/process` (auth, metering, forward, receipt
//! check, commit and log append) and straight to the enclave's `/process`, on SQLite and (when
//! `DATABASE_URL` is set) PostgreSQL, one run side by side. Real release binaries; the model is
//! the OpenAI stand-in, which costs next to nothing, so the enclave's rate is the ceiling.
//! Every request is a fresh envelope (the enclave refuses replays), sealed before the clock
//! starts. Every call is paid from one key's balance. docs/benchmarks.md records the rates
//! and their ratio.
//!
//! `LOAD_REQUESTS` (default 20000) requests per target. `make bench` builds the release
//! binaries first (this looks for them beside itself).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use e2e::{Stack, StackOptions};
use rand_core::OsRng;
use shared::envelope::{self, PromptPlaintext};
use standins::openai::{self, Turn};

const CLIENTS: usize = 64;
/// Base units per `/tee/process` call.
const PRICE: u64 = 1_000;

/// `requests` sealed `/tee/process` bodies for the enclave at `enclave`.
async fn sealed(http: &reqwest::Client, enclave: &str, requests: usize) -> Vec<String> {
    let key: serde_json::Value = http.get(format!("{enclave}/public-key")).send().await.unwrap().json().await.unwrap();
    let key: [u8; 32] = shared::b64::decode_array(key["publicKey"].as_str().unwrap()).unwrap();
    let now = shared::time::unix_now();
    let plaintext = serde_json::to_vec(&PromptPlaintext::from_prompt("Say ok.", now)).unwrap();
    (0..requests)
        .map(|_| {
            let envelope = envelope::seal(&key, &plaintext, &mut OsRng).unwrap().0.to_json_string();
            serde_json::json!({ "encryptedPrompt": envelope }).to_string()
        })
        .collect()
}

/// Posts every body to `url` from [`CLIENTS`] clients at once; requests per second.
async fn drive(http: &reqwest::Client, url: &str, bearer: Option<&str>, bodies: Vec<String>) -> f64 {
    let bodies = Arc::new(bodies);
    let next = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let clients: Vec<_> = (0..CLIENTS)
        .map(|_| {
            let (http, url, bodies, next) = (http.clone(), url.to_string(), bodies.clone(), next.clone());
            let bearer = bearer.map(str::to_string);
            tokio::spawn(async move {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(body) = bodies.get(i) else { return };
                    let mut request = http.post(&url).header("content-type", "application/json").body(body.clone());
                    if let Some(key) = &bearer {
                        request = request.bearer_auth(key);
                    }
                    let answer = request.send().await.unwrap();
                    let status = answer.status().as_u16();
                    let text = answer.text().await.unwrap();
                    assert_eq!(status, 200, "{url}: {text}");
                }
            })
        })
        .collect();
    for client in clients {
        client.await.unwrap();
    }
    bodies.len() as f64 / started.elapsed().as_secs_f64()
}

fn main() {
    let requests: usize = std::env::var("LOAD_REQUESTS").ok().and_then(|n| n.parse().ok()).unwrap_or(20_000);
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let (model, _) = runtime.block_on(openai::start(vec![Turn::text("ok")]));
    let databases = [("SQLite", None), ("PostgreSQL", runtime.block_on(e2e::fresh_postgres("private_load")))];
    println!("| database | through the relay (req/s) | enclave direct (req/s) | relay / direct |");
    println!("|---|---|---|---|");
    for (label, url) in databases {
        if label == "PostgreSQL" && url.is_none() {
            println!("| PostgreSQL | (DATABASE_URL not set) | | |");
            continue;
        }
        // Every call is paid (a charge before the forward, a completion after it), as on a
        // real relay.
        let mut relay = serde_json::json!({
            "rateLimits": {"perAddressPerMinute": 0, "perKeyPerMinute": 0},
            "teeProcessPricePerCall": PRICE,
        });
        if let Some(url) = url {
            relay["databaseUrl"] = serde_json::json!(url);
        }
        let options =
            StackOptions { model_base_url: Some(format!("{}/v1", model.base_url)), relay, ..StackOptions::default() };
        let stack = Stack::start_with(options);
        let calls = i64::try_from(requests + 2 * CLIENTS).unwrap();
        stack.credit_usdc(&relay::accounts::key_id(&stack.api_key), calls * PRICE as i64);
        let http = reqwest::Client::builder().pool_max_idle_per_host(CLIENTS).build().unwrap();
        let enclave = format!("http://127.0.0.1:{}", stack.enclave_port);
        let (through_relay, direct) = runtime.block_on(async {
            // Warm both paths (connections, caches, the relay's key refresh).
            let warm = sealed(&http, &enclave, 2 * CLIENTS).await;
            drive(&http, &format!("{}/tee/process", stack.relay_url), Some(&stack.api_key), warm).await;
            let bodies = sealed(&http, &enclave, requests).await;
            let through_relay =
                drive(&http, &format!("{}/tee/process", stack.relay_url), Some(&stack.api_key), bodies).await;
            // The books: every answered call paid exactly its price, once.
            let balance = http.get(format!("{}/api/v1/balance", stack.relay_url)).bearer_auth(&stack.api_key);
            let (_, balance) = e2e::http::send(balance).await;
            assert_eq!(balance["balances"][0]["amount"], "0", "{balance}");
            let bodies = sealed(&http, &enclave, requests).await;
            let direct = drive(&http, &format!("{enclave}/process"), None, bodies).await;
            (through_relay, direct)
        });
        println!("| {label} | {through_relay:.0} | {direct:.0} | {:.2}x |", through_relay / direct);
    }
}
