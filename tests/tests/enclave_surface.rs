//! The enclave's internal API as an untrusted relay (or anything on the host) sees it, posted
//! to directly (issue 18 findings 5 and 6): a sealed model cannot be swapped and a sealed token
//! limit cannot be lowered from outside the envelope; envelopes without a timestamp are
//! refused, so none can be held and replayed later; work beyond the configured concurrency is
//! refused at once while the key reads still answer; a request past its time limit is cut.

use std::time::{Duration, Instant};

use e2e::{Stack, StackOptions};
use rand_core::OsRng;
use serde_json::{Value, json};
use shared::envelope::{self, PromptPlaintext};
use shared::time::unix_now;
use standins::openai::{self, Turn};

async fn stack_with(turns: Vec<Turn>, enclave: Value) -> (Stack, openai::Seen, standins::Running) {
    let (server, seen) = openai::start(turns).await;
    let options = StackOptions {
        model_base_url: Some(format!("{}/v1", server.base_url)),
        model_max_tokens: 64,
        enclave,
        ..StackOptions::default()
    };
    let stack = tokio::task::spawn_blocking(move || Stack::start_with(options)).await.unwrap();
    (stack, seen, server)
}

/// Seals `plaintext` to the enclave's current key, read from the enclave itself.
async fn seal(stack: &Stack, plaintext: &PromptPlaintext) -> String {
    let url = format!("http://127.0.0.1:{}/public-key", stack.enclave_port);
    let key: Value = reqwest::get(url).await.unwrap().json().await.unwrap();
    let key: [u8; 32] = shared::b64::decode_array(key["publicKey"].as_str().unwrap()).unwrap();
    let bytes = serde_json::to_vec(plaintext).unwrap();
    envelope::seal(&key, &bytes, &mut OsRng).unwrap().0.to_json_string()
}

/// Posts to the enclave's internal API, as the relay does.
async fn post(stack: &Stack, route: &str, body: &Value) -> (u16, Value) {
    e2e::http::post(&format!("http://127.0.0.1:{}{route}", stack.enclave_port), body, None).await
}

fn timed(prompt: &str) -> PromptPlaintext {
    PromptPlaintext::from_prompt(prompt, unix_now())
}

#[tokio::test(flavor = "multi_thread")]
async fn the_sealed_model_and_token_limit_win_over_the_outer_ones() {
    let (stack, seen, _server) = stack_with(vec![Turn::text("fine")], json!({})).await;

    // The sealed model is another than the one the relay routes (and prices) by: refused, and
    // the model is never called.
    let mut p = timed("hello");
    p.model = Some("gemma4:31b".into());
    let body = json!({"encryptedPrompt": seal(&stack, &p).await, "model": "gpt-oss:20b"});
    let (code, answer) = post(&stack, "/process", &body).await;
    assert_eq!((code, answer["error"].as_str()), (400, Some("model_mismatch")), "{answer}");
    assert_eq!(seen.count(), 0);

    // A sealed alias of the routed model is the same model.
    let mut p = timed("hello");
    p.model = Some("gpt-oss-20b".into());
    p.max_tokens = Some(12);
    // The relay lowers the limit outside the envelope to cut the answer short: ignored.
    let body = json!({"encryptedPrompt": seal(&stack, &p).await, "model": "gpt-oss:20b", "maxTokens": 1});
    let (code, answer) = post(&stack, "/process", &body).await;
    assert_eq!(code, 200, "{answer}");
    assert_eq!(seen.all()[0]["max_tokens"], 12, "the sealed limit reached the model");

    // Without a sealed limit the outer one still applies (an older client), capped by the model's.
    let body = json!({"encryptedPrompt": seal(&stack, &timed("hello")).await, "maxTokens": 5});
    assert_eq!(post(&stack, "/process", &body).await.0, 200);
    assert_eq!(seen.all()[1]["max_tokens"], 5);
    let mut p = timed("hello");
    p.max_tokens = Some(1_000_000);
    assert_eq!(post(&stack, "/process", &json!({"encryptedPrompt": seal(&stack, &p).await})).await.0, 200);
    assert_eq!(seen.all()[2]["max_tokens"], 64, "never above the model's limit");
}

#[tokio::test(flavor = "multi_thread")]
async fn envelopes_without_a_timestamp_are_refused_by_default() {
    let (stack, seen, _server) = stack_with(vec![Turn::text("fine")], json!({})).await;
    let mut p = timed("hold me for later");
    p.timestamp = None;
    let (code, answer) = post(&stack, "/process", &json!({"encryptedPrompt": seal(&stack, &p).await})).await;
    assert_eq!((code, answer["error"].as_str()), (400, Some("stale_timestamp")), "{answer}");
    assert_eq!(seen.count(), 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn work_beyond_the_limit_is_refused_at_once_and_key_reads_still_answer() {
    let slow = Turn::Slow(Duration::from_secs(3), Box::new(Turn::text("late")));
    let (stack, seen, _server) = stack_with(vec![slow, Turn::text("next")], json!({"maxConcurrentRequests": 1})).await;
    let first = json!({"encryptedPrompt": seal(&stack, &timed("one")).await});
    let second = json!({"encryptedPrompt": seal(&stack, &timed("two")).await});
    let running = {
        let url = format!("http://127.0.0.1:{}/process", stack.enclave_port);
        tokio::spawn(async move { reqwest::Client::new().post(url).json(&first).send().await.unwrap().status() })
    };
    while seen.count() == 0 {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let asked = Instant::now();
    let (code, answer) = post(&stack, "/process", &second).await;
    assert_eq!((code, answer["error"].as_str()), (503, Some("enclave_busy")), "{answer}");
    assert!(asked.elapsed() < Duration::from_secs(1), "refused at once, not queued");
    let key = reqwest::get(format!("http://127.0.0.1:{}/public-key", stack.enclave_port)).await.unwrap();
    assert_eq!(key.status(), 200, "the key read is outside the limit");
    assert_eq!(running.await.unwrap(), 200);
    // The permit came back: the refused envelope was not consumed and now goes through.
    assert_eq!(post(&stack, "/process", &second).await.0, 200);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_request_past_its_time_limit_is_cut() {
    // Each model turn is within the model timeout; the tool loop as a whole is not within the
    // request's limit.
    let turn = |t: Turn| Turn::Slow(Duration::from_millis(1500), Box::new(t));
    let call = || turn(Turn::call("token_price", json!({"mint": "So11111111111111111111111111111111111111112"})));
    let turns = vec![call(), call(), call(), turn(Turn::text("done"))];
    let limits = json!({"modelTimeoutSecs": 2, "requestTimeoutSecs": 3});
    let (stack, _seen, _server) = stack_with(turns, limits).await;
    let asked = Instant::now();
    let (code, answer) =
        post(&stack, "/agent", &json!({"encryptedPrompt": seal(&stack, &timed("price?")).await})).await;
    assert_eq!((code, answer["error"].as_str()), (504, Some("enclave_timeout")), "{answer}");
    let took = asked.elapsed();
    assert!(took >= Duration::from_secs(3) && took < Duration::from_secs(4), "{took:?}");
}
