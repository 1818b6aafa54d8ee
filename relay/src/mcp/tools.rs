//! The thirteen tools (contract §4.4), each the call of one public route. Descriptions say when
//! a tool moves real funds. Tools whose routes are Soon answer the route's 404 as a tool error.

use axum::http::Method;
use axum::http::request::Parts;
use rmcp::handler::server::common::Extension;
use rmcp::handler::server::common::schema_for_type;
use rmcp::model::{CallToolResult, Implementation, JsonObject, RequestMetaObject, ServerCapabilities, ServerConfig};
use rmcp::{ServerHandler, schemars, tool, tool_handler, tool_router};
use serde::Deserialize;
use serde_json::{Value, json};
use shared::mcp_args::{BalanceArgs, EncryptArgs, PayoutArgs, SessionArgs, WalletSwapArgs};

use super::call::{self, RouteCall};

/// Every tool, in the contract's order.
pub const TOOL_NAMES: [&str; 13] = [
    "priv_quote",
    "priv_anonymity_set",
    "priv_swap_oneshot",
    "priv_swap_oneshot_execute",
    "priv_session_status",
    "priv_create_wallet",
    "priv_swap_managed",
    "priv_encrypt",
    "priv_shield",
    "priv_balance",
    "priv_attestation",
    "private_inference_paid",
    "list_models",
];

