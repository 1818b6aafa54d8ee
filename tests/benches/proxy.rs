//! What `svc proxy` adds over a direct sealed completion: the same request through the Rust
//! client (`Client::chat_completion`: seal, post, open, verify) and through the proxy with a
//! plain OpenAI body over localhost HTTP. Real release binaries; the model is the OpenAI
//! stand-in (it answers at once, so the difference is the proxy's). docs/benchmarks.md records
//! p50 of both and their difference.
//!
//! `make bench` builds the release binaries first (this looks for them beside itself).

use std::time::{Duration, Instant};

use client::completions::CompletionRequest;
use e2e::{Process, Stack, StackOptions, binary, free_port, wait_http};
use shared::envelope::{Message, Role};
use standins::openai::{self, Turn};

const ROUNDS: usize = 200;

fn p50(mut times: Vec<Duration>) -> f64 {
    times.sort();
    times[times.len() / 2].as_secs_f64() * 1e3
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let (model, _) = runtime.block_on(openai::start(vec![Turn::text("ok")]));
    let options = StackOptions {
        model_base_url: Some(format!("{}/v1", model.base_url)),
        relay: serde_json::json!({"rateLimits": {"perAddressPerMinute": 0, "perKeyPerMinute": 0},
                                  "pricePerMillionTokens": {"gpt-oss:20b": 0}}),
        ..StackOptions::default()
    };
    let stack = Stack::start_with(options);
    let port = free_port();
    let mut cmd = std::process::Command::new(binary("svc"));
    cmd.args(["--relay", &stack.relay_url, "--api-key", &stack.api_key]);
    cmd.arg("--measurements").arg(concat!(env!("CARGO_MANIFEST_DIR"), "/../measurements/dev.json"));
    cmd.arg("--dev-root").arg(stack.dev_root_pem_path());
    cmd.args(["proxy", "--listen", &format!("127.0.0.1:{port}")]);
    let _proxy = Process::spawn_command(&mut cmd, stack.dir.path().join("proxy.log"));
    wait_http(&format!("http://127.0.0.1:{port}/v1/models"));

    let client = stack.client();
    let request = CompletionRequest {
        model: "gpt-oss:20b".into(),
        messages: vec![Message { role: Role::User, content: "Say ok.".into() }],
        max_tokens: Some(8),
        temperature: None,
    };
    let body = serde_json::json!({"model": "gpt-oss:20b", "max_tokens": 8,
                                  "messages": [{"role": "user", "content": "Say ok."}]});
    let http = reqwest::Client::new();
    let url = format!("http://127.0.0.1:{port}/v1/chat/completions");
    let (direct, proxied) = runtime.block_on(async {
        let (mut direct, mut proxied) = (Vec::new(), Vec::new());
        for _ in 0..ROUNDS {
            let started = Instant::now();
            client.chat_completion(&request).await.unwrap();
            direct.push(started.elapsed());
            let started = Instant::now();
            let response = http.post(&url).json(&body).send().await.unwrap();
            assert_eq!(response.status().as_u16(), 200);
            response.bytes().await.unwrap();
            proxied.push(started.elapsed());
        }
        (direct, proxied)
    });
    let (direct, proxied) = (p50(direct), p50(proxied));
    println!(
        "proxy ({ROUNDS} rounds): direct sealed completion p50 {direct:.2} ms, through svc proxy p50 {proxied:.2} ms, added {:.2} ms",
        proxied - direct
    );
}
