//! What a new user hits first, end to end against the real binaries: every relay answer is
//! JSON in the contract's `{error, message}` form (framework refusals included), encrypted
//! `/agent` accepts the contract's empty `prompt` and answers 501 for a model without a GPU
//! node, and `reasoning: "serv"` is BRAID.

use e2e::{Stack, StackOptions};
use rand_core::OsRng;
use serde_json::{Value, json};
use shared::envelope::{self, PromptPlaintext};
use standins::openai::{self, Turn};

async fn stack(turns: Vec<Turn>) -> (Stack, openai::Seen, standins::Running) {
    let (server, seen) = openai::start(turns).await;
    let options = StackOptions { model_base_url: Some(format!("{}/v1", server.base_url)), ..StackOptions::default() };
    let stack = tokio::task::spawn_blocking(move || Stack::start_with(options)).await.unwrap();
    (stack, seen, server)
}

/// An envelope sealed to the enclave's current key.
async fn sealed(stack: &Stack, prompt: &str) -> String {
    let key: Value = reqwest::get(format!("{}/tee/public-key", stack.relay_url)).await.unwrap().json().await.unwrap();
    let key: [u8; 32] = shared::b64::decode_array(key["publicKey"].as_str().unwrap()).unwrap();
    let now = shared::time::unix_now();
    let plaintext = serde_json::to_vec(&PromptPlaintext::from_prompt(prompt, now)).unwrap();
    envelope::seal(&key, &plaintext, &mut OsRng).unwrap().0.to_json_string()
}

async fn send(request: reqwest::RequestBuilder) -> (u16, String, Value) {
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let content_type = response.headers().get("content-type").map(|v| v.to_str().unwrap().to_string());
    let text = response.text().await.unwrap();
    let body = serde_json::from_str(&text).unwrap_or_else(|_| panic!("HTTP {status} body is not JSON: {text:?}"));
    (status, content_type.unwrap_or_default(), body)
}

/// `{error, message}` and nothing else (no `success` off the routes that carry it).
fn assert_error(status: u16, content_type: &str, body: &Value, want_status: u16, code: &str) {
    assert_eq!(status, want_status, "{body}");
    assert!(content_type.starts_with("application/json"), "{content_type}");
    assert_eq!(body["error"], code, "{body}");
    assert!(body["message"].as_str().is_some_and(|m| !m.is_empty()), "{body}");
    let keys: Vec<&String> = body.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["error", "message"], "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_refusal_is_json_with_the_contracts_code() {
    let (stack, _, _server) = stack(vec![Turn::text("ok")]).await;
    let http = reqwest::Client::new();
    let url = |p: &str| format!("{}{p}", stack.relay_url);

    let (s, ct, body) = send(http.get(url("/no/such/route"))).await;
    assert_error(s, &ct, &body, 404, "not_found");
    let (s, ct, body) = send(http.get(url("/tee/process"))).await;
    assert_error(s, &ct, &body, 405, "method_not_allowed");
    let (s, ct, body) = send(http.delete(url("/api/v1/balance"))).await;
    assert_error(s, &ct, &body, 405, "method_not_allowed");

    // Query rejections: our own check, and the framework's (a field given twice).
    let key = &stack.api_key;
    let (s, ct, body) = send(http.get(url("/api/v1/usage?limit=abc")).bearer_auth(key)).await;
    assert_error(s, &ct, &body, 400, "bad_request");
    let (s, ct, body) = send(http.get(url("/api/v1/usage?limit=1&limit=2")).bearer_auth(key)).await;
    assert_error(s, &ct, &body, 400, "bad_request");

    // Oversized bodies: the private routes' cap and the framework's default limit elsewhere.
    let huge = "x".repeat(3 << 20);
    let (s, ct, body) = send(http.post(url("/api/v1/auth/challenge")).body(huge.clone())).await;
    assert_error(s, &ct, &body, 413, "payload_too_large");
    let (s, ct, body) = send(http.post(url("/api/v1/chat/completions")).bearer_auth(key).body(huge.clone())).await;
    assert_error(s, &ct, &body, 413, "payload_too_large");
    let (s, _, body) = send(http.post(url("/tee/process")).bearer_auth(key).body(huge)).await;
    assert_eq!((s, body["success"].as_bool(), body["error"].as_str()), (413, Some(false), Some("payload_too_large")));

    // Bad path parameters.
    let (s, ct, body) = send(http.get(url("/attestation/not-base58!"))).await;
    assert_error(s, &ct, &body, 400, "bad_request");
    let (s, ct, body) = send(http.get(url("/attestation/by-hash/xyz"))).await;
    assert_error(s, &ct, &body, 400, "bad_request");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn encrypted_agent_takes_an_empty_prompt_and_refuses_a_real_one() {
    let (stack, seen, _server) = stack(vec![Turn::text("sealed answer")]).await;
    let http = reqwest::Client::new();
    let url = format!("{}/agent", stack.relay_url);

    let body = json!({"prompt": "", "encryptedPrompt": sealed(&stack, "hello").await});
    let (status, _, answer) = send(http.post(&url).json(&body)).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!((answer["success"].as_bool(), answer["encrypted"].as_bool()), (Some(true), Some(true)));
    assert_eq!(answer["freeMessagesRemaining"], 4);
    assert!(answer.get("reply").is_none(), "the reply stays sealed");
    assert_eq!(seen.count(), 1);

    // A prompt beside the envelope means the relay saw plaintext: refused before anything runs.
    let body = json!({"prompt": "hello", "encryptedPrompt": sealed(&stack, "hello").await});
    let (status, _, answer) = send(http.post(&url).json(&body)).await;
    assert_eq!((status, answer["error"].as_str()), (400, Some("invalid_field")), "{answer}");
    assert_eq!(answer["success"], false);
    assert_eq!(answer["freeMessagesRemaining"], 4, "nothing was spent");
    assert_eq!(seen.count(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn encrypted_agent_for_a_model_without_a_gpu_node_is_501() {
    let (stack, seen, _server) = stack(vec![Turn::text("never")]).await;
    let http = reqwest::Client::new();
    // gemma4:31b is listed (Soon) and has no endpoint in the enclave.
    let body = json!({"prompt": "", "encryptedPrompt": sealed(&stack, "hello").await, "model": "gemma4:31b"});
    let (status, _, answer) = send(http.post(format!("{}/agent", stack.relay_url)).json(&body)).await;
    assert_eq!((status, answer["error"].as_str()), (501, Some("gpu_not_configured")), "{answer}");
    assert_eq!(answer["success"], false);
    assert_eq!(answer["freeMessagesRemaining"], 5, "the free message came back");
    assert_eq!(seen.count(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn serv_is_the_older_name_of_braid() {
    let (stack, _, _server) = stack(vec![Turn::text("**Plan step.**")]).await;
    let body = json!({"prompt": "Compare SOL vs JUP", "reasoning": "serv", "braidOptions": {"includeTrace": true}});
    let (status, _, answer) = send(reqwest::Client::new().post(format!("{}/agent", stack.relay_url)).json(&body)).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["reasoning"], "braid");
    assert_eq!(answer["braidTrace"]["grdId"], "comparison");
    assert!(answer["braidTrace"]["nodes"].as_array().is_some_and(|n| !n.is_empty()));
}
