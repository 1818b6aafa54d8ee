//! The model client and the tool loop as the enclave and the relay run them: the GPU node's
//! answers (status and body) read by `agent::model`, the tool calls it asks for parsed by
//! `agent::tool_loop`, and their arguments read by the five tools of encrypted mode, whose
//! upstream answers are read too.
//!
//! A stand-in server on loopback (`svc_fuzz::stub`) serves every request, model and tool
//! upstream alike, in order: the input split at NUL bytes gives the answers, each one's first
//! byte picking the status and the rest being the body. Once they are used up, the model
//! answers a plain text reply, so every run ends.
#![no_main]

use std::collections::BTreeMap;
use std::sync::OnceLock;
use std::time::Duration;

use agent::model::{ChatMessage, ChatRole, Endpoint, ModelClient, RetryPolicy};
use agent::tool_loop::{LoopOptions, MAX_ITERATIONS, run_tool_loop};
use agent::tools::{PRIVATE_TOOL_NAMES, ToolsConfig, UpstreamConfig};
use agent::toolset::ToolSet;
use libfuzzer_sys::fuzz_target;
use svc_fuzz::stub::Stub;
use zeroize::Zeroizing;

/// Statuses the first byte of an answer picks from (index = byte modulo the length).
const STATUSES: [u16; 8] = [200, 400, 500, 503, 404, 429, 502, 401];
/// Answers at most (model calls and tool calls together).
const MAX_ANSWERS: usize = 24;
const FINAL: &[u8] = br#"{"choices":[{"message":{"role":"assistant","content":"done"}}]}"#;

struct World {
    runtime: tokio::runtime::Runtime,
    stub: Stub,
    client: ModelClient,
    endpoint: Endpoint,
    tools: ToolSet,
}

fn world() -> &'static World {
    static WORLD: OnceLock<World> = OnceLock::new();
    WORLD.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
        let stub = Stub::start((200, FINAL.to_vec()));
        let endpoint = Endpoint {
            base_url: format!("{}/v1", stub.base),
            upstream_model: "fuzz-model".into(),
            api_key: None,
            tls_pin: None,
        };
        let retry = RetryPolicy { attempts: 2, first_delay: Duration::ZERO, max_delay: Duration::ZERO };
        let client = ModelClient::for_endpoint(&endpoint, Duration::from_secs(10), retry).expect("loopback http");
        let providers = ["brave", "jupiter", "coingecko", "solanaRpc"];
        let config = ToolsConfig {
            upstreams: providers
                .iter()
                .map(|p| (p.to_string(), UpstreamConfig { base_url: stub.base.clone(), api_key_env: None }))
                .collect(),
            timeout_secs: 10,
            max_output_bytes: 16 * 1024,
        };
        let credentials: BTreeMap<String, Zeroizing<String>> =
            providers.iter().map(|p| (p.to_string(), Zeroizing::new("fuzz-key".to_string()))).collect();
        // Tool construction builds reqwest clients, which need the runtime's context.
        let tools = {
            let _guard = runtime.enter();
            ToolSet::private(&config, Some(&credentials))
        };
        assert_eq!(tools.names(), PRIVATE_TOOL_NAMES);
        World { runtime, stub, client, endpoint, tools }
    })
}

fuzz_target!(|data: &[u8]| {
    let w = world();
    let answers = data
        .split(|b| *b == 0)
        .take(MAX_ANSWERS)
        .map(|a| match a.split_first() {
            Some((&s, body)) => (STATUSES[usize::from(s) % STATUSES.len()], body.to_vec()),
            None => (200, Vec::new()),
        })
        .collect();
    w.stub.load(answers);
    let messages = vec![ChatMessage::new(ChatRole::User, "What is the price of SOL?")];
    let options = LoopOptions { max_tokens: Some(64), temperature: None };
    let outcome = w.runtime.block_on(run_tool_loop(&w.client, &w.endpoint, &w.tools, messages, options));
    if let Ok(outcome) = outcome {
        assert!((1..=MAX_ITERATIONS).contains(&outcome.iterations));
        for call in &outcome.tool_calls {
            // Arguments reach a tool only as a JSON object; anything else is kept raw, with
            // an error result the model can read.
            assert!(call.args.is_object());
        }
        serde_json::to_string(&outcome.tool_calls).expect("tool calls serialise");
    }
});
