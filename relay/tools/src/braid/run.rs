//! Running one plan: tool nodes in order, then the model writes the answer from their
//! results. Tool failures are recorded and the plan goes on (their error is data for the
//! answer); a missing entity or a failing model fails the plan.

use std::time::Instant;

use serde::Serialize;
use serde_json::{Map, Value, json};
use shared::wire::Usage;

use super::entities::Entities;
use super::plans::{Action, ArgsFrom, Plan};
use agent::model::{ChatMessage, ChatRole, Completion, Endpoint, ModelClient, ModelError};
use agent::tool::{Args, ToolError, run_bounded};
use agent::tool_loop::{LoopOptions, ToolCallRecord};
use agent::toolset::ToolSet;

/// Bytes of one node's result the answer prompt carries.
const RESULT_BYTES_IN_PROMPT: usize = 3000;

/// One node as `braidTrace.nodes` reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeTrace {
    pub node_id: String,
    pub label: String,
    /// Always `action`: every node acts (a tool call or the model).
    #[serde(rename = "type")]
    pub kind: String,
    /// `completed`, or `failed` when its tool answered an error.
    pub status: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct BraidOutcome {
    pub grd_id: &'static str,
    pub intent: &'static str,
    pub reply: String,
    pub nodes: Vec<NodeTrace>,
    pub tool_calls: Vec<ToolCallRecord>,
    pub usage: Usage,
    pub total_duration_ms: u64,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum BraidError {
    #[error("plan `{plan}` needs {what} in the prompt")]
    MissingEntity { plan: &'static str, what: &'static str },
    #[error("model call failed: {0}")]
    Model(ModelError),
}

/// Runs `plan` for `prompt`. `intent` is what detection said (it differs from the plan id only
/// when the caller forced a plan); `history` are prior chat turns.
#[allow(clippy::too_many_arguments)]
pub async fn run_plan(
    plan: &'static Plan,
    intent: &'static str,
    prompt: &str,
    history: &[ChatMessage],
    client: &ModelClient,
    endpoint: &Endpoint,
    tools: &ToolSet,
    options: LoopOptions,
) -> Result<BraidOutcome, BraidError> {
    let started = Instant::now();
    let entities = Entities::read(prompt);
    let mut nodes = Vec::with_capacity(plan.nodes.len());
    let mut records: Vec<ToolCallRecord> = Vec::new();
    let mut usage = Usage::default();
    let mut reply = String::new();
    for node in plan.nodes {
        let status = match node.action {
            Action::Tool { tool, args } => {
                let args = arguments(plan, args, prompt, &entities, &records)?;
                let result = match tools.get(tool) {
                    Some(t) => run_bounded(t, &args, tools.limits).await,
                    None => ToolError::NotConfigured(tool).to_json(),
                };
                let failed = result.get("error").is_some();
                records.push(ToolCallRecord { tool: tool.to_string(), args: Value::Object(args), result });
                if failed { "failed" } else { "completed" }
            }
            Action::Answer { instruction } => {
                let messages = answer_messages(instruction, prompt, history, &records);
                let completion = Completion {
                    messages: &messages,
                    tools: &[],
                    max_tokens: options.max_tokens,
                    temperature: options.temperature,
                };
                let completed = client.complete(endpoint, completion).await.map_err(BraidError::Model)?;
                agent::tool_loop::add_usage(&mut usage, completed.usage);
                reply = completed.content;
                "completed"
            }
        };
        nodes.push(NodeTrace {
            node_id: node.id.into(),
            label: node.label.into(),
            kind: "action".into(),
            status: status.into(),
        });
    }
    Ok(BraidOutcome {
        grd_id: plan.id,
        intent,
        reply,
        nodes,
        tool_calls: records,
        usage,
        total_duration_ms: started.elapsed().as_millis() as u64,
    })
}

fn arguments(
    plan: &Plan,
    from: ArgsFrom,
    prompt: &str,
    entities: &Entities,
    earlier: &[ToolCallRecord],
) -> Result<Args, BraidError> {
    let query: String = prompt.chars().take(300).collect();
    let value = match from {
        ArgsFrom::SearchPrompt => json!({"query": query}),
        ArgsFrom::SearchTokens if entities.tokens.is_empty() => json!({"query": query}),
        ArgsFrom::SearchTokens => json!({"query": format!("{} token news", entities.tokens.join(" "))}),
        ArgsFrom::SearchMarket => json!({"query": "crypto market news today"}),
        ArgsFrom::PricesOfMajors => json!({"mints": ["SOL", "JUP", "BONK"]}),
        ArgsFrom::PricesOfTokens => json!({"mints": tokens_to_price(entities, earlier)}),
        ArgsFrom::Trending => json!({"limit": 10}),
        ArgsFrom::QuoteFirstPair => {
            let input = entities.tokens.first().map_or("SOL", String::as_str);
            let output = match entities.tokens.get(1) {
                Some(t) => t.as_str(),
                None if input == "USDC" => "SOL",
                None => "USDC",
            };
            json!({"inputMint": input, "outputMint": output, "amount": one_unit(input).to_string(), "slippageBps": 50})
        }
        ArgsFrom::BalanceOfAddress => {
            let address = entities
                .addresses
                .first()
                .ok_or(BraidError::MissingEntity { plan: plan.id, what: "a Solana address" })?;
            json!({"address": address})
        }
    };
    Ok(match value {
        Value::Object(map) => map,
        _ => Map::new(),
    })
}

/// Mints a wallet holds (from an earlier `solana_balance`), else the named tokens, else SOL.
fn tokens_to_price(entities: &Entities, earlier: &[ToolCallRecord]) -> Vec<String> {
    let held: Vec<String> = earlier
        .iter()
        .filter(|r| r.tool == "solana_balance")
        .filter_map(|r| r.result.get("tokens").and_then(Value::as_array))
        .flatten()
        .filter_map(|t| t.get("mint").and_then(Value::as_str).map(String::from))
        .take(10)
        .collect();
    let mut mints = match held.is_empty() {
        true => entities.tokens.clone(),
        false => std::iter::once("SOL".to_string()).chain(held).collect(),
    };
    if mints.is_empty() {
        mints.push("SOL".into());
    }
    mints
}

/// One whole token in base units, for a representative quote.
fn one_unit(symbol: &str) -> u64 {
    match symbol {
        "SOL" => 1_000_000_000,
        "BONK" => 100_000,
        _ => 1_000_000,
    }
}

fn answer_messages(
    instruction: &str,
    prompt: &str,
    history: &[ChatMessage],
    records: &[ToolCallRecord],
) -> Vec<ChatMessage> {
    let mut data = String::new();
    for r in records {
        let text = r.result.to_string();
        let cut: String = text.chars().take(RESULT_BYTES_IN_PROMPT).collect();
        data.push_str(&format!("### {}\n{}\n\n", r.tool, cut));
    }
    let system = format!(
        "{instruction} Use only the data given; say plainly when a source failed or data is missing. \
         Answer in Markdown."
    );
    let mut messages = vec![ChatMessage::new(ChatRole::System, system)];
    messages.extend(history.iter().cloned());
    messages.push(ChatMessage::new(ChatRole::User, format!("{prompt}\n\n## Data\n\n{data}")));
    messages
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::braid::plan;

    #[test]
    fn arguments_follow_the_prompt() {
        let p = plan("token-research").unwrap();
        let e = Entities::read("research $BONK");
        let quote = arguments(p, ArgsFrom::QuoteFirstPair, "research $BONK", &e, &[]).unwrap();
        assert_eq!(
            Value::Object(quote),
            json!({"inputMint": "BONK", "outputMint": "USDC", "amount": "100000", "slippageBps": 50})
        );
        let wallet = plan("wallet-analysis").unwrap();
        assert_eq!(
            arguments(wallet, ArgsFrom::BalanceOfAddress, "my wallet?", &Entities::default(), &[]),
            Err(BraidError::MissingEntity { plan: "wallet-analysis", what: "a Solana address" })
        );
        let held = ToolCallRecord {
            tool: "solana_balance".into(),
            args: json!({}),
            result: json!({"tokens": [{"mint": "JUPyiwrYJFskUPiHa7hkeR8VUtAeFoSYbKedZNsDvCN"}]}),
        };
        assert_eq!(
            tokens_to_price(&Entities::default(), &[held]),
            ["SOL", "JUPyiwrYJFskUPiHa7hkeR8VUtAeFoSYbKedZNsDvCN"]
        );
        assert_eq!(tokens_to_price(&Entities::default(), &[]), ["SOL"]);
    }
}
