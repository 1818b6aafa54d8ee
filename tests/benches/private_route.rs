//! What the relay adds on the private route: the same sealed request posted to the relay's
//! `/tee/process` (auth, rate limit, metering, forward, receipt check and commit, transparency
//! log append) and straight to the enclave's `/process`, as the relay posts it. Real release
//! binaries, SQLite; the model is the OpenAI stand-in (it answers at once, so the difference
//! is the relay's). docs/benchmarks.md records p50 and p99 of both.
//!
//! `make bench` builds the release binaries first (this looks for them beside itself).

use std::time::{Duration, Instant};

use e2e::{Stack, StackOptions};
use rand_core::OsRng;
use shared::envelope::{self, PromptPlaintext};
use standins::openai::{self, Turn};

const ROUNDS: usize = 400;

fn percentile(times: &mut [Duration], p: f64) -> f64 {
    times.sort();
    let i = ((times.len() as f64 * p).ceil() as usize).clamp(1, times.len()) - 1;
    times[i].as_secs_f64() * 1e3
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let (model, _) = runtime.block_on(openai::start(vec![Turn::text("ok")]));
    let options = StackOptions {
        model_base_url: Some(format!("{}/v1", model.base_url)),
        relay: serde_json::json!({"rateLimits": {"perAddressPerMinute": 0, "perKeyPerMinute": 0}}),
        ..StackOptions::default()
    };
    let stack = Stack::start_with(options);
    let http = reqwest::Client::new();
    let enclave = format!("http://127.0.0.1:{}", stack.enclave_port);
    let (mut through_relay, mut direct) = runtime.block_on(async {
        let key: serde_json::Value = http.get(format!("{enclave}/public-key")).send().await.unwrap().json().await.unwrap();
        let key: [u8; 32] = shared::b64::decode_array(key["publicKey"].as_str().unwrap()).unwrap();
        let now = shared::time::unix_now();
        let seal = || {
            let plaintext = serde_json::to_vec(&PromptPlaintext::from_prompt("Say ok.", now)).unwrap();
            serde_json::json!({"encryptedPrompt": envelope::seal(&key, &plaintext, &mut OsRng).unwrap().0.to_json_string()})
        };
        let (mut relay, mut direct) = (Vec::new(), Vec::new());
        for round in 0..ROUNDS + 20 {
            let (a, b) = (seal(), seal());
            let started = Instant::now();
            let r = http.post(format!("{}/tee/process", stack.relay_url)).bearer_auth(&stack.api_key).json(&a).send().await;
            let r = r.unwrap();
            assert_eq!(r.status().as_u16(), 200);
            r.bytes().await.unwrap();
            let relay_time = started.elapsed();
            let started = Instant::now();
            let r = http.post(format!("{enclave}/process")).json(&b).send().await.unwrap();
            assert_eq!(r.status().as_u16(), 200);
            r.bytes().await.unwrap();
            // The first rounds warm connections and caches.
            if round >= 20 {
                relay.push(relay_time);
                direct.push(started.elapsed());
            }
        }
        (relay, direct)
    });
    let (r50, r99) = (percentile(&mut through_relay, 0.50), percentile(&mut through_relay, 0.99));
    let (d50, d99) = (percentile(&mut direct, 0.50), percentile(&mut direct, 0.99));
    println!(
        "private route ({ROUNDS} rounds): through the relay p50 {r50:.2} ms p99 {r99:.2} ms; enclave direct p50 {d50:.2} ms p99 {d99:.2} ms; relay adds p50 {:.2} ms, p99 {:.2} ms",
        r50 - d50,
        r99 - d99
    );
}
