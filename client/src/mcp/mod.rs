//! `svc mcp`: a local MCP tool server (stdio) that signs managed-wallet requests as the wallet's
//! owner (docs/mcp.md, "The owner's local tool server").
//!
//! The relay's MCP server holds no owner key and must not: the enclave requires the owner's
//! signature precisely so that the relay cannot move a wallet's funds. An agent that should act
//! for an owner runs this server beside it instead: the owner key stays in this process, every
//! fund-moving request is sent only to an enclave that passed verification, signed over its exact
//! bytes, and a withdrawal's order is checked against the attested enclave key before it is
//! reported. Answers and refusals have the relay's MCP shapes, so an agent reads both alike;
//! what the relay wrote in them reaches the agent only as data ([`relay_text`]), and what the
//! agent may pay out is bounded here ([`guardrails`]).

pub mod guardrails;
pub mod relay_text;

use std::sync::Arc;

use ed25519_dalek::SigningKey;
use rmcp::handler::server::common::schema_for_type;
use rmcp::model::{CallToolResult, ContentBlock, Implementation, JsonObject, ServerCapabilities, ServerConfig};
use rmcp::{ServerHandler, tool, tool_handler, tool_router};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use shared::mcp_args::{BalanceArgs, EncryptArgs, PayoutArgs, SessionArgs, WalletSwapArgs};

use self::guardrails::{Guardrails, Move};
use crate::api::Client;
use crate::error::ClientError;
use crate::wallets::Payout;

/// The tools (`tools/list` answers them sorted by name).
pub const TOOL_NAMES: [&str; 6] =
    ["priv_swap_managed", "priv_encrypt", "priv_shield", "priv_withdraw", "priv_balance", "priv_session_status"];

/// The tool server: one relay client (built with attestation) and the owner's key.
#[derive(Clone)]
pub struct OwnerTools {
    client: Arc<Client>,
    owner: Arc<SigningKey>,
    guardrails: Arc<Guardrails>,
}

/// What a shield or a withdrawal moves, for the guardrails.
fn payout<'a>(args: &'a PayoutArgs, tool: &'a str) -> Move<'a> {
    Move { tool, mint: &args.mint, amount: &args.amount, destination: Some(&args.destination_pubkey) }
}

/// A tool error in the relay's shape: `{error, message, status}` (status null for a refusal made
/// here, before or after the relay answered).
fn tool_error(code: &str, message: &str, status: Option<u16>) -> CallToolResult {
    let error = json!({"error": code, "message": message, "status": status});
    let mut result = CallToolResult::error(vec![ContentBlock::text(error.to_string())]);
    result.structured_content = Some(error);
    result
}

/// The tool's arguments as `T`; a missing field is `missing_required_fields`, anything else
/// malformed `invalid_field`: both tool errors, so a model can correct its call.
fn parse<T: DeserializeOwned>(args: JsonObject) -> Result<T, Box<CallToolResult>> {
    serde_json::from_value(Value::Object(args)).map_err(|e| {
        let message: String = e.to_string().chars().take(200).collect();
        let code = if message.starts_with("missing field") { "missing_required_fields" } else { "invalid_field" };
        Box::new(tool_error(code, &message, Some(400)))
    })
}

/// A call's outcome as the tool's result. Local failures get codes of their own (docs/mcp.md).
fn answer(outcome: Result<Value, ClientError>) -> CallToolResult {
    match outcome {
        Ok(value) => {
            let value = relay_text::data(value);
            let mut result = CallToolResult::success(vec![ContentBlock::text(value.to_string())]);
            result.structured_content = Some(value);
            result
        }
        Err(ClientError::Refused { status, code, message, .. }) => {
            tool_error(&relay_text::code(&code), &relay_text::marked(&message), Some(status))
        }
        Err(e @ ClientError::NotAttested(_)) => tool_error("enclave_not_verified", &e.to_string(), None),
        Err(e @ (ClientError::RelayUnreachable(_) | ClientError::TeeUnreachable { .. })) => {
            tool_error("unreachable", &e.to_string(), None)
        }
        Err(e @ ClientError::Mismatch(_)) => tool_error("answer_mismatch", &e.to_string(), None),
        // Other failures describe an answer the relay gave (a body that does not parse, a
        // receipt that does not check): their text may quote it.
        Err(e) => tool_error("client_error", &relay_text::marked(&e.to_string()), None),
    }
}

#[tool_router]
impl OwnerTools {
    /// `client` must have been built with attestation options: every fund-moving call verifies
    /// the enclave first.
    pub fn new(client: Client, owner: SigningKey, guardrails: Guardrails) -> Self {
        OwnerTools { client: Arc::new(client), owner: Arc::new(owner), guardrails: Arc::new(guardrails) }
    }

    /// The guardrails' verdict on a payout; `Some` is the tool error to answer instead.
    fn refused(&self, request: &Move) -> Option<CallToolResult> {
        let refusal = self.guardrails.admit(request, shared::time::unix_now()).err()?;
        tracing::warn!(tool = request.tool, code = refusal.code, "refused by the guardrails");
        let status = (refusal.code == "invalid_field").then_some(400);
        Some(tool_error(refusal.code, &refusal.message, status))
    }

