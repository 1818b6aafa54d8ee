//! The tool loop: ask the model, run the tools it calls in order, feed the results back,
//! until it answers in text or `MAX_ITERATIONS` model calls have been made.
//!
//! A malformed call (arguments that are not a JSON object, an unknown tool) is answered with
//! an error result the model can read, exactly like a failing tool; only a failing model
//! ends the loop with an error. Reaching the limit ends with a reply that says so.

use serde_json::{Map, Value, json};
use shared::wire::Usage;

use crate::model::{ChatMessage, ChatRole, Completion, Endpoint, ModelClient, ModelError, ToolCallRequest};
use crate::tool::{ToolError, run_bounded};
use crate::toolset::ToolSet;

/// Model calls per request (contract §8).
pub const MAX_ITERATIONS: u32 = 8;

/// Raw argument text kept in a record of a malformed call.
const MAX_RAW_ARGS: usize = 512;

/// One executed call, as `toolCalls` reports it (contract §2.3).
pub use shared::wire::ToolCall as ToolCallRecord;

#[derive(Debug, Clone, PartialEq)]
pub struct LoopOutcome {
    /// Markdown.
    pub reply: String,
    pub tool_calls: Vec<ToolCallRecord>,
    /// Summed over every model call.
    pub usage: Usage,
    /// Model calls made.
    pub iterations: u32,
    pub stopped_at_limit: bool,
}

/// Per-request options.
#[derive(Debug, Clone, Copy, Default)]
pub struct LoopOptions {
    pub max_tokens: Option<u32>,
    pub temperature: Option<f32>,
}

pub async fn run_tool_loop(
    client: &ModelClient,
    endpoint: &Endpoint,
    tools: &ToolSet,
    mut messages: Vec<ChatMessage>,
    options: LoopOptions,
) -> Result<LoopOutcome, ModelError> {
    let specs = tools.specs();
    let mut records = Vec::new();
    let mut usage = Usage::default();
    for iteration in 1..=MAX_ITERATIONS {
        let completion = Completion {
            messages: &messages,
            tools: specs,
            max_tokens: options.max_tokens,
            temperature: options.temperature,
        };
        let completed = match client.complete(endpoint, completion).await {
            // A tool call the model's server cannot parse fails the turn (small models do
            // this); ask for that turn again with no tools, so it ends in a text answer.
            Err(ModelError::UnparsedOutput) if !specs.is_empty() => {
                tracing::info!(iteration, "the model's tool call could not be parsed; asking again without tools");
                client.complete(endpoint, Completion { tools: &[], ..completion }).await?
            }
            other => other?,
        };
        add_usage(&mut usage, completed.usage);
        if completed.tool_calls.is_empty() || tools.is_empty() {
            return Ok(LoopOutcome {
                reply: completed.content,
                tool_calls: records,
                usage,
                iterations: iteration,
                stopped_at_limit: false,
            });
        }
        let calls: Vec<ToolCallRequest> = completed
            .tool_calls
            .into_iter()
            .enumerate()
            .map(|(i, mut call)| {
                if call.id.is_empty() {
                    call.id = format!("call_{iteration}_{i}");
                }
                call
            })
            .collect();
        messages.push(ChatMessage {
            role: ChatRole::Assistant,
            content: completed.content,
            tool_calls: calls.iter().map(echoed).collect(),
            tool_call_id: None,
        });
        for call in calls {
            let record = execute(tools, &call).await;
            messages.push(ChatMessage {
                role: ChatRole::Tool,
                content: record.result.to_string(),
                tool_calls: Vec::new(),
                tool_call_id: Some(call.id),
            });
            records.push(record);
        }
    }
    Ok(LoopOutcome {
        reply: limit_reply(&records),
        tool_calls: records,
        usage,
        iterations: MAX_ITERATIONS,
        stopped_at_limit: true,
    })
}

