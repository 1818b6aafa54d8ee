//! Money under load, through the real relay binary: 200 concurrent paid `/agent` calls against
//! a balance for 50 (SQLite and PostgreSQL), and two relays on one PostgreSQL behaving as one
//! service (keys, balances, free-trial counters).

use e2e::{Process, Stack, StackOptions, free_port, wait_http};
use serde_json::{Value, json};
use standins::openai::{self, Turn};

const PRICE: i64 = 1_000;

/// A fresh PostgreSQL database for one test, when `DATABASE_URL` is set (CI sets it).
async fn fresh_postgres(label: &str) -> Option<String> {
    let url = e2e::fresh_postgres(label).await;
    if url.is_none() {
        eprintln!("DATABASE_URL not set: PostgreSQL {label} test skipped (CI sets it)");
    }
    url
}

async fn stack(database_url: Option<String>) -> (Stack, standins::Running) {
    let (model, _) = openai::start(vec![Turn::text("paid answer")]).await;
    // One service's relays name one origin in sign-in messages (here it is not their own
    // listen address, which differs per relay).
    let mut relay =
        json!({"agentPricePerCall": PRICE, "signIn": {"domain": "relays.test", "uri": "https://relays.test"}});
    if let Some(url) = database_url {
        relay["databaseUrl"] = json!(url);
    }
    let options =
        StackOptions { model_base_url: Some(format!("{}/v1", model.base_url)), relay, ..StackOptions::default() };
    (tokio::task::spawn_blocking(move || Stack::start_with(options)).await.unwrap(), model)
}

async fn agent(base: &str, key: Option<&str>) -> (u16, Value) {
    let mut req =
        reqwest::Client::new().post(format!("{base}/agent")).json(&json!({"prompt": "hi", "useTools": false}));
    if let Some(k) = key {
        req = req.bearer_auth(k);
    }
    let r = req.send().await.unwrap();
    (r.status().as_u16(), r.json().await.unwrap())
}

async fn usdc_balance(base: &str, key: &str) -> String {
    let r = reqwest::Client::new().get(format!("{base}/api/v1/balance")).bearer_auth(key).send().await.unwrap();
    let body: Value = r.json().await.unwrap();
    body["balances"][0]["amount"].as_str().unwrap().to_string()
}

