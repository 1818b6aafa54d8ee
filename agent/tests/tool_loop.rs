//! The loop's mechanics against a scripted OpenAI-compatible model: order, arguments,
//! results fed back, usage sums, the iteration cap, malformed calls, failing tools.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent::model::{ChatMessage, ChatRole, Endpoint, ModelClient, ModelError, RetryPolicy};
use agent::tool::{Args, Tool, ToolError, ToolFuture, ToolLimits, read_specs};
use agent::tool_loop::{LoopOptions, LoopOutcome, MAX_ITERATIONS, run_tool_loop};
use agent::toolset::ToolSet;
use serde_json::{Value, json};
use standins::openai::{self, Turn};

/// Echoes its arguments and remembers the order it was called in.
struct Echo {
    name: &'static str,
    log: Arc<Mutex<Vec<String>>>,
}

impl Tool for Echo {
    fn name(&self) -> &'static str {
        self.name
    }
    fn call<'a>(&'a self, args: &'a Args) -> ToolFuture<'a> {
        Box::pin(async move {
            self.log.lock().unwrap().push(self.name.to_string());
            Ok(json!({"echo": args, "by": self.name}))
        })
    }
}

struct Broken;

impl Tool for Broken {
    fn name(&self) -> &'static str {
        "broken"
    }
    fn call<'a>(&'a self, _args: &'a Args) -> ToolFuture<'a> {
        Box::pin(async { Err(ToolError::Upstream("answered HTTP 503".into())) })
    }
}

/// What the model is told about the three.
const SPECS: &str = r#"[
    {"name": "first", "description": "returns its arguments",
     "parameters": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}},
    {"name": "second", "description": "returns its arguments",
     "parameters": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}},
    {"name": "broken", "description": "always fails", "parameters": {"type": "object", "properties": {}}}
]"#;

fn toolset(log: &Arc<Mutex<Vec<String>>>) -> ToolSet {
    ToolSet::new(
        vec![
            Box::new(Echo { name: "first", log: log.clone() }),
            Box::new(Echo { name: "second", log: log.clone() }),
            Box::new(Broken),
        ],
        &read_specs(SPECS),
        ToolLimits { timeout: Duration::from_secs(5), max_output_bytes: 4096 },
    )
}

fn endpoint(base: &str) -> Endpoint {
    Endpoint { base_url: format!("{base}/v1"), upstream_model: "scripted".into(), api_key: None, tls_pin: None }
}

async fn run(turns: Vec<Turn>, log: &Arc<Mutex<Vec<String>>>) -> (Result<LoopOutcome, ModelError>, openai::Seen) {
    let (server, seen) = openai::start(turns).await;
    let ep = endpoint(&server.base_url);
    let retry = RetryPolicy { attempts: 1, ..RetryPolicy::default() };
    let client = ModelClient::for_endpoint(&ep, Duration::from_secs(10), retry).unwrap();
    let messages = vec![ChatMessage::new(ChatRole::User, "hello")];
    let outcome = run_tool_loop(&client, &ep, &toolset(log), messages, LoopOptions::default()).await;
    (outcome, seen)
}

