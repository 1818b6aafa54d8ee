//! Provisioning round trip through the relay (DESIGN §10), as a key holder makes it: fetch the
//! attestation with a fresh nonce, verify both dev quotes and the nonce signature, sign a
//! bundle, seal it to the verified key, post it through the relay, and the enclave opens,
//! checks and installs it. Real release binaries; docs/benchmarks.md records p50 and p99.
//!
//! `make bench` builds the release binaries first (this looks for them beside itself).

use std::time::{Duration, Instant};

use e2e::{Stack, StackOptions};

const ROUNDS: u64 = 200;

fn main() {
    let options = StackOptions {
        // No model is called.
        model_base_url: Some("http://127.0.0.1:9/v1".into()),
        provision: false,
        relay: serde_json::json!({"rateLimits": {"perAddressPerMinute": 0, "perKeyPerMinute": 0}}),
        ..StackOptions::default()
    };
    let stack = Stack::start_with(options);
    let client = stack.client();
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let mut times: Vec<Duration> = runtime.block_on(async {
        let mut times = Vec::new();
        for version in 1..=ROUNDS {
            let secrets = stack.secrets(version);
            let started = Instant::now();
            let out = client.provision(&secrets, &e2e::provisioner(), None, None).await.unwrap();
            times.push(started.elapsed());
            assert_eq!(out.state.unwrap().bundle_version, Some(version));
        }
        times
    });
    times.sort();
    let at = |q: f64| times[((times.len() as f64 * q) as usize).min(times.len() - 1)].as_secs_f64() * 1e3;
    println!(
        "provision_round_trip ({ROUNDS} rounds): p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        at(0.5),
        at(0.99),
        at(1.0)
    );
}