async fn execute(tools: &ToolSet, call: &ToolCallRequest) -> ToolCallRecord {
    let name = call.function.name.trim().to_string();
    let args = match parse_arguments(&call.function.arguments) {
        Ok(args) => args,
        Err(message) => {
            let raw: String = call.function.arguments.chars().take(MAX_RAW_ARGS).collect();
            return ToolCallRecord {
                tool: name,
                args: json!({ "raw": raw }),
                result: ToolError::BadArguments(message.into()).to_json(),
            };
        }
    };
    let result = match tools.get(&name) {
        Some(tool) => run_bounded(tool, &args, tools.limits).await,
        None => ToolError::Unknown(name.chars().take(64).collect()).to_json(),
    };
    ToolCallRecord { tool: name, args: Value::Object(args), result }
}

/// The call as the history sends it back, its arguments as a JSON object's text: model servers
/// refuse a history whose arguments they cannot parse, so malformed ones go back as `{}` (the
/// error result tells the model what was wrong).
fn echoed(call: &ToolCallRequest) -> ToolCallRequest {
    let mut call = call.clone();
    let args = parse_arguments(&call.function.arguments).unwrap_or_default();
    call.function.arguments = Value::Object(args).to_string();
    call
}

/// The model's argument text as a JSON object; empty text means no arguments.
fn parse_arguments(raw: &str) -> Result<Map<String, Value>, &'static str> {
    if raw.trim().is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_str::<Value>(raw) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err("arguments must be a JSON object"),
        Err(_) => Err("arguments are not valid JSON"),
    }
}

/// Adds one model call's tokens to a request's total. The counts come from the GPU node, so
/// they saturate rather than overflow (found by fuzz/fuzz_targets/model.rs).
pub fn add_usage(total: &mut Usage, more: Usage) {
    total.prompt_tokens = total.prompt_tokens.saturating_add(more.prompt_tokens);
    total.completion_tokens = total.completion_tokens.saturating_add(more.completion_tokens);
    total.total_tokens = total.total_tokens.saturating_add(more.total_tokens);
}

fn limit_reply(records: &[ToolCallRecord]) -> String {
    let mut names: Vec<&str> = records.iter().map(|r| r.tool.as_str()).collect();
    names.dedup();
    let called = if names.is_empty() {
        "no tools".to_string()
    } else {
        names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
    };
    format!(
        "**Stopped after {MAX_ITERATIONS} model calls** (the limit per request) before the model gave a final \
         answer.\n\nTools called: {called}. Their results are in `toolCalls`; ask a narrower question to get \
         an answer within the limit."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_must_be_an_object_or_empty() {
        assert_eq!(parse_arguments("").unwrap(), Map::new());
        assert_eq!(parse_arguments(" \n").unwrap(), Map::new());
        assert_eq!(parse_arguments(r#"{"q": "sol"}"#).unwrap()["q"], "sol");
        assert_eq!(parse_arguments("[1]"), Err("arguments must be a JSON object"));
        assert_eq!(parse_arguments("{\"q\": "), Err("arguments are not valid JSON"));
    }

    #[test]
    fn usage_sums_saturate() {
        let huge = Usage { prompt_tokens: u64::MAX, completion_tokens: 1, total_tokens: u64::MAX - 1 };
        let mut total = Usage { prompt_tokens: 5, completion_tokens: u64::MAX, total_tokens: 7 };
        add_usage(&mut total, huge);
        assert_eq!(total, Usage { prompt_tokens: u64::MAX, completion_tokens: u64::MAX, total_tokens: u64::MAX });
    }

    #[test]
    fn limit_reply_names_each_tool_run_once_in_order() {
        let record = |t: &str| ToolCallRecord { tool: t.into(), args: json!({}), result: json!({}) };
        let reply = limit_reply(&[record("a"), record("a"), record("b")]);
        assert!(reply.starts_with("**Stopped after 8 model calls**"));
        assert!(reply.contains("Tools called: `a`, `b`."));
    }
}
