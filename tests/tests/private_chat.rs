//! The private chat path end to end, with the real model server, enclave, relay and client.

use client::chat::ChatOptions;
use client::key_cache::KeyCache;
use client::receipts::ReceiptQuery;
use e2e::http::get;
use e2e::{API_KEY, Stack};
use rand_core::{OsRng, RngCore};
use serde_json::{Value, json};
use shared::envelope::{self, PromptPlaintext};
use shared::receipt::Receipt;
use shared::time::unix_now;

fn options() -> ChatOptions {
    ChatOptions { max_tokens: Some(16), ..ChatOptions::default() }
}

async fn post_process(stack: &Stack, body: &Value, key: Option<&str>) -> (u16, Value) {
    e2e::http::post(&format!("{}/tee/process", stack.relay_url), body, key).await
}

/// Seals a prompt to the current enclave key by hand, as an independent client would.
async fn sealed_envelope(stack: &Stack, prompt: &str) -> envelope::Envelope {
    let key = stack.client().public_key().await.unwrap();
    let key: [u8; 32] = shared::b64::decode_array(&key.public_key).unwrap();
    let pt = serde_json::to_vec(&PromptPlaintext::from_prompt(prompt, unix_now())).unwrap();
    envelope::seal(&key, &pt, &mut OsRng).unwrap().0
}

async fn receipt_rows(stack: &Stack) -> i64 {
    let url = format!("sqlite://{}?mode=ro", stack.relay_data_dir().join("relay.sqlite3").display());
    sqlx::any::install_default_drivers();
    let pool = sqlx::AnyPool::connect(&url).await.unwrap();
    let n: (i64,) = sqlx::query_as("SELECT COUNT(*) FROM receipts").fetch_one(&pool).await.unwrap();
    n.0
}

