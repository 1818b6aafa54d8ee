//! The plaintext `/agent` path, which the relay runs itself (it is the backend there): the
//! tool loop with the eighteen tools, one plain completion, or a BRAID plan with a fallback
//! to the tool loop.

use std::collections::BTreeMap;
use std::time::Duration;

use agent::model::{ChatMessage, ChatRole, Endpoint, ModelClient, ModelError, RetryPolicy};
use agent::tool_loop::{LoopOptions, ToolCallRecord, run_tool_loop};
use agent::toolset::ToolSet;
use relay_tools::braid::{self, BraidOutcome, NodeTrace};
use shared::wire::Usage;

use super::chats::Turn;
use super::request::{BraidOptions, Path};
use crate::config::{ConfigError, RelayConfig};

struct Served {
    endpoint: Endpoint,
    client: ModelClient,
    max_tokens: u32,
}

pub struct PlainAgent {
    models: BTreeMap<String, Served>,
    tools: ToolSet,
    no_tools: ToolSet,
}

/// What the plaintext path produced.
#[derive(Debug)]
pub struct PlainOutcome {
    pub reply: String,
    pub tool_calls: Vec<ToolCallRecord>,
    pub usage: Usage,
    /// Model calls (tool loop) or plan nodes (BRAID).
    pub iterations: u32,
    pub braid: Option<BraidRun>,
}

#[derive(Debug)]
pub struct BraidRun {
    pub grd_id: &'static str,
    pub intent: &'static str,
    pub nodes: Vec<NodeTrace>,
    pub total_duration_ms: u64,
    pub include_trace: bool,
}

impl PlainAgent {
    pub fn from_config(config: &RelayConfig) -> Result<Self, ConfigError> {
        let retry = RetryPolicy { attempts: config.warmup_attempts.max(1), ..RetryPolicy::default() };
        let timeout = Duration::from_secs(config.model_timeout_secs.max(1));
        let mut models = BTreeMap::new();
        for (id, m) in &config.models {
            let invalid = |e: agent::model::EndpointError| ConfigError::Invalid(format!("model `{id}`: {e}"));
            let endpoint = m.to_endpoint(id).map_err(invalid)?;
            let client = ModelClient::for_endpoint(&endpoint, timeout, retry).map_err(invalid)?;
            models.insert(id.clone(), Served { endpoint, client, max_tokens: m.max_tokens });
        }
        Ok(PlainAgent { models, tools: relay_tools::full(&config.tools), no_tools: ToolSet::empty() })
    }

    pub fn serves(&self, model: &str) -> bool {
        self.models.contains_key(model)
    }

    /// A rough token count (4 bytes per token) of what the first model call will carry,
    /// plus the reply budget, so an oversized prompt is refused before anything is charged.
    pub fn estimated_tokens(&self, model: &str, prompt: &str, history: &[Turn]) -> u64 {
        let system = 1200; // system prompt and tool schemas
        let text: usize = prompt.len() + history.iter().map(|t| t.content.len() + 8).sum::<usize>();
        let reply = self.models.get(model).map_or(0, |m| u64::from(m.max_tokens));
        system + (text as u64).div_ceil(4) + reply
    }

    pub async fn run(
        &self,
        model: &str,
        prompt: &str,
        history: &[Turn],
        path: &Path,
    ) -> Result<PlainOutcome, ModelError> {
        let served = self.models.get(model).ok_or(ModelError::Unreachable)?;
        let options = LoopOptions { max_tokens: Some(served.max_tokens), temperature: None };
        let history: Vec<ChatMessage> = history
            .iter()
            .map(|t| ChatMessage::new(if t.role == "user" { ChatRole::User } else { ChatRole::Assistant }, &t.content))
            .collect();
        if let Path::Braid(braid_options) = path {
            match self.run_braid(served, prompt, &history, braid_options, options).await {
                Ok(outcome) => return Ok(outcome),
                // Contract §7 rule 2: a failed plan falls back to the tool loop.
                Err(e) => tracing::info!(reason = %e, "BRAID plan failed; falling back to the tool loop"),
            }
        }
        let tools = match path {
            Path::ToolLoop { use_tools: false } => &self.no_tools,
            _ => &self.tools,
        };
        let mut messages = vec![ChatMessage::new(ChatRole::System, relay_tools::skills::system_prompt(&tools.names()))];
        messages.extend(history);
        messages.push(ChatMessage::new(ChatRole::User, prompt));
        let outcome = run_tool_loop(&served.client, &served.endpoint, tools, messages, options).await?;
        Ok(PlainOutcome {
            reply: outcome.reply,
            tool_calls: outcome.tool_calls,
            usage: outcome.usage,
            iterations: outcome.iterations,
            braid: None,
        })
    }

    async fn run_braid(
        &self,
        served: &Served,
        prompt: &str,
        history: &[ChatMessage],
        braid_options: &BraidOptions,
        options: LoopOptions,
    ) -> Result<PlainOutcome, braid::BraidError> {
        let intent = braid::detect(prompt);
        let plan_id = braid_options.force_grd_id.as_deref().unwrap_or(intent);
        let plan = braid::plan(plan_id).unwrap_or(&braid::PLANS[2]);
        let BraidOutcome { grd_id, intent, reply, nodes, tool_calls, usage, total_duration_ms } =
            braid::run_plan(plan, intent, prompt, history, &served.client, &served.endpoint, &self.tools, options)
                .await?;
        Ok(PlainOutcome {
            reply,
            tool_calls,
            usage,
            iterations: nodes.len() as u32,
            braid: Some(BraidRun {
                grd_id,
                intent,
                nodes,
                total_duration_ms,
                include_trace: braid_options.include_trace,
            }),
        })
    }
}