async fn two_hundred_calls_against_fifty(database_url: Option<String>) {
    let (stack, _model) = stack(database_url).await;
    let key = stack.api_key.clone();
    stack.credit_usdc(&relay::accounts::key_id(&key), 50 * PRICE);
    let tasks: Vec<_> = (0..200)
        .map(|_| {
            let (base, key) = (stack.relay_url.clone(), key.clone());
            tokio::spawn(async move { agent(&base, Some(&key)).await })
        })
        .collect();
    let (mut ok, mut short) = (0, 0);
    for t in tasks {
        let (status, body) = t.await.unwrap();
        match (status, body["error"].as_str()) {
            (200, None) => {
                assert_eq!(body["billing"]["charged"], "1000");
                ok += 1;
            }
            (402, Some("insufficient_balance")) => short += 1,
            other => panic!("unexpected answer {other:?}: {body}"),
        }
    }
    assert_eq!((ok, short), (50, 150));
    assert_eq!(usdc_balance(&stack.relay_url, &key).await, "0");
    // The usage listing shows exactly the 50 completed calls, newest first.
    let usage: Value = e2e::http::get_with_key(&format!("{}/api/v1/usage?limit=200", stack.relay_url), &key).await.1;
    let rows = usage["data"].as_array().unwrap();
    assert_eq!(rows.len(), 50);
    for query in ["limit=0", "limit=201", "cursor=junk", "cursor=x_use_1"] {
        let r = reqwest::Client::new()
            .get(format!("{}/api/v1/usage?{query}", stack.relay_url))
            .bearer_auth(&key)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), 400, "{query}");
        assert_eq!(r.json::<Value>().await.unwrap()["error"], "bad_request", "{query}");
    }
    assert!(rows.iter().all(|r| r["status"] == "completed" && r["charged"] == "1000" && r["route"] == "/agent"));
    assert!(usage["nextCursor"].is_null());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sqlite_200_concurrent_paid_calls_against_a_balance_for_50() {
    two_hundred_calls_against_fifty(None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_200_concurrent_paid_calls_against_a_balance_for_50() {
    let Some(url) = fresh_postgres("concurrency").await else { return };
    two_hundred_calls_against_fifty(Some(url)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_relays_on_one_postgres_are_one_service() {
    let Some(url) = fresh_postgres("two-relays").await else { return };
    let (stack, _model) = stack(Some(url)).await;
    let a = stack.relay_url.clone();
    // Relay B: the same configuration (database, enclave, model), another port.
    let mut config: Value =
        serde_json::from_str(&std::fs::read_to_string(stack.dir.path().join("relay.json")).unwrap()).unwrap();
    let port = free_port();
    config["listen"] = json!(format!("127.0.0.1:{port}"));
    config["dataDir"] = json!(stack.dir.path().join("relay-b-data"));
    let config_b = stack.dir.path().join("relay-b.json");
    std::fs::write(&config_b, config.to_string()).unwrap();
    let _relay_b = Process::spawn_binary("relay", &config_b, stack.dir.path().join("relay-b.log"));
    let b = format!("http://127.0.0.1:{port}");
    tokio::task::spawn_blocking({
        let b = b.clone();
        move || wait_http(&format!("{b}/health"))
    })
    .await
    .unwrap();

    // A key issued by wallet sign-in at A works at B.
    use ed25519_dalek::Signer;
    let wallet_key = ed25519_dalek::SigningKey::from_bytes(&[7u8; 32]);
    let wallet = shared::address::Address(wallet_key.verifying_key().to_bytes()).to_string();
    let http = reqwest::Client::new();
    let scopes = ["chat", "account", "keys"];
    let ask = json!({"wallet": wallet, "scopes": scopes});
    let (_, ch) = e2e::http::post(&format!("{a}/api/v1/auth/challenge"), &ask, None).await;
    let signature = shared::ledger::format_id(&wallet_key.sign(ch["message"].as_str().unwrap().as_bytes()).to_bytes());
    let answer = json!({"wallet": wallet, "nonce": ch["nonce"], "signature": signature, "scopes": scopes});
    let (_, issued) = e2e::http::post(&format!("{b}/api/v1/auth/verify"), &answer, None).await;
    let key = issued["apiKey"].as_str().expect("the challenge issued at A is redeemed at B").to_string();
    let key_id = issued["keyId"].as_str().unwrap().to_string();
    assert_eq!(usdc_balance(&a, &key).await, "0");

    // One balance: credited once, spent at both.
    e2e::credit_usdc(&config_b, &key_id, 3 * PRICE);
    assert_eq!(agent(&a, Some(&key)).await.0, 200);
    assert_eq!(agent(&b, Some(&key)).await.0, 200);
    assert_eq!(usdc_balance(&b, &key).await, "1000");
    assert_eq!(usdc_balance(&a, &key).await, "1000");

    // One free trial per address: three at A, two at B, then none anywhere.
    for (base, left) in [(&a, 4), (&a, 3), (&b, 2), (&a, 1), (&b, 0)] {
        let (_, body) = agent(base, None).await;
        assert_eq!(body["freeMessagesRemaining"], left, "{body}");
    }
    let (status, body) = agent(&a, None).await;
    assert_eq!((status, body["reason"].as_str()), (200, Some("free_trial_exhausted")));

    // A key revoked at B is refused at A.
    let revoked = http.delete(format!("{b}/api/v1/keys/{key_id}")).bearer_auth(&key).send().await.unwrap();
    assert!(revoked.status().is_success());
    let (status, body) = agent(&a, Some(&key)).await;
    assert_eq!((status, body["error"].as_str()), (401, Some("unauthorized")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn over_the_rate_limit_is_429_with_retry_after() {
    let (model, _) = openai::start(vec![Turn::text("ok")]).await;
    let options = StackOptions {
        model_base_url: Some(format!("{}/v1", model.base_url)),
        relay: json!({"rateLimits": {"perAddressPerMinute": 3, "perKeyPerMinute": 0}}),
        // Provisioning would spend requests of this address's window.
        provision: false,
        ..StackOptions::default()
    };
    let stack = tokio::task::spawn_blocking(move || Stack::start_with(options)).await.unwrap();
    // Keep the five requests inside one one-minute window.
    let into_window = shared::time::unix_now() % 60;
    if into_window > 55 {
        tokio::time::sleep(std::time::Duration::from_secs(61 - into_window)).await;
    }
    let mut statuses = Vec::new();
    let mut last = None;
    for _ in 0..5 {
        let r = reqwest::Client::new().get(format!("{}/tee/public-key", stack.relay_url)).send().await.unwrap();
        statuses.push(r.status().as_u16());
        last = Some(r);
    }
    // wait_http's /health probe is not counted; three pass, then 429.
    assert_eq!(statuses, [200, 200, 200, 429, 429]);
    let r = last.unwrap();
    let retry: u64 = r.headers()["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=60).contains(&retry));
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["error"], "rate_limited");
    let (status, body) = agent(&stack.relay_url, None).await;
    assert_eq!((status, body["success"].as_bool(), body["error"].as_str()), (429, Some(false), Some("rate_limited")));
}

/// Seals `prompt` to the enclave key the relay serves (what any client does).
async fn seal(base: &str, prompt: &str) -> (shared::envelope::Envelope, shared::hpke::Context) {
    let key: Value = reqwest::get(format!("{base}/tee/public-key")).await.unwrap().json().await.unwrap();
    let tee: [u8; 32] = shared::b64::decode_array(key["publicKey"].as_str().unwrap()).unwrap();
    let now = shared::time::unix_now();
    let plaintext = shared::envelope::PromptPlaintext::from_prompt(prompt, now);
    let bytes = serde_json::to_vec(&plaintext).unwrap();
    shared::envelope::seal(&tee, &bytes, &mut rand_core::OsRng).unwrap()
}

async fn post(base: &str, path: &str, body: Value, key: &str) -> (u16, Value) {
    e2e::http::post(&format!("{base}{path}"), &body, Some(key)).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn chat_completions_are_sealed_openai_objects_billed_per_token() {
    let options =
        StackOptions { relay: json!({"pricePerMillionTokens": {"gpt-oss:20b": 200_000}}), ..Default::default() };
    let stack = tokio::task::spawn_blocking(move || Stack::start_with(options)).await.unwrap();
    let (base, key) = (stack.relay_url.clone(), stack.api_key.clone());
    let (envelope, context) = seal(&base, "Name a colour.").await;
    let sealed = envelope.to_json_string();

    for body in [json!({"model": "gpt-oss:20b"}), json!({"encryptedPrompt": sealed}), json!({})] {
        let (status, answer) = post(&base, "/api/v1/chat/completions", body, &key).await;
        assert_eq!((status, answer["error"].as_str()), (400, Some("bad_request")), "{answer}");
    }
    let bad = json!({"model": "gpt-oss:20b", "encryptedPrompt": "{\"version\": 1}"});
    let (status, answer) = post(&base, "/api/v1/chat/completions", bad, &key).await;
    assert_eq!((status, answer["error"].as_str()), (400, Some("invalid_envelope")), "{answer}");
    let unknown = json!({"model": "no-such-model", "encryptedPrompt": sealed});
    let (status, answer) = post(&base, "/api/v1/chat/completions", unknown, &key).await;
    assert_eq!((status, answer["error"].as_str()), (501, Some("gpu_not_configured")), "{answer}");
    // The most a call can cost (8192 tokens at 0.2 per million = 1639) must be available.
    stack.credit_usdc(&relay::accounts::key_id(&key), 1_000);
    let (status, answer) =
        post(&base, "/api/v1/chat/completions", json!({"model": "gpt-oss:20b", "encryptedPrompt": sealed}), &key).await;
    assert_eq!((status, answer["error"].as_str()), (402, Some("insufficient_balance")), "{answer}");
    stack.credit_usdc(&relay::accounts::key_id(&key), 9_000);

    let (status, answer) =
        post(&base, "/api/v1/chat/completions", json!({"model": "gpt-oss:20b", "encryptedPrompt": sealed}), &key).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["object"], "chat.completion");
    assert_eq!(answer["model"], "svc-gpu:gpt-oss:20b");
    assert_eq!(answer["choices"][0]["message"]["role"], "assistant");
    assert_eq!(answer["choices"][0]["index"], 0);
    let usage = &answer["usage"];
    let total = usage["total_tokens"].as_u64().unwrap();
    assert_eq!(total, usage["prompt_tokens"].as_u64().unwrap() + usage["completion_tokens"].as_u64().unwrap());
    // The content is the sealed reply; opened, a complete chat.completion with the receipt.
    let sealed_reply: shared::reply::EncryptedResponse =
        serde_json::from_str(answer["choices"][0]["message"]["content"].as_str().unwrap()).unwrap();
    let opened = shared::reply::open(&context, &envelope.enc, &sealed_reply).unwrap();
    let inner: shared::wire::ChatCompletion = serde_json::from_slice(&opened).unwrap();
    assert_eq!(inner.object, "chat.completion");
    assert_eq!(inner.id, answer["id"].as_str().unwrap());
    assert_eq!(inner.model, "svc-gpu:gpt-oss:20b");
    assert_eq!(inner.choices.len(), 1);
    assert_eq!(inner.choices[0].message.role, "assistant");
    assert!(!inner.choices[0].finish_reason.is_empty());
    assert_eq!(inner.usage.total_tokens, total);
    assert_eq!(serde_json::to_value(&inner.receipt).unwrap(), answer["receipt"]);
    inner.receipt.verify(&shared::address::default_program_id()).unwrap();
    // Per token: ceil(total × 200000 / 10⁶); the rest of the 1639 reserve came back.
    let charged = (total * 200_000).div_ceil(1_000_000);
    assert_eq!(answer["billing"]["charged"], charged.to_string());
    assert_eq!(usdc_balance(&base, &key).await, (10_000 - charged).to_string());
    let usage_list: Value = e2e::http::get_with_key(&format!("{base}/api/v1/usage"), &key).await.1;
    let row = &usage_list["data"][0];
    assert_eq!(row["route"], "/api/v1/chat/completions");
    assert_eq!(row["charged"], charged.to_string());
    assert_eq!(row["promptTokens"], usage["prompt_tokens"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn tee_process_is_paid_per_call_and_refunded_on_failure() {
    let options = StackOptions { relay: json!({"teeProcessPricePerCall": 700}), ..Default::default() };
    let stack = tokio::task::spawn_blocking(move || Stack::start_with(options)).await.unwrap();
    let (base, key) = (stack.relay_url.clone(), stack.api_key.clone());
    stack.credit_usdc(&relay::accounts::key_id(&key), 1_000);
    let (envelope, _) = seal(&base, "hello").await;
    let body = json!({"encryptedPrompt": envelope.to_json_string()});
    let (status, answer) = post(&base, "/tee/process", body.clone(), &key).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(usdc_balance(&base, &key).await, "300");
    // The same envelope again: the enclave refuses the replay and the charge comes back.
    stack.credit_usdc(&relay::accounts::key_id(&key), 400);
    let (status, answer) = post(&base, "/tee/process", body, &key).await;
    assert_eq!((status, answer["error"].as_str()), (409, Some("replay_detected")), "{answer}");
    assert_eq!(usdc_balance(&base, &key).await, "700");
    let (fresh, _) = seal(&base, "again").await;
    let (status, _) = post(&base, "/tee/process", json!({"encryptedPrompt": fresh.to_json_string()}), &key).await;
    assert_eq!(status, 200);
    let (fresh, _) = seal(&base, "once more").await;
    let (status, answer) = post(&base, "/tee/process", json!({"encryptedPrompt": fresh.to_json_string()}), &key).await;
    assert_eq!(
        (status, answer["error"].as_str(), answer["success"].as_bool()),
        (402, Some("insufficient_balance"), Some(false))
    );
}

/// A relay killed right after charging a call (the answer never delivered) leaves the usage
/// row `pending`; once no call can still be running, the restarted relay refunds it, so the
/// caller's money is not held for good (SQLite, or PostgreSQL when DATABASE_URL is set).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_relay_killed_after_charging_gives_the_charge_back_after_restart() {
    let database_url = fresh_postgres("abandoned").await;
    let (model, _) = openai::start(vec![Turn::text("paid answer")]).await;
    let mut relay = json!({"agentPricePerCall": PRICE, "abandonedUsageSecs": 1});
    if let Some(url) = database_url {
        relay["databaseUrl"] = json!(url);
    }
    let options =
        StackOptions { model_base_url: Some(format!("{}/v1", model.base_url)), relay, ..StackOptions::default() };
    let mut stack = tokio::task::spawn_blocking(move || Stack::start_with(options)).await.unwrap();
    let (base, key) = (stack.relay_url.clone(), stack.api_key.clone());
    stack.credit_usdc(&relay::accounts::key_id(&key), 5 * PRICE);

    tokio::task::block_in_place(|| stack.restart_relay(&[("SVC_RELAY_EXIT_AT", "billing:charged")]));
    let calls = (0..4).map(|_| {
        reqwest::Client::new()
            .post(format!("{base}/agent"))
            .bearer_auth(&key)
            .json(&json!({"prompt": "hi", "useTools": false}))
            .send()
    });
    let answers = e2e::join_all(calls).await;
    assert!(answers.iter().all(|a| a.is_err()), "the relay died before answering anything");
    let exited = tokio::task::block_in_place(|| stack.relay.wait_exit(std::time::Duration::from_secs(30)));
    assert!(exited.is_some_and(|s| !s.success()));
    tokio::task::block_in_place(|| stack.restart_relay(&[]));

    let mut usage = Value::Null;
    for _ in 0..100 {
        usage = e2e::http::get_with_key(&format!("{base}/api/v1/usage"), &key).await.1;
        let rows = usage["data"].as_array().unwrap();
        if !rows.is_empty() && rows.iter().all(|r| r["status"] == "refunded") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    let rows = usage["data"].as_array().unwrap();
    assert!(!rows.is_empty() && rows.iter().all(|r| r["status"] == "refunded"), "{usage}");
    assert_eq!(usdc_balance(&base, &key).await, (5 * PRICE).to_string(), "every charge came back");
}
