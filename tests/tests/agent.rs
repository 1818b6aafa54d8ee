//! `POST /agent` end to end: the real relay and enclave binaries, a scripted OpenAI-compatible
//! model (deterministic tool calls), stand-in tool upstreams, and the real small model for
//! structure. Encrypted mode must leave no prompt or tool data in the relay's log or database.

use e2e::{Stack, StackOptions};
use serde_json::{Value, json};
use standins::openai::{self, Turn};

const BRAVE_TOKEN: &str = "brave-test-token";

struct Fixture {
    stack: Stack,
    model: openai::Seen,
    brave: standins::brave::Recorder,
    _servers: Vec<standins::Running>,
}

/// A stack whose model is the scripted stand-in and whose `web_search` is the Brave stand-in.
async fn fixture(turns: Vec<Turn>, relay: Value) -> Fixture {
    let (model_server, model) = openai::start(turns).await;
    let (brave_server, brave) = standins::brave::start(BRAVE_TOKEN).await;
    let options = StackOptions {
        model_base_url: Some(format!("{}/v1", model_server.base_url)),
        model_max_tokens: 64,
        tools: json!({"upstreams": {"brave": {"baseUrl": brave_server.base_url, "apiKeyEnv": "E2E_BRAVE_KEY"}}}),
        relay,
        env: vec![("E2E_BRAVE_KEY".into(), BRAVE_TOKEN.into())],
        ..StackOptions::default()
    };
    let stack = tokio::task::spawn_blocking(move || Stack::start_with(options)).await.unwrap();
    Fixture { stack, model, brave, _servers: vec![model_server, brave_server] }
}