#[tokio::test]
async fn calls_run_in_order_and_results_are_fed_back() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let turns = vec![
        Turn::ToolCalls(vec![("second".into(), r#"{"q":"b"}"#.into()), ("first".into(), r#"{"q":"a"}"#.into())]),
        Turn::call("first", json!({"q": "c"})),
        Turn::text("## Done\nall three ran"),
    ];
    let (outcome, seen) = run(turns, &log).await;
    let outcome = outcome.unwrap();
    assert_eq!(outcome.reply, "## Done\nall three ran");
    assert_eq!(outcome.iterations, 3);
    assert!(!outcome.stopped_at_limit);
    assert_eq!(*log.lock().unwrap(), ["second", "first", "first"]);
    let tools: Vec<&str> = outcome.tool_calls.iter().map(|r| r.tool.as_str()).collect();
    assert_eq!(tools, ["second", "first", "first"]);
    assert_eq!(outcome.tool_calls[0].args, json!({"q": "b"}));
    assert_eq!(outcome.tool_calls[0].result, json!({"echo": {"q": "b"}, "by": "second"}));
    // Usage: requests 1..=3 of the stand-in, prompt 100+n, completion 10+n.
    assert_eq!(outcome.usage.prompt_tokens, 101 + 102 + 103);
    assert_eq!(outcome.usage.completion_tokens, 11 + 12 + 13);
    assert_eq!(outcome.usage.total_tokens, outcome.usage.prompt_tokens + outcome.usage.completion_tokens);

    let requests = seen.all();
    assert_eq!(requests.len(), 3);
    // Every request offers the three tools as OpenAI function tools.
    let offered: Vec<&str> =
        requests[0]["tools"].as_array().unwrap().iter().map(|t| t["function"]["name"].as_str().unwrap()).collect();
    assert_eq!(offered, ["first", "second", "broken"]);
    assert_eq!(requests[0]["tools"][0]["type"], "function");
    // The second request carries the assistant turn and both results, each tied to its call id.
    let messages = requests[1]["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 4);
    assert_eq!(messages[1]["role"], "assistant");
    assert_eq!(messages[1]["tool_calls"][0]["id"], "call_1_0");
    assert_eq!(messages[2]["role"], "tool");
    assert_eq!(messages[2]["tool_call_id"], "call_1_0");
    let fed: Value = serde_json::from_str(messages[2]["content"].as_str().unwrap()).unwrap();
    assert_eq!(fed, json!({"echo": {"q": "b"}, "by": "second"}));
    assert_eq!(messages[3]["tool_call_id"], "call_1_1");
    assert_eq!(requests[2]["messages"].as_array().unwrap().len(), 6);
}

#[tokio::test]
async fn the_cap_is_eight_model_calls_and_ends_with_a_reply() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let (outcome, seen) = run(vec![Turn::call("first", json!({"q": "again"}))], &log).await;
    let outcome = outcome.unwrap();
    assert_eq!(MAX_ITERATIONS, 8);
    assert_eq!(seen.count(), 8, "no ninth model call");
    assert_eq!(outcome.iterations, 8);
    assert!(outcome.stopped_at_limit);
    assert_eq!(outcome.tool_calls.len(), 8);
    assert!(outcome.reply.contains("Stopped after 8 model calls"), "{}", outcome.reply);
    assert_eq!(outcome.usage.prompt_tokens, (1..=8).map(|n| 100 + n).sum::<u64>());
}

#[tokio::test]
async fn malformed_and_unknown_calls_become_errors_the_model_reads() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let turns = vec![
        Turn::ToolCalls(vec![
            ("first".into(), "{\"q\": ".into()),
            ("first".into(), "[1, 2]".into()),
            ("nope".into(), "{}".into()),
            ("broken".into(), "".into()),
            ("first".into(), r#"{"q":"fine"}"#.into()),
        ]),
        Turn::text("recovered"),
    ];
    let (outcome, seen) = run(turns, &log).await;
    let outcome = outcome.unwrap();
    assert_eq!(outcome.reply, "recovered");
    let results: Vec<&Value> = outcome.tool_calls.iter().map(|r| &r.result).collect();
    assert_eq!(results[0], &json!({"error": "invalid arguments: arguments are not valid JSON"}));
    assert_eq!(outcome.tool_calls[0].args, json!({"raw": "{\"q\": "}));
    assert_eq!(results[1], &json!({"error": "invalid arguments: arguments must be a JSON object"}));
    assert_eq!(results[2], &json!({"error": "unknown tool `nope`"}));
    assert_eq!(results[3], &json!({"error": "upstream answered HTTP 503"}));
    assert_eq!(results[4], &json!({"echo": {"q": "fine"}, "by": "first"}));
    // Only the well-formed call reached a tool.
    assert_eq!(*log.lock().unwrap(), ["first"]);
    // All five results went back to the model.
    let messages = seen.all()[1]["messages"].as_array().unwrap().clone();
    assert_eq!(messages.iter().filter(|m| m["role"] == "tool").count(), 5);
    // The history carries parseable arguments only (llama.cpp answers 500 to a history whose
    // arguments are not JSON): the malformed ones go back as `{}`.
    let echoed: Vec<&str> = messages.iter().find(|m| m["role"] == "assistant").unwrap()["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["function"]["arguments"].as_str().unwrap())
        .collect();
    assert_eq!(echoed, ["{}", "{}", "{}", "{}", r#"{"q":"fine"}"#]);
}

/// llama.cpp's answer when it cannot parse the model's tool call (its server_error shape).
const UNPARSED: &str = r#"{"error":{"code":500,"message":"Failed to parse input at pos 12: <tool_call>{\"name\": ","type":"server_error"}}"#;

#[tokio::test]
async fn an_unparseable_tool_call_is_asked_again_without_tools() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let turns = vec![Turn::call("first", json!({"q": "a"})), Turn::Fail(500, UNPARSED.into()), Turn::text("in words")];
    let (outcome, seen) = run(turns, &log).await;
    let outcome = outcome.unwrap();
    assert_eq!(outcome.reply, "in words");
    assert_eq!(outcome.iterations, 2, "the retry is the same model call, not a new iteration");
    assert_eq!(outcome.tool_calls.len(), 1);
    let requests = seen.all();
    assert_eq!(requests.len(), 3);
    assert!(requests[1].get("tools").is_some());
    assert!(requests[2].get("tools").is_none(), "the retry offers no tools");
    assert_eq!(requests[1]["messages"], requests[2]["messages"], "the same turn is asked again");
    // Its tokens are not counted twice: the failed attempt reported none.
    assert_eq!(outcome.usage.prompt_tokens, 101 + 103);
    // A second failure is the model's error; any other 500 is not retried.
    let (outcome, seen) = run(vec![Turn::Fail(500, UNPARSED.into())], &log).await;
    assert_eq!(outcome.unwrap_err(), ModelError::UnparsedOutput);
    assert_eq!(seen.count(), 2);
    let (outcome, seen) = run(vec![Turn::Fail(500, "boom".into())], &log).await;
    assert_eq!(outcome.unwrap_err(), ModelError::Status(500));
    assert_eq!(seen.count(), 1);
}

#[tokio::test]
async fn a_failing_model_is_an_error_and_overflow_is_named() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let (outcome, _) = run(vec![Turn::Fail(500, "boom".into())], &log).await;
    assert_eq!(outcome.unwrap_err(), ModelError::Status(500));
    let overflow = r#"{"error":{"code":400,"message":"the request exceeds the available context size","type":"exceed_context_size_error"}}"#;
    let (outcome, _) = run(vec![Turn::Fail(400, overflow.into())], &log).await;
    assert_eq!(outcome.unwrap_err(), ModelError::ContextExceeded);
}

#[tokio::test]
async fn with_no_tools_the_first_answer_is_final_and_no_tools_are_offered() {
    let (server, seen) = openai::start(vec![Turn::call("first", json!({})), Turn::text("late")]).await;
    let ep = endpoint(&server.base_url);
    let client = ModelClient::for_endpoint(&ep, Duration::from_secs(10), RetryPolicy::default()).unwrap();
    let messages = vec![ChatMessage::new(ChatRole::User, "hi")];
    let outcome = run_tool_loop(&client, &ep, &ToolSet::empty(), messages, LoopOptions::default()).await.unwrap();
    assert_eq!(outcome.iterations, 1);
    assert!(outcome.tool_calls.is_empty());
    assert!(seen.all()[0].get("tools").is_none());
}