    #[tool(description = "Swap from a managed wallet's public balance to a destination (POST \
                          /agents/v1/wallets/{id}/swap), signed here as the wallet's owner: a session to poll with \
                          priv_session_status. MOVES REAL FUNDS.", input_schema = schema_for_type::<WalletSwapArgs>())]
    async fn priv_swap_managed(&self, args: JsonObject) -> CallToolResult {
        let a: WalletSwapArgs = match parse(args) {
            Ok(a) => a,
            Err(refusal) => return *refusal,
        };
        let payout = Move {
            tool: "priv_swap_managed",
            mint: &a.from_mint,
            amount: &a.amount,
            destination: Some(&a.destination_pubkey),
        };
        if let Some(refusal) = self.refused(&payout) {
            return refusal;
        }
        answer(
            self.client
                .wallet_swap(
                    &a.wallet_id,
                    &a.from_mint,
                    &a.to_mint,
                    &a.amount,
                    &a.destination_pubkey,
                    a.slippage_bps,
                    Some(&self.owner),
                )
                .await,
        )
    }

    #[tool(description = "Move a managed wallet's tokens into its private balance (POST \
                          /agents/v1/wallets/{id}/encrypt), signed here as the wallet's owner: a session to poll. \
                          MOVES REAL FUNDS.", input_schema = schema_for_type::<EncryptArgs>())]
    async fn priv_encrypt(&self, args: JsonObject) -> CallToolResult {
        let a: EncryptArgs = match parse(args) {
            Ok(a) => a,
            Err(refusal) => return *refusal,
        };
        answer(self.client.wallet_encrypt(&a.wallet_id, &a.mint, &a.amount, Some(&self.owner)).await)
    }

    #[tool(description = "Shield a managed wallet's tokens to a fresh address through the privacy pool (POST \
                          /agents/v1/wallets/{id}/shield), signed here as the wallet's owner: four transactions with \
                          random delays, a session to poll; `amount` is one of the mint's denominations. MOVES REAL \
                          FUNDS.", input_schema = schema_for_type::<PayoutArgs>())]
    async fn priv_shield(&self, args: JsonObject) -> CallToolResult {
        let a: PayoutArgs = match parse(args) {
            Ok(a) => a,
            Err(refusal) => return *refusal,
        };
        if let Some(refusal) = self.refused(&payout(&a, "priv_shield")) {
            return refusal;
        }
        answer(self.client.wallet_shield(Payout::from(&a), Some(&self.owner)).await)
    }

    #[tool(description = "Pay out of a managed wallet's private balance to a public address (POST \
                          /agents/v1/wallets/{id}/withdraw), signed here as the wallet's owner. The answer's \
                          withdrawal order is checked first: signed by the attested enclave for exactly this request. \
                          MOVES REAL FUNDS.", input_schema = schema_for_type::<PayoutArgs>())]
    async fn priv_withdraw(&self, args: JsonObject) -> CallToolResult {
        let a: PayoutArgs = match parse(args) {
            Ok(a) => a,
            Err(refusal) => return *refusal,
        };
        if let Some(refusal) = self.refused(&payout(&a, "priv_withdraw")) {
            return refusal;
        }
        let outcome = self
            .client
            .wallet_withdraw(Payout::from(&a), Some(&self.owner))
            .await
            .and_then(|w| serde_json::to_value(w).map_err(|e| ClientError::Malformed(e.to_string())));
        answer(outcome)
    }

    #[tool(description = "A managed wallet's balances per mint (GET /agents/v1/wallets/{id}/balance): `encrypted` \
                          (private) and `public`. Moves no funds.", input_schema = schema_for_type::<BalanceArgs>())]
    async fn priv_balance(&self, args: JsonObject) -> CallToolResult {
        let a: BalanceArgs = match parse(args) {
            Ok(a) => a,
            Err(refusal) => return *refusal,
        };
        let mints: Vec<String> = a.mints.split(',').map(|m| m.trim().to_string()).collect();
        answer(self.client.wallet_balance(&a.wallet_id, &mints).await)
    }

    #[tool(description = "A session's state (GET /agents/v1/sessions/{id}); poll until settled or failed. Moves \
                          no funds.", input_schema = schema_for_type::<SessionArgs>())]
    async fn priv_session_status(&self, args: JsonObject) -> CallToolResult {
        let a: SessionArgs = match parse(args) {
            Ok(a) => a,
            Err(refusal) => return *refusal,
        };
        answer(self.client.session(&a.session_id).await)
    }
}

#[tool_handler]
impl ServerHandler for OwnerTools {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("svc-owner-mcp", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Managed-wallet tools that sign as the wallet's owner with a key held by this local process. \
                 Tools marked MOVES REAL FUNDS act on real funds; each is sent only to an enclave that passed \
                 verification.",
            )
    }
}

/// Serves the tools over stdin/stdout until the client closes them. Refuses to start (the
/// error) when the enclave fails verification.
pub async fn serve_stdio(tools: OwnerTools) -> Result<(), ClientError> {
    use rmcp::ServiceExt;
    tools.client.enclave_key().await?;
    let running =
        tools.serve(rmcp::transport::stdio()).await.map_err(|e| ClientError::Malformed(format!("MCP: {e}")))?;
    running.waiting().await.map_err(|e| ClientError::Malformed(format!("MCP: {e}")))?;
    Ok(())
}