async fn post(stack: &Stack, body: Value, key: Option<&str>) -> (u16, Value) {
    e2e::http::post(&format!("{}/agent", stack.relay_url), &body, key).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn tool_loop_answers_in_the_contract_shape() {
    let turns =
        vec![Turn::call("web_search", json!({"query": "solana firedancer", "count": 2})), Turn::text("**Done.**")];
    let f = fixture(turns, json!({})).await;
    let (status, body) = post(&f.stack, json!({"prompt": "What is Firedancer?"}), None).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["success"], true);
    assert_eq!(body["reply"], "**Done.**");
    assert_eq!(body["iterations"], 2);
    assert_eq!(body["model"], "gpt-oss:20b");
    assert_eq!(body["provider"], "svc-gpu");
    assert!(body.get("skillGraph").is_none());
    let calls = body["toolCalls"].as_array().unwrap();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0]["tool"], "web_search");
    assert_eq!(calls[0]["args"], json!({"query": "solana firedancer", "count": 2}));
    let results = calls[0]["result"]["results"].as_array().unwrap();
    assert_eq!(results.len(), 2);
    assert_eq!(results[0]["url"], "https://result1.example/solana-firedancer");
    // The real request reached the stand-in with the credential from the environment.
    let seen = f.brave.requests();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].param("q"), Some("solana firedancer"));
    assert_eq!(seen[0].token.as_deref(), Some(BRAVE_TOKEN));
    // Usage is the sum of both model calls of the stand-in (prompt 100+n, completion 10+n).
    assert_eq!(body["usage"], json!({"promptTokens": 203, "completionTokens": 23, "totalTokens": 226}));
    // A guest: the free trial paid, one of five used.
    assert_eq!(body["billing"], json!({"method": "free", "charged": "0", "currency": "usdc", "balanceAfter": null}));
    assert_eq!(body["freeMessagesRemaining"], 4);
    // The model saw a system prompt shaped by the skill graph and all eighteen tools.
    let first = &f.model.all()[0];
    assert_eq!(first["tools"].as_array().unwrap().len(), 18);
    assert_eq!(first["messages"][0]["role"], "system");
    assert!(first["messages"][0]["content"].as_str().unwrap().contains("Skills and their tools"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn no_tools_is_one_plain_completion() {
    let f = fixture(vec![Turn::text("plain answer")], json!({})).await;
    let (_, body) = post(&f.stack, json!({"prompt": "hi", "useTools": false}), None).await;
    assert_eq!(body["success"], true, "{body}");
    assert_eq!(body["iterations"], 1);
    assert_eq!(body["toolCalls"], json!([]));
    assert!(f.model.all()[0].get("tools").is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn bad_input_is_named_and_costs_nothing() {
    let f = fixture(vec![Turn::text("unused")], json!({})).await;
    let cases = [
        (json!({}), 400, "missing_prompt"),
        (json!({"prompt": 7}), 400, "invalid_field"),
        (json!({"prompt": "x", "useTools": "no"}), 400, "invalid_field"),
        (json!({"prompt": "x", "reasoning": "deep"}), 400, "unknown_reasoning"),
        (
            json!({"prompt": "x", "reasoning": "braid", "braidOptions": {"forceGrdId": "nope"}}),
            400,
            "invalid_braid_options",
        ),
        (json!({"prompt": "x".repeat(40_000)}), 400, "context_length_exceeded"),
        (json!({"prompt": "x", "model": "gemma4:31b"}), 501, "gpu_not_configured"),
        (json!({"encryptedPrompt": "not an envelope"}), 400, "invalid_envelope"),
        (json!({"prompt": "x".repeat(2 << 20)}), 413, "payload_too_large"),
    ];
    for (body, status, code) in cases {
        let (got, answer) = post(&f.stack, body.clone(), None).await;
        assert_eq!((got, answer["error"].as_str()), (status, Some(code)), "{body} → {answer}");
        assert_eq!(answer["success"], false);
    }
    let (status, answer) = post(&f.stack, json!({"prompt": "x"}), Some("sk_live_nope")).await;
    assert_eq!((status, answer["error"].as_str()), (401, Some("unauthorized")));
    assert_eq!(f.model.count(), 0, "nothing reached the model");
    // None of those used a free message.
    let (_, body) = post(&f.stack, json!({"prompt": "now a good one"}), None).await;
    assert_eq!(body["freeMessagesRemaining"], 4, "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn free_trial_then_deposit_then_key_billing() {
    let f = fixture(vec![Turn::text("ok")], json!({"freeMessagesPerDay": 2, "agentPricePerCall": 1500})).await;
    for left in [1, 0] {
        let (_, body) = post(&f.stack, json!({"prompt": "hi", "useTools": false}), None).await;
        assert_eq!(body["freeMessagesRemaining"], left, "{body}");
    }
    let (status, body) = post(&f.stack, json!({"prompt": "hi", "useTools": false}), None).await;
    assert_eq!(status, 200);
    assert_eq!(body["success"], false);
    assert_eq!(body["requiresDeposit"], true);
    assert_eq!(body["reason"], "free_trial_exhausted");
    assert_eq!(body["freeMessagesRemaining"], 0);
    assert_eq!(f.model.count(), 2, "the refused call never reached the model");

    // A key with no balance: 402; credited: charged per call.
    let key = f.stack.api_key.clone();
    let (status, body) = post(&f.stack, json!({"prompt": "hi", "useTools": false}), Some(&key)).await;
    assert_eq!((status, body["error"].as_str()), (402, Some("insufficient_balance")), "{body}");
    let key_id = relay::accounts::key_id(&key);
    f.stack.credit_usdc(&key_id, 4000);
    let (_, body) = post(&f.stack, json!({"prompt": "hi", "useTools": false}), Some(&key)).await;
    assert_eq!(
        body["billing"],
        json!({"method": "key", "charged": "1500", "currency": "usdc", "balanceAfter": "2500"})
    );
    assert_eq!(body["freeMessagesRemaining"], 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_failed_request_is_not_charged() {
    let f = fixture(vec![Turn::Fail(500, "model exploded".into())], json!({"agentPricePerCall": 1000})).await;
    let key = f.stack.api_key.clone();
    f.stack.credit_usdc(&relay::accounts::key_id(&key), 1000);
    let (status, body) = post(&f.stack, json!({"prompt": "hi"}), Some(&key)).await;
    assert_eq!((status, body["error"].as_str()), (502, Some("model_error")), "{body}");
    assert!(!body.to_string().contains("exploded"), "upstream bodies are not echoed");
    assert_eq!(body["freeMessagesRemaining"], 5);
    let (_, guest) = post(&f.stack, json!({"prompt": "hi"}), None).await;
    assert_eq!(guest["error"], "model_error");
    assert_eq!(guest["freeMessagesRemaining"], 5, "the failed guest call gave its free message back: {guest}");
    let balance: Value = e2e::http::get_with_key(&format!("{}/api/v1/balance", f.stack.relay_url), &key).await.1;
    assert_eq!(balance["balances"][0], json!({"currency": "usdc", "amount": "1000"}), "refunded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn chat_history_is_sent_back_and_kept_per_account() {
    let f = fixture(
        vec![Turn::text("first answer"), Turn::text("second answer"), Turn::text("other"), Turn::text("again")],
        json!({}),
    )
    .await;
    let key = f.stack.api_key.clone();
    f.stack.credit_usdc(&relay::accounts::key_id(&key), 10_000);
    let (_, one) =
        post(&f.stack, json!({"prompt": "my name is Ada", "chatId": "c-1", "useTools": false}), Some(&key)).await;
    assert_eq!(one["reply"], "first answer", "{one}");
    let (_, two) =
        post(&f.stack, json!({"prompt": "what is my name?", "chatId": "c-1", "useTools": false}), Some(&key)).await;
    assert_eq!(two["reply"], "second answer");
    let seen = f.model.all();
    let roles_and_text: Vec<(String, String)> = seen[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .skip(1) // the system prompt
        .map(|m| (m["role"].as_str().unwrap().to_string(), m["content"].as_str().unwrap().to_string()))
        .collect();
    assert_eq!(
        roles_and_text,
        [
            ("user".to_string(), "my name is Ada".to_string()),
            ("assistant".to_string(), "first answer".to_string()),
            ("user".to_string(), "what is my name?".to_string()),
        ]
    );
    // A guest naming the same chat id gets none of it, and keeps no history of its own: a
    // guest is a network address, shared behind a NAT, so a guessed chat id would be enough
    // to read another guest's chat.
    for (i, prompt) in ["and mine?", "what did I ask?"].into_iter().enumerate() {
        let (_, guest) = post(&f.stack, json!({"prompt": prompt, "chatId": "c-1", "useTools": false}), None).await;
        assert_eq!(guest["success"], true, "{guest}");
        assert_eq!(f.model.all()[2 + i]["messages"].as_array().unwrap().len(), 2, "system + this prompt only");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn braid_runs_a_plan_with_a_trace_and_falls_back_when_it_cannot() {
    let f = fixture(vec![Turn::text("## Comparison\n| a | b |")], json!({})).await;
    let body = json!({"prompt": "Compare SOL vs JUP", "reasoning": "braid", "braidOptions": {"includeTrace": true}});
    let (_, answer) = post(&f.stack, body, None).await;
    assert_eq!(answer["success"], true, "{answer}");
    assert_eq!(answer["reasoning"], "braid");
    assert_eq!(answer["reply"], "## Comparison\n| a | b |");
    assert_eq!(answer["cost"], "FREE");
    let trace = &answer["braidTrace"];
    assert_eq!(trace["grdId"], "comparison");
    assert_eq!(trace["intent"], "comparison");
    let nodes = trace["nodes"].as_array().unwrap();
    assert_eq!(answer["iterations"], nodes.len());
    let ids: Vec<&str> = nodes.iter().map(|n| n["nodeId"].as_str().unwrap()).collect();
    assert_eq!(ids, ["search", "prices", "answer"]);
    for n in nodes {
        assert_eq!(n["type"], "action");
        assert!(n["label"].as_str().is_some_and(|l| !l.is_empty()));
    }
    // web_search reached the stand-in; token_price has no upstream here, so that node failed.
    assert_eq!(nodes[0]["status"], "completed");
    assert_eq!(nodes[1]["status"], "failed");
    assert_eq!(nodes[2]["status"], "completed");
    assert_eq!(trace["totalTokens"], answer["usage"]["totalTokens"]);
    assert!(trace["totalDurationMs"].is_u64());
    assert!(answer.get("toolCalls").is_none());
    // The answer node saw the search results.
    let prompt =
        f.model.all()[0]["messages"].as_array().unwrap().last().unwrap()["content"].as_str().unwrap().to_string();
    assert!(prompt.contains("### web_search") && prompt.contains("result1.example"), "{prompt}");

    // Forcing a plan: trace says which one ran and what detection thought.
    let body = json!({"prompt": "Compare SOL vs JUP", "reasoning": "braid",
                      "braidOptions": {"includeTrace": true, "forceGrdId": "market-overview"}});
    let (_, forced) = post(&f.stack, body, None).await;
    assert_eq!(forced["braidTrace"]["grdId"], "market-overview");
    assert_eq!(forced["braidTrace"]["intent"], "comparison");
    // Without includeTrace there is no trace.
    let (_, plain) = post(&f.stack, json!({"prompt": "Compare SOL vs JUP", "reasoning": "braid"}), None).await;
    assert!(plain.get("braidTrace").is_none() && plain["reasoning"] == "braid");

    // Wallet analysis without an address cannot run: the request falls back to the tool loop.
    let body = json!({"prompt": "analyse my wallet", "reasoning": "braid",
                      "braidOptions": {"includeTrace": true, "forceGrdId": "wallet-analysis"}});
    let (_, fallback) = post(&f.stack, body, None).await;
    assert_eq!(fallback["success"], true, "{fallback}");
    assert!(fallback.get("reasoning").is_none() && fallback.get("braidTrace").is_none());
    assert!(fallback["toolCalls"].is_array());
    let last = f.model.all().last().unwrap().clone();
    assert_eq!(last["tools"].as_array().unwrap().len(), 18, "the fallback is the tool loop");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn encrypted_mode_runs_in_the_enclave_and_the_relay_keeps_no_plaintext() {
    const PROMPT_CANARY: &str = "CANARY-PROMPT-5f1e9c";
    const TOOL_CANARY: &str = "CANARYTOOLARG7d2b";
    let turns = vec![
        Turn::call("web_search", json!({"query": TOOL_CANARY})),
        Turn::call("scrape_url", json!({"url": "https://example.com"})),
        Turn::text("sealed answer"),
    ];
    let f = fixture(turns, json!({})).await;
    let client = guest_client(&f.stack);
    let prompt = format!("Look up {PROMPT_CANARY} please");
    let out = client.agent_private(&prompt, None).await.unwrap();
    assert_eq!(out.reply, "sealed answer");
    assert_eq!(out.iterations, 3);
    assert_eq!(out.tool_calls_count, 2);
    assert_eq!(out.tool_calls[0].tool, "web_search");
    assert!(out.tool_calls[0].result.to_string().contains(TOOL_CANARY), "the stand-in answered inside the enclave");
    // The enclave has only five tools: scrape_url is unknown there.
    assert_eq!(out.tool_calls[1].result, json!({"error": "unknown tool `scrape_url`"}));
    let offered: Vec<String> = f.model.all()[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(offered, agent::tools::PRIVATE_TOOL_NAMES);
    // No system prompt shaping in encrypted mode: the user's message only.
    assert_eq!(f.model.all()[0]["messages"].as_array().unwrap().len(), 1);
    assert_eq!(out.free_messages_remaining, Some(4));
    assert!(out.encrypted);
    assert_eq!(
        out.privacy_guarantee,
        shared::wire::PrivacyGuarantee { backend_saw_plaintext: false, tools_executed_in_tee: true }
    );

    // Nothing of the prompt or the tool data reached the relay's log or database.
    let log = std::fs::read(&f.stack.relay.log).unwrap();
    let mut stored = Vec::new();
    for entry in std::fs::read_dir(f.stack.relay_data_dir()).unwrap() {
        stored.extend(std::fs::read(entry.unwrap().path()).unwrap());
    }
    for (name, bytes) in [("relay log", &log), ("relay data", &stored)] {
        for canary in [PROMPT_CANARY, TOOL_CANARY] {
            assert!(!contains(bytes, canary.as_bytes()), "{canary} found in the {name}");
        }
    }
    assert!(!stored.is_empty() && contains(&log, b"/agent"), "the log and the database were written");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn encrypted_mode_failures_are_500_and_never_plaintext() {
    let f = fixture(vec![Turn::Fail(500, "down".into())], json!({})).await;
    let client = guest_client(&f.stack);
    let err = client.agent_private("secret question", None).await.unwrap_err();
    match err {
        client::ClientError::Refused { status, code, .. } => assert_eq!((status, code.as_str()), (500, "model_error")),
        other => panic!("{other:?}"),
    }
    // An envelope sealed to a key the enclave does not hold: 500 decrypt_failed.
    let fake_tee = [9u8; 32];
    let plaintext = shared::envelope::PromptPlaintext::from_prompt("x", 0);
    let bytes = serde_json::to_vec(&plaintext).unwrap();
    let (envelope, _) = shared::envelope::seal(&fake_tee, &bytes, &mut rand_core::OsRng).unwrap();
    let (status, body) = post(&f.stack, json!({"encryptedPrompt": envelope.to_json_string()}), None).await;
    assert_eq!((status, body["success"].as_bool(), body["error"].as_str()), (500, Some(false), Some("decrypt_failed")));
    assert!(body.get("reply").is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_real_small_model_answers_in_the_contract_shape() {
    let options = StackOptions { model_max_tokens: 24, ..StackOptions::default() };
    let stack = tokio::task::spawn_blocking(move || Stack::start_with(options)).await.unwrap();
    let (status, body) = post(&stack, json!({"prompt": "Say hello.", "useTools": false}), None).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["success"], true);
    assert!(body["reply"].is_string());
    assert_eq!(body["iterations"], 1);
    let usage = &body["usage"];
    assert!(usage["promptTokens"].as_u64().unwrap() > 0 && usage["completionTokens"].as_u64().unwrap() > 0);
    assert_eq!(
        usage["totalTokens"].as_u64().unwrap(),
        usage["promptTokens"].as_u64().unwrap() + usage["completionTokens"].as_u64().unwrap()
    );
    // With tools offered the loop runs to an answer within the cap, whatever the model chose;
    // a tool call llama.cpp cannot parse is asked again without tools, so it never fails.
    let body = post(&stack, json!({"prompt": "What is the price of SOL?"}), None).await.1;
    assert_eq!(body["success"], true, "{body}");
    let iterations = body["iterations"].as_u64().unwrap();
    assert!((1..=8).contains(&iterations));
    for call in body["toolCalls"].as_array().unwrap() {
        assert!(call["tool"].is_string() && call["args"].is_object() && call["result"].is_object(), "{call}");
    }
    // Encrypted mode against the real model.
    let out = guest_client(&stack).agent_private("Say hello.", None).await.unwrap();
    assert!(out.iterations >= 1 && out.usage.total_tokens > 0);
}

/// A verifying client without an API key: a guest on the free trial.
fn guest_client(stack: &Stack) -> client::Client {
    client::Client::new(&stack.relay_url, None).with_attestation(stack.attest_options())
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}