#[tokio::test(flavor = "multi_thread")]
async fn chat_round_trip_with_real_model_and_every_lookup() {
    let stack = Stack::start();
    let client = stack.client();
    let out = client.chat("What is the capital of France?", &options()).await.unwrap();

    // Structure, not wording: the 135M model's words vary.
    assert!(!out.reply.trim().is_empty(), "empty reply");
    assert_eq!(out.model, "gpt-oss:20b");
    assert_eq!(out.provider, shared::catalog::PROVIDER);
    assert!(out.usage.prompt_tokens > 0 && out.usage.completion_tokens > 0);
    assert!(out.usage.completion_tokens <= 16, "maxTokens not honoured: {:?}", out.usage);
    assert_eq!(out.usage.total_tokens, out.usage.prompt_tokens + out.usage.completion_tokens);
    // Dev quotes: the receipt names the binding quote the client verified before sending.
    assert!(out.quote_present && !out.unattested);
    assert!(!out.receipt.backend_saw_plaintext && out.receipt.tee_processed);
    assert_eq!(out.receipt.tdx_quote_hash.len(), 64);

    // The receipt binds the enclave key we used.
    let key = client.public_key().await.unwrap();
    assert_eq!(out.receipt.tee_pubkey, key.public_key);

    // Each lookup returns the same receipt; by-tx re-derives the address from the commit.
    let by_address = client.receipt(&ReceiptQuery::Address(out.receipt.address.clone())).await.unwrap().0;
    let by_hash = client.receipt(&ReceiptQuery::Hash(out.receipt.encrypted_prompt_hash.clone())).await.unwrap().0;
    let by_tx = client.receipt(&ReceiptQuery::Transaction(out.onchain.signature.clone())).await.unwrap().0;
    assert_eq!(by_address, out.receipt);
    assert_eq!(by_hash, out.receipt);
    assert_eq!(by_tx, out.receipt);
    assert_eq!(out.onchain.explorer_url, format!("{}/attestation/by-tx/{}", stack.relay_url, out.onchain.signature));

    // The commit transaction carries the hash in its instruction data (checked from raw JSON too).
    let (status, raw) = get(&format!("{}/attestation/by-tx/{}", stack.relay_url, out.onchain.signature)).await;
    assert_eq!(status, 200);
    assert_eq!(raw["encryptedPromptHash"], out.receipt.encrypted_prompt_hash);
    let cors = reqwest::get(format!("{}/attestation/{}", stack.relay_url, out.receipt.address)).await.unwrap();
    assert_eq!(cors.headers()["access-control-allow-origin"], "*");

    // Unknown and malformed lookups.
    let (s, body) = get(&format!("{}/attestation/by-hash/{}", stack.relay_url, "0".repeat(64))).await;
    assert_eq!((s, body["error"].as_str()), (404, Some("not_found")));
    let (s, body) = get(&format!("{}/attestation/by-tx/notbase58!", stack.relay_url)).await;
    assert_eq!((s, body["error"].as_str()), (400, Some("bad_request")));
    let (s, body) = get(&format!("{}/attestation/xyz", stack.relay_url)).await;
    assert_eq!((s, body["error"].as_str()), (400, Some("bad_request")));
    assert_eq!(receipt_rows(&stack).await, 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn key_and_attestation_through_the_relay() {
    let stack = Stack::start_without_quotes();
    let (s, key) = get(&format!("{}/tee/public-key", stack.relay_url)).await;
    assert_eq!(s, 200);
    assert_eq!(key["algorithm"], "x25519");
    assert_eq!(key["teeType"], "TDX-HOSTED");
    assert!(key.get("success").is_none(), "contract: no success field on key reads");
    let raw = shared::b64::decode(key["publicKey"].as_str().unwrap()).unwrap();
    assert_eq!(raw.len(), 32);
    assert_eq!(key["publicKeySha256"], hex::encode(shared::sha256(&raw)));

    let (s, att) = get(&format!("{}/tee/attestation", stack.relay_url)).await;
    assert_eq!(s, 200);
    // No configfs-tsm provider here: the key is still served, the quote is null with the reason.
    assert!(att["tdxQuote"].is_null());
    assert_eq!(att["tdxQuoteError"], "tdx_quote_unavailable");
    assert_eq!(att["teePublicKey"], key["publicKey"]);
    assert_eq!(att["teePublicKeySha256"], key["publicKeySha256"]);
    assert_eq!(att["reportDataHex"], format!("{}{}", key["publicKeySha256"].as_str().unwrap(), "0".repeat(64)));
    assert!(att["generatedAt"].as_str().unwrap().ends_with('Z'));
    assert!(att.get("success").is_none());
}

#[tokio::test(flavor = "multi_thread")]
async fn tampered_ciphertext_is_refused_and_leaves_no_receipt() {
    let stack = Stack::start();
    let mut env = sealed_envelope(&stack, "tamper me").await;
    env.ciphertext[3] ^= 0x01;
    let (status, body) = post_process(&stack, &json!({"encryptedPrompt": env.to_json_string()}), Some(API_KEY)).await;
    assert_eq!(status, 400);
    assert_eq!(body["success"], false);
    assert_eq!(body["error"], "decrypt_failed");
    assert!(body["message"].as_str().unwrap().contains("does not decrypt"));
    let hash = hex::encode(env.ciphertext_hash());
    let (s, _) = get(&format!("{}/attestation/by-hash/{hash}", stack.relay_url)).await;
    assert_eq!(s, 404);
    assert_eq!(receipt_rows(&stack).await, 0);

    // A malformed envelope gets its own code and the field at fault.
    let (status, body) =
        post_process(&stack, &json!({"encryptedPrompt": "{\"publicKey\":\"AAAA\"}"}), Some(API_KEY)).await;
    assert_eq!((status, body["error"].as_str()), (400, Some("invalid_envelope")));
    assert!(
        body["message"].as_str().unwrap().contains("ciphertext")
            || body["message"].as_str().unwrap().contains("algorithm")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_same_envelope_twice_gives_one_receipt() {
    let stack = Stack::start();
    let env = sealed_envelope(&stack, "say hi").await;
    let body = json!({"encryptedPrompt": env.to_json_string()});
    let (first, ok) = post_process(&stack, &body, Some(API_KEY)).await;
    assert_eq!(first, 200, "{ok}");
    assert_eq!(ok["success"], true);
    let receipt: Receipt = serde_json::from_value(ok["receipt"].clone()).unwrap();
    assert_eq!(ok["onchainAttestation"]["address"], receipt.address.as_str());
    let (second, refused) = post_process(&stack, &body, Some(API_KEY)).await;
    assert_eq!(second, 409);
    assert_eq!(refused["success"], false);
    assert_eq!(refused["error"], "replay_detected");
    // The enclave itself refused (before calling the model), not only the relay's unique index.
    assert!(refused["message"].as_str().unwrap().contains("already used"), "{refused}");
    assert_eq!(receipt_rows(&stack).await, 1);
    let enclave_log = stack.enclave.log_text();
    let refusals = enclave_log.lines().filter(|l| l.contains("refused") && l.contains("route=\"process\"")).count();
    assert_eq!(refusals, 1, "{enclave_log}");
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_requests_get_contract_codes() {
    let stack = Stack::start();
    let (s, body) = post_process(&stack, &json!({"model": "gpt-oss:20b"}), Some(API_KEY)).await;
    assert_eq!((s, body["success"].as_bool(), body["error"].as_str()), (400, Some(false), Some("bad_request")));
    assert!(body["message"].as_str().unwrap().contains("encryptedPrompt"));

    let env = sealed_envelope(&stack, "x").await;
    let (s, body) = post_process(&stack, &json!({"encryptedPrompt": env.to_json_string()}), None).await;
    assert_eq!((s, body["error"].as_str()), (401, Some("unauthorized")));
    let (s, body) = post_process(&stack, &json!({"encryptedPrompt": env.to_json_string()}), Some("sk_live_x")).await;
    assert_eq!((s, body["error"].as_str()), (401, Some("unauthorized")));

    // A catalog model with no GPU-node endpoint (gemma4:31b is `Soon`), and an unknown one.
    for model in ["gemma4:31b", "svc-gpu:gemma4:31b", "no-such-model"] {
        let body = json!({"encryptedPrompt": env.to_json_string(), "model": model});
        let (s, body) = post_process(&stack, &body, Some(API_KEY)).await;
        assert_eq!((s, body["error"].as_str()), (501, Some("gpu_not_configured")), "{model}");
        assert_eq!(body["success"], false);
    }
    assert_eq!(receipt_rows(&stack).await, 0);

    // Oversized body: 413 with a JSON body, before the enclave sees anything.
    let huge = "A".repeat(shared::envelope::MAX_ENVELOPE_JSON + 8192);
    let (s, body) = post_process(&stack, &json!({"encryptedPrompt": huge}), Some(API_KEY)).await;
    assert_eq!((s, body["error"].as_str()), (413, Some("payload_too_large")));
}

#[tokio::test(flavor = "multi_thread")]
async fn stopped_enclave_gives_tee_unreachable() {
    let mut stack = Stack::start();
    let endpoint = format!("http://127.0.0.1:{}", stack.enclave_port);
    let ready = format!("{}/ready", stack.relay_url);
    assert_eq!(get(&ready).await, (200, json!({"ready": true, "database": true, "enclavesUp": 1, "enclaves": 1})));
    stack.enclave.stop();
    // Not ready once the relay's next look finds no enclave (it looks every second here);
    // alive all the while.
    let mut answer = get(&ready).await;
    for _ in 0..50 {
        if answer.0 == 503 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        answer = get(&ready).await;
    }
    assert_eq!(answer, (503, json!({"ready": false, "database": true, "enclavesUp": 0, "enclaves": 1})));
    assert_eq!(get(&format!("{}/health", stack.relay_url)).await.0, 200);
    let (s, body) = get(&format!("{}/tee/public-key", stack.relay_url)).await;
    assert_eq!(s, 502);
    assert_eq!(body["error"], "tee_unreachable");
    assert_eq!(body["teeEndpoint"], endpoint.as_str());
    assert!(!body["message"].as_str().unwrap().is_empty());
    let (s, body) = get(&format!("{}/tee/attestation", stack.relay_url)).await;
    assert_eq!((s, body["error"].as_str()), (502, Some("tee_unreachable")));
    // A well-formed envelope (the relay checks the form before forwarding), sealed to some key.
    let plaintext = serde_json::to_vec(&shared::envelope::PromptPlaintext::from_prompt("x", 0)).unwrap();
    let (envelope, _) = shared::envelope::seal(&[9u8; 32], &plaintext, &mut rand_core::OsRng).unwrap();
    let body = json!({"encryptedPrompt": envelope.to_json_string()});
    let (s, body) = post_process(&stack, &body, Some(API_KEY)).await;
    assert_eq!((s, body["error"].as_str(), body["success"].as_bool()), (502, Some("tee_unreachable"), Some(false)));
    assert_eq!(body["teeEndpoint"], endpoint.as_str());

    // An operator who does not publish the internal address names something else there.
    let path = stack.dir.path().join("relay.json");
    let mut config: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    config["teeEndpointShown"] = json!("enclave-1");
    std::fs::write(&path, config.to_string()).unwrap();
    tokio::task::block_in_place(|| stack.restart_relay(&[]));
    let (s, body) = get(&format!("{}/tee/public-key", stack.relay_url)).await;
    assert_eq!(
        (s, body["error"].as_str(), body["teeEndpoint"].as_str()),
        (502, Some("tee_unreachable"), Some("enclave-1"))
    );
    assert!(!body.to_string().contains(&endpoint), "{body}");
}

#[tokio::test(flavor = "multi_thread")]
async fn restarted_enclave_has_a_new_key_and_the_client_recovers() {
    let mut stack = Stack::start();
    let cache = stack.dir.path().join("client-key.json");
    let client = stack.client().with_key_cache(KeyCache::new(Some(cache.clone())));
    let first = client.chat("hello", &options()).await.unwrap();
    assert!(!first.retried);
    assert!(cache.exists(), "key not cached");

    stack.restart_enclave();
    // A fresh client process that reads the stale key from the cache file.
    let client = stack.client().with_key_cache(KeyCache::new(Some(cache)));
    let second = client.chat("hello again", &options()).await.unwrap();
    assert!(second.retried, "the stale key should have failed once");
    assert_ne!(first.receipt.tee_pubkey, second.receipt.tee_pubkey);
    assert_ne!(first.receipt.enclave_pubkey, second.receipt.enclave_pubkey);
    assert_eq!(second.receipt.tee_pubkey, client.public_key().await.unwrap().public_key);
}

#[tokio::test(flavor = "multi_thread")]
async fn canary_never_reaches_relay_logs_or_storage() {
    let mut stack = Stack::start();
    let mut random = [0u8; 12];
    OsRng.fill_bytes(&mut random);
    let canary = format!("CANARY{}", hex::encode(random));
    let out = stack.client().chat(&format!("Repeat this word: {canary}"), &options()).await.unwrap();
    // The reply may echo the canary: it is encrypted too, and must not leak either.
    let reply_marker = out.reply.trim().to_string();
    stack.relay.stop();

    let log = stack.relay.log_text();
    assert!(log.contains("/tee/process"), "relay log did not record the request at all");
    assert!(!log.contains(&canary), "canary in relay log");
    for entry in std::fs::read_dir(stack.relay_data_dir()).unwrap() {
        let path = entry.unwrap().path();
        let bytes = std::fs::read(&path).unwrap();
        let hay = String::from_utf8_lossy(&bytes);
        assert!(!hay.contains(&canary), "canary in {}", path.display());
        if reply_marker.len() >= 12 {
            assert!(!hay.contains(&reply_marker), "reply text in {}", path.display());
        }
    }
}
