//! The one plaintext path: `POST /agent` without `encryptedPrompt`. The relay is the backend
//! here and sees the prompt: the tool loop with the eighteen tools, one plain completion, or a
//! BRAID plan (with a fallback to the tool loop), and chat history when a `chatId` is named.

pub mod chats;
pub mod request;
pub mod run;

use serde::Serialize;
use shared::catalog::PROVIDER;
use shared::wire::{ToolCall, Usage};

pub use run::{PlainAgent, PlainOutcome};

use crate::billing::metering::{self, Bill, BillingReport, Paid};
use crate::http::error::RelayError;
use crate::state::App;
use request::Path;

/// A checked plaintext request, with its history loaded.
pub struct PlainCall {
    pub prompt: String,
    pub model: String,
    pub path: Path,
    /// `(owner, chatId)` when the turn is to be stored.
    pub chat: Option<(String, String)>,
    pub history: Vec<chats::Turn>,
}

/// Runs a paid plaintext call; the turn is stored (when asked) before the charge settles.
pub async fn run(app: &App, call: PlainCall, bill: Bill) -> Result<Paid<PlainOutcome>, RelayError> {
    metering::paid(app, bill, move |app| async move {
        let outcome =
            app.plain.run(&call.model, &call.prompt, &call.history, &call.path).await.map_err(RelayError::Model)?;
        if let Some((owner, chat_id)) = &call.chat {
            chats::append(&app.store, owner, chat_id, &call.prompt, &outcome.reply, crate::unix_now()).await?;
        }
        let usage = outcome.usage;
        Ok((outcome, usage))
    })
    .await
}

/// The tool-loop answer (contract §2.3, default path).
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolLoopReply {
    pub success: bool,
    pub reply: String,
    pub tool_calls: Vec<ToolCall>,
    pub usage: Usage,
    pub iterations: u32,
    pub model: String,
    pub provider: &'static str,
    pub billing: BillingReport,
    pub free_messages_remaining: u32,
}

/// The BRAID answer (contract §2.3, BRAID path).
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct BraidReply {
    pub success: bool,
    pub reply: String,
    pub reasoning: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub braid_trace: Option<BraidTrace>,
    pub usage: Usage,
    pub iterations: u32,
    pub model: String,
    pub provider: &'static str,
    pub cost: String,
    pub billing: BillingReport,
    pub free_messages_remaining: u32,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct BraidTrace {
    pub grd_id: &'static str,
    pub intent: &'static str,
    #[schema(value_type = Vec<Object>)]
    pub nodes: Vec<relay_tools::braid::NodeTrace>,
    pub total_duration_ms: u64,
    pub total_tokens: u64,
}

/// Either answer, as `/agent` sends it.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(untagged)]
pub enum PlainReply {
    ToolLoop(ToolLoopReply),
    Braid(BraidReply),
}

impl PlainReply {
    pub fn new(outcome: PlainOutcome, model: String, billing: BillingReport, free_messages_remaining: u32) -> Self {
        match outcome.braid {
            None => PlainReply::ToolLoop(ToolLoopReply {
                success: true,
                reply: outcome.reply,
                tool_calls: outcome.tool_calls,
                usage: outcome.usage,
                iterations: outcome.iterations,
                model,
                provider: PROVIDER,
                billing,
                free_messages_remaining,
            }),
            Some(braid) => PlainReply::Braid(BraidReply {
                success: true,
                reply: outcome.reply,
                reasoning: "braid",
                braid_trace: braid.include_trace.then_some(BraidTrace {
                    grd_id: braid.grd_id,
                    intent: braid.intent,
                    nodes: braid.nodes,
                    total_duration_ms: braid.total_duration_ms,
                    total_tokens: outcome.usage.total_tokens,
                }),
                usage: outcome.usage,
                iterations: outcome.iterations,
                model,
                provider: PROVIDER,
                cost: cost(&billing),
                billing,
                free_messages_remaining,
            }),
        }
    }
}

/// BRAID's `cost`: `FREE` for a free message (contract §2.3), else the amount charged.
fn cost(billing: &BillingReport) -> String {
    match billing.method {
        "free" => "FREE".into(),
        "x402" => format!("{} {} (x402)", billing.charged, billing.currency),
        _ => format!("{} {}", billing.charged, billing.currency),
    }
}