#[derive(Clone)]
pub struct Tools {
    api: axum::Router,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct QuoteArgs {
    /// Input mint (base58).
    pub from_mint: String,
    /// Output mint (base58).
    pub to_mint: String,
    /// Base units of the input, as a string of digits.
    pub amount: String,
    /// Slippage in basis points, 0 to 10000.
    pub slippage_bps: Option<u16>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AnonymitySetArgs {
    /// A mint the service swaps (base58).
    pub mint: String,
    /// Base units: also say which bucket this amount falls in.
    pub amount: Option<String>,
    /// The window, 1 to 168 hours.
    pub window_hours: Option<u32>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OneshotArgs {
    /// The wallet that will sign the funding transaction (base58).
    pub payer_pubkey: String,
    pub from_mint: String,
    pub to_mint: String,
    /// Base units of the input, as a string of digits.
    pub amount: String,
    /// A fresh wallet that receives the output (not the payer).
    pub destination_pubkey: String,
    pub slippage_bps: Option<u16>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExecuteArgs {
    /// The session id (uuid) from priv_swap_oneshot.
    pub session_id: String,
    /// The signature of the funding transaction the payer broadcast (base58).
    pub funding_tx_sig: String,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateWalletArgs {
    /// Where the wallet's events are delivered (https URL).
    pub webhook_url: String,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InferenceArgs {
    /// The prompt envelope JSON (DESIGN §4.1), sealed to the attested enclave key by the client:
    /// the tool server never sees the prompt.
    pub encrypted_prompt: String,
    /// A catalog model id, e.g. `gpt-oss:20b`.
    pub model: String,
    /// Upper bound on generated tokens.
    pub max_tokens: u32,
    /// The x402 payment payload (JSON), if not sent in `_meta["x402/payment"]`.
    pub payment: Option<Value>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct NoArgs {}

/// The tool's arguments as `T`: every missing required field named at once
/// (`missing_required_fields`), a wrong-typed one `invalid_field`; both as tool errors, as the
/// routes answer them.
fn parse<T: serde::de::DeserializeOwned + schemars::JsonSchema + std::any::Any>(
    args: JsonObject,
) -> Result<T, Box<CallToolResult>> {
    let schema = schema_for_type::<T>();
    let missing: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter(|k| args.get(*k).is_none_or(|v| v.is_null() || v.as_str() == Some("")))
        .collect();
    if !missing.is_empty() {
        return Err(Box::new(call::refused(
            400,
            "missing_required_fields",
            &format!("missing: {}", missing.join(", ")),
            None,
        )));
    }
    serde_json::from_value(Value::Object(args)).map_err(|e| {
        let message: String = e.to_string().chars().take(200).collect();
        Box::new(call::refused(400, "invalid_field", &message, None))
    })
}

fn query(pairs: &[(&str, Option<String>)]) -> String {
    let parts: Vec<String> =
        pairs.iter().filter_map(|(k, v)| v.as_ref().map(|v| format!("{k}={}", encode(v)))).collect();
    if parts.is_empty() { String::new() } else { format!("?{}", parts.join("&")) }
}

/// Percent-encodes a query value or path segment (RFC 3986 unreserved characters pass).
fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

fn get(uri: String) -> RouteCall {
    RouteCall { method: Method::GET, uri, body: None, payment: None }
}

fn post(uri: String, body: Value) -> RouteCall {
    RouteCall { method: Method::POST, uri, body: Some(body), payment: None }
}

#[tool_router]
impl Tools {
    pub fn new(api: axum::Router) -> Self {
        Tools { api }
    }

    async fn route(&self, parts: &Parts, call: RouteCall) -> CallToolResult {
        call::run(&self.api, Some(parts), call).await
    }

    #[tool(
        description = "Price a private swap (GET /agents/v1/quote): the router's output less the service's spread, \
                          and where the amount stands among the denomination buckets. Paid per call with the API key. \
                          Moves no funds.",
        input_schema = schema_for_type::<QuoteArgs>()
    )]
    async fn priv_quote(&self, args: JsonObject, Extension(parts): Extension<Parts>) -> CallToolResult {
        let a: QuoteArgs = match parse(args) {
            Ok(a) => a,
            Err(refusal) => return *refusal,
        };
        let q = query(&[
            ("fromMint", Some(a.from_mint)),
            ("toMint", Some(a.to_mint)),
            ("amount", Some(a.amount)),
            ("slippageBps", a.slippage_bps.map(|b| b.to_string())),
        ]);
        self.route(&parts, get(format!("/agents/v1/quote{q}"))).await
    }

    #[tool(description = "How many recent fundings share each denomination bucket of a mint (GET \
                          /agents/v1/anonymity-set). Free. Moves no funds.", input_schema = schema_for_type::<AnonymitySetArgs>())]
    async fn priv_anonymity_set(&self, args: JsonObject, Extension(parts): Extension<Parts>) -> CallToolResult {
        let a: AnonymitySetArgs = match parse(args) {
            Ok(a) => a,
            Err(refusal) => return *refusal,
        };
        let q = query(&[
            ("mint", Some(a.mint)),
            ("amount", a.amount),
            ("windowHours", a.window_hours.map(|h| h.to_string())),
        ]);
        self.route(&parts, get(format!("/agents/v1/anonymity-set{q}"))).await
    }

    #[tool(description = "Start a one-shot private swap (POST /agents/v1/swaps/oneshot): returns the session, the \
                          enclave's signed commitment and an unsigned funding transaction. MOVES REAL FUNDS once the \
                          payer signs and broadcasts the funding: check the commitment against the attested enclave \
                          key and the transaction first (svc swap oneshot does).", input_schema = schema_for_type::<OneshotArgs>())]
    async fn priv_swap_oneshot(&self, args: JsonObject, Extension(parts): Extension<Parts>) -> CallToolResult {
        let a: OneshotArgs = match parse(args) {
            Ok(a) => a,
            Err(refusal) => return *refusal,
        };
        let mut body = json!({"payerPubkey": a.payer_pubkey, "fromMint": a.from_mint, "toMint": a.to_mint,
                              "amount": a.amount, "destinationPubkey": a.destination_pubkey});
        if let Some(bps) = a.slippage_bps {
            body["slippageBps"] = json!(bps);
        }
        self.route(&parts, post("/agents/v1/swaps/oneshot".into(), body)).await
    }

    #[tool(description = "Execute a funded one-shot session (POST /agents/v1/swaps/oneshot/{id}/execute): the \
                          enclave checks the funding on chain, swaps and pays the committed destination, or refunds. \
                          MOVES REAL FUNDS.", input_schema = schema_for_type::<ExecuteArgs>())]
    async fn priv_swap_oneshot_execute(&self, args: JsonObject, Extension(parts): Extension<Parts>) -> CallToolResult {
        let a: ExecuteArgs = match parse(args) {
            Ok(a) => a,
            Err(refusal) => return *refusal,
        };
        let uri = format!("/agents/v1/swaps/oneshot/{}/execute", encode(&a.session_id));
        self.route(&parts, post(uri, json!({"fundingTxSig": a.funding_tx_sig}))).await
    }

    #[tool(description = "A swap session's state (GET /agents/v1/sessions/{id}); poll until settled or failed. Moves \
                          no funds.", input_schema = schema_for_type::<SessionArgs>())]
    async fn priv_session_status(&self, args: JsonObject, Extension(parts): Extension<Parts>) -> CallToolResult {
        let a: SessionArgs = match parse(args) {
            Ok(a) => a,
            Err(refusal) => return *refusal,
        };
        self.route(&parts, get(format!("/agents/v1/sessions/{}", encode(&a.session_id)))).await
    }

    #[tool(description = "Create a managed wallet (POST /agents/v1/wallets). Its key is held by the enclave; \
                          the answer carries the webhook secret, shown once. Moves no funds by itself.", input_schema = schema_for_type::<CreateWalletArgs>())]
    async fn priv_create_wallet(&self, args: JsonObject, Extension(parts): Extension<Parts>) -> CallToolResult {
        let a: CreateWalletArgs = match parse(args) {
            Ok(a) => a,
            Err(refusal) => return *refusal,
        };
        self.route(&parts, post("/agents/v1/wallets".into(), json!({"webhookUrl": a.webhook_url}))).await
    }

    #[tool(description = "Swap from a managed wallet's public balance to a destination (POST \
                          /agents/v1/wallets/{id}/swap): a session to poll; the enclave signs. A wallet created with an \
                          owner key needs the owner's signature, which this server cannot add: use svc, or svc mcp (a local tool server that signs as the owner). MOVES REAL FUNDS.",
           input_schema = schema_for_type::<WalletSwapArgs>())]
    async fn priv_swap_managed(&self, args: JsonObject, Extension(parts): Extension<Parts>) -> CallToolResult {
        let a: WalletSwapArgs = match parse(args) {
            Ok(a) => a,
            Err(refusal) => return *refusal,
        };
        let mut body = json!({"fromMint": a.from_mint, "toMint": a.to_mint, "amount": a.amount,
                              "destinationPubkey": a.destination_pubkey});
        if let Some(bps) = a.slippage_bps {
            body["slippageBps"] = json!(bps);
        }
        self.route(&parts, post(format!("/agents/v1/wallets/{}/swap", encode(&a.wallet_id)), body)).await
    }

    #[tool(description = "Move a managed wallet's tokens into its private balance (POST \
                          /agents/v1/wallets/{id}/encrypt): a session to poll. A wallet created with an owner key \
                          needs the owner's signature, which this server cannot add: use svc, or svc mcp (a local tool server that signs as the owner). MOVES REAL FUNDS.",
           input_schema = schema_for_type::<EncryptArgs>())]
    async fn priv_encrypt(&self, args: JsonObject, Extension(parts): Extension<Parts>) -> CallToolResult {
        let a: EncryptArgs = match parse(args) {
            Ok(a) => a,
            Err(refusal) => return *refusal,
        };
        let body = json!({"mint": a.mint, "amount": a.amount});
        self.route(&parts, post(format!("/agents/v1/wallets/{}/encrypt", encode(&a.wallet_id)), body)).await
    }

    #[tool(description = "Shield a managed wallet's tokens to a fresh address through the privacy pool (POST \
                          /agents/v1/wallets/{id}/shield): four transactions with random delays, a session to poll; \
                          `amount` is one of the mint's denominations. A wallet created with an owner key needs the \
                          owner's signature, which this server cannot add: use svc, or svc mcp (a local tool server that signs as the owner). MOVES REAL FUNDS.",
           input_schema = schema_for_type::<PayoutArgs>())]
    async fn priv_shield(&self, args: JsonObject, Extension(parts): Extension<Parts>) -> CallToolResult {
        let a: PayoutArgs = match parse(args) {
            Ok(a) => a,
            Err(refusal) => return *refusal,
        };
        let body = json!({"mint": a.mint, "amount": a.amount, "destinationPubkey": a.destination_pubkey});
        self.route(&parts, post(format!("/agents/v1/wallets/{}/shield", encode(&a.wallet_id)), body)).await
    }

    #[tool(description = "A managed wallet's balances per mint (GET /agents/v1/wallets/{id}/balance): public on-chain \
                          balances for now. Moves no funds.", input_schema = schema_for_type::<BalanceArgs>())]
    async fn priv_balance(&self, args: JsonObject, Extension(parts): Extension<Parts>) -> CallToolResult {
        let a: BalanceArgs = match parse(args) {
            Ok(a) => a,
            Err(refusal) => return *refusal,
        };
        let uri = format!("/agents/v1/wallets/{}/balance{}", encode(&a.wallet_id), query(&[("mints", Some(a.mints))]));
        self.route(&parts, get(uri)).await
    }

    #[tool(description = "A settled session's enclave-signed receipt, ledger address and explorer links (GET \
                          /agents/v1/attestations/{sessionId}). Moves no funds.", input_schema = schema_for_type::<SessionArgs>())]
    async fn priv_attestation(&self, args: JsonObject, Extension(parts): Extension<Parts>) -> CallToolResult {
        let a: SessionArgs = match parse(args) {
            Ok(a) => a,
            Err(refusal) => return *refusal,
        };
        self.route(&parts, get(format!("/agents/v1/attestations/{}", encode(&a.session_id)))).await
    }

    #[tool(description = "Private inference paid per call with x402 (POST /api/v1/x402/chat/completions): send a \
                          prompt envelope sealed to the attested enclave key; the reply comes back sealed to you. \
                          Without a payment the result is an error carrying the x402 PaymentRequired; retry with \
                          the payment in _meta[\"x402/payment\"] (or `payment`). Spends one x402 payment.", input_schema = schema_for_type::<InferenceArgs>())]
    async fn private_inference_paid(
        &self,
        args: JsonObject,
        Extension(parts): Extension<Parts>,
        meta: RequestMetaObject,
    ) -> CallToolResult {
        let a: InferenceArgs = match parse(args) {
            Ok(a) => a,
            Err(refusal) => return *refusal,
        };
        let payment = meta.0.0.get("x402/payment").cloned().or(a.payment);
        let body = json!({"encryptedPrompt": a.encrypted_prompt, "model": a.model, "maxTokens": a.max_tokens});
        let call = RouteCall { payment, ..post("/api/v1/x402/chat/completions".into(), body) };
        self.route(&parts, call).await
    }

    #[tool(description = "The listed models with their context length and price (GET /api/v1/models). Moves no funds.", input_schema = schema_for_type::<NoArgs>())]
    async fn list_models(&self, args: JsonObject, Extension(parts): Extension<Parts>) -> CallToolResult {
        let _: NoArgs = match parse(args) {
            Ok(a) => a,
            Err(refusal) => return *refusal,
        };
        self.route(&parts, get("/api/v1/models".into())).await
    }
}

#[tool_handler]
impl ServerHandler for Tools {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("svc-relay-mcp", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Private AI inference and private swaps. Tools marked MOVES REAL FUNDS act on real funds. \
                 Authenticate with the API key (Authorization: Bearer sk_svc_…) on this HTTP endpoint.",
            )
    }
}
