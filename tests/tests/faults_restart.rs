//! Faults under load, with real processes (issue 18 "Faults"): PostgreSQL killed and started
//! again while requests flow (they fail with 503 `database_unavailable`, never a 500, and
//! recover by themselves), and the enclave restarted while clients chat (no reply a client
//! cannot decrypt, and the clients recover through the key refetch path).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use client::ClientError;
use client::chat::ChatOptions;
use e2e::postgres::PrivatePostgres;
use e2e::{Stack, StackOptions};
use serde_json::{Value, json};
use standins::openai::{self, Turn};

/// Requests that read the database: a key's balance and a receipt lookup.
async fn one_round(http: &reqwest::Client, stack_url: &str, key: &str) -> Vec<(u16, Value)> {
    let mut out = Vec::new();
    let requests = [
        http.get(format!("{stack_url}/api/v1/balance")).bearer_auth(key),
        http.get(format!("{stack_url}/attestation/{}", shared::address::Address([7; 32]))),
    ];
    for request in requests {
        match request.timeout(Duration::from_secs(30)).send().await {
            Ok(r) => {
                let status = r.status().as_u16();
                out.push((status, r.json().await.unwrap_or(Value::Null)));
            }
            Err(e) => panic!("the relay did not answer: {e:?}"),
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn postgres_killed_under_load_answers_503_then_recovers() {
    let Some(mut pg) = tokio::task::spawn_blocking(PrivatePostgres::start).await.unwrap() else { return };
    let (model, _seen) = openai::start(vec![Turn::text("ok")]).await;
    let options = StackOptions {
        model_base_url: Some(format!("{}/v1", model.base_url)),
        // Limits off: the requests themselves read the database (the limiter's own fail-closed
        // answer is the same 503, tested in relay/src/billing/rate_limit.rs).
        relay: json!({"databaseUrl": pg.url(), "rateLimits": {"perKeyPerMinute": 0, "perAddressPerMinute": 0}}),
        ..StackOptions::default()
    };
    let mut stack = tokio::task::spawn_blocking(move || Stack::start_with(options)).await.unwrap();
    let (url, key) = (stack.relay_url.clone(), stack.api_key.clone());
    let http = reqwest::Client::new();
    let normal = |answers: &[(u16, Value)]| answers.iter().map(|(s, _)| *s).collect::<Vec<_>>() == [200, 404];
    assert!(normal(&one_round(&http, &url, &key).await));

    // Load from four tasks all along; each records what it got and when.
    let stop = Arc::new(AtomicBool::new(false));
    let mut load = Vec::new();
    for _ in 0..4 {
        let (http, url, key, stop) = (http.clone(), url.clone(), key.clone(), stop.clone());
        load.push(tokio::spawn(async move {
            let mut seen = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                for answer in one_round(&http, &url, &key).await {
                    seen.push((Instant::now(), answer));
                }
            }
            seen
        }));
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    // Taken before the kill starts: the database refuses connections while it shuts down, so
    // a 503 can come back before the kill returns.
    let killed = Instant::now();
    tokio::task::block_in_place(|| pg.kill());
    // While it is down: liveness yes, readiness no.
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(http.get(format!("{url}/health")).send().await.unwrap().status(), 200);
    let ready = http.get(format!("{url}/ready")).timeout(Duration::from_secs(30)).send().await.unwrap();
    assert_eq!(ready.status(), 503);
    tokio::time::sleep(Duration::from_secs(2)).await;
    tokio::task::block_in_place(|| pg.restart());
    let restarted = Instant::now();

    // Recovered by itself: normal answers again within seconds, and writes work (a receipt).
    let deadline = Instant::now() + Duration::from_secs(30);
    while !normal(&one_round(&http, &url, &key).await) {
        if Instant::now() > deadline {
            let exited = stack.relay.wait_exit(Duration::from_millis(10));
            eprintln!("relay exited: {exited:?}");
            let log = stack.relay.log_text();
            panic!("no recovery after the restart; relay log ends:\n{}", &log[log.len().saturating_sub(3000)..]);
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    stop.store(true, Ordering::Relaxed);
    let mut all = Vec::new();
    for task in load {
        all.extend(task.await.unwrap());
    }
    let options = ChatOptions { max_tokens: Some(8), ..ChatOptions::default() };
    let outcome = stack.client().chat("after the outage", &options).await.unwrap();
    let (code, _) =
        (http.get(format!("{url}/attestation/{}", outcome.onchain.address)).send().await.unwrap().status(), ());
    assert_eq!(code, 200);

    // Every answer was a normal one or the clear 503; the outage was seen; none was a 500.
    let mut unavailable = 0;
    for (at, (status, body)) in &all {
        match status {
            200 | 404 => {}
            503 => {
                assert_eq!(body["error"], "database_unavailable", "{body}");
                assert!(*at > killed, "a 503 before the kill");
                unavailable += 1;
            }
            other => panic!("{other} {body}"),
        }
    }
    assert!(unavailable > 0, "the outage was never seen by the load");
    let after: Vec<_> = all.iter().filter(|(at, _)| *at > restarted + Duration::from_secs(15)).collect();
    assert!(after.iter().all(|(_, (s, _))| *s != 503), "still failing long after the restart");
}

#[tokio::test(flavor = "multi_thread")]
async fn enclave_restarted_under_load_no_wrong_decrypts_and_clients_recover() {
    let (model, _seen) = openai::start(vec![Turn::text("ok")]).await;
    let options = StackOptions {
        model_base_url: Some(format!("{}/v1", model.base_url)),
        // Limits off: three clients from one address send as fast as the stand-in model
        // answers, which on a quick run passes the per-address limit (a 429 is not what this
        // test is about).
        relay: json!({"rateLimits": {"perKeyPerMinute": 0, "perAddressPerMinute": 0}}),
        ..StackOptions::default()
    };
    let mut stack = tokio::task::spawn_blocking(move || Stack::start_with(options)).await.unwrap();
    // A client that verified the key before the restart and is idle through it: its next call
    // meets the new enclave with the old key. (The busy clients may instead fail during the
    // restart, drop the key then, and fetch the new one afresh.)
    let idle = stack.client();
    let idle_options = ChatOptions { max_tokens: Some(8), ..ChatOptions::default() };
    assert!(!idle.chat("before the restart", &idle_options).await.unwrap().retried);
    let stop = Arc::new(AtomicBool::new(false));
    let mut load = Vec::new();
    for i in 0..3 {
        let client = stack.client();
        let stop = stop.clone();
        load.push(tokio::spawn(async move {
            let options = ChatOptions { max_tokens: Some(8), ..ChatOptions::default() };
            let mut outcomes = Vec::new();
            let mut n = 0;
            while !stop.load(Ordering::Relaxed) {
                n += 1;
                let result = client.chat(&format!("client {i} message {n}"), &options).await;
                outcomes.push((Instant::now(), result.map(|o| o.retried)));
            }
            outcomes
        }));
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    tokio::task::block_in_place(|| stack.restart_enclave());
    let restarted = Instant::now();
    tokio::time::sleep(Duration::from_secs(3)).await;
    stop.store(true, Ordering::Relaxed);
    let mut all = Vec::new();
    for task in load {
        all.extend(task.await.unwrap());
    }
    let mut retried = 0;
    for (at, result) in &all {
        match result {
            Ok(true) => retried += 1,
            Ok(false) => {}
            // Calls cut by the restart itself fail cleanly; none with an unopenable reply.
            Err(e @ (ClientError::ReplyUndecryptable | ClientError::Receipt(_) | ClientError::Mismatch(_))) => {
                panic!("a wrong reply: {e}")
            }
            Err(e) => assert!(*at < restarted + Duration::from_secs(1), "failing after the restart: {e}"),
        }
    }
    let after = all.iter().filter(|(at, r)| *at > restarted && r.is_ok()).count();
    assert!(after >= 3, "the clients recovered ({after} successes after the restart)");
    let stale = idle.chat("after the restart", &idle_options).await.expect("the idle client recovers");
    assert!(stale.retried, "the idle client refetched the key and resent");
    eprintln!("{retried} of {} busy calls refetched the key and resent", all.len());
}
