//! `POST /agent` (contract §2.2, §2.3): read and check the body, find the payer, then run the
//! plaintext path here or hand the envelope to the private pipeline. Every answer, errors
//! included, says how many free messages are left.

use std::net::{IpAddr, SocketAddr};

use axum::Json;
use axum::body::Body;
use axum::extract::{ConnectInfo, State};
use axum::http::{HeaderMap, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use shared::wire::codes;

use crate::billing::metering::{self, Bill, Paid, Payer, Price};
use crate::http::error::{ErrorBody, RelayError, Surface};
use crate::plain_agent::request::{self, AgentRequest};
use crate::plain_agent::{PlainCall, PlainReply, chats};
use crate::private::{self, SealedRequest};
use crate::state::App;

/// How the x402 manifest lists `/agent`.
pub const PRICED: crate::x402::manifest::PricedRoute = crate::x402::manifest::PricedRoute {
    method: "POST",
    path: "/agent",
    description: "One agent call (tool loop, BRAID, or encrypted mode); x402 for callers without a key",
    input: &[
        ("prompt", "string: the question (plaintext path), or"),
        ("encryptedPrompt", "string: the prompt envelope JSON (encrypted mode)"),
        ("model", "string, optional: a catalog model id (default gpt-oss:20b)"),
    ],
};

/// A guest with no free message left (contract §2.3): HTTP 200.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DepositRequired {
    pub success: bool,
    pub requires_deposit: bool,
    pub reason: &'static str,
    pub error: &'static str,
    pub message: &'static str,
    pub free_messages_remaining: u32,
}

/// Every answer of `POST /agent` with status 200 (contract §2.3).
#[derive(Serialize, utoipa::ToSchema)]
#[serde(untagged)]
#[allow(dead_code, clippy::large_enum_variant)] // A schema: never built, the answers are their own types.
pub enum AgentAnswer {
    ToolLoop(crate::plain_agent::ToolLoopReply),
    Braid(crate::plain_agent::BraidReply),
    Encrypted(EncryptedWithFree),
    DepositRequired(DepositRequired),
}

#[utoipa::path(post, path = "/agent", tag = "agent",
    summary = "The agent: tool loop (default), BRAID guided reasoning, or encrypted mode (the enclave runs the loop)",
    description = "Paid with an API key, an x402 payment, or a guest's free message of the day. Every answer carries `freeMessagesRemaining`.",
    security((), ("ApiKey" = []), ("X402" = [])), request_body = request::AgentBody,
    responses((status = 200, description = "The answer (`success: true`), or `requiresDeposit` when a guest has no free message left", body = AgentAnswer),
              (status = 400, description = "`missing_prompt`, `invalid_field`, `unknown_reasoning`, `invalid_braid_options`, `context_length_exceeded`", body = ErrorBody),
              (status = 401, body = ErrorBody), (status = 402, body = ErrorBody),
              (status = 500, description = "Encrypted mode: any enclave failure (never a plaintext fallback)", body = ErrorBody),
              (status = 501, description = "`gpu_not_configured`", body = ErrorBody),
              (status = "default", body = ErrorBody)))]
pub async fn handle(
    State(app): State<App>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let address = app.peers.caller(peer, &headers);
    let mut encrypted = false;
    match agent(&app, address, &headers, body, &mut encrypted).await {
        Ok(response) => response,
        Err(RelayError::FreeTrialExhausted) => Json(DepositRequired {
            success: false,
            requires_deposit: true,
            reason: codes::FREE_TRIAL_EXHAUSTED,
            error: codes::FREE_TRIAL_EXHAUSTED,
            message: "no free messages left today: pay per call with x402 (see /.well-known/x402), or sign in with a \
                      wallet and deposit",
            free_messages_remaining: 0,
        })
        .into_response(),
        Err(e) => {
            // A failed call used no free message.
            let free = metering::free_remaining(&app.store, &address, app.free_per_day, crate::unix_now()).await.ok();
            e.respond(Surface { success: true, free_messages_remaining: free, encrypted_agent: encrypted })
        }
    }
}

async fn agent(
    app: &App,
    address: IpAddr,
    headers: &HeaderMap,
    body: Body,
    encrypted: &mut bool,
) -> Result<Response, RelayError> {
    let request = request::parse(&crate::http::body::read(body, crate::http::body::MAX_PRIVATE_BODY).await?)?;
    // A caller that sends a key must send a good one; without one, a guest pays with x402
    // when it sends a payment (contract §4.1), else with a free message.
    let payer = match headers.contains_key(header::AUTHORIZATION) {
        true => Payer::Key(app.keys.check::<crate::accounts::keys::Chat>(headers).await?),
        false => Payer::x402(headers, format!("{}/agent", app.public_url)).unwrap_or(Payer::Guest(address)),
    };
    let price = Price::PerCall(app.prices.agent_call);
    // Everything that can be refused without running the model is refused before charging.
    let paid = match request {
        AgentRequest::Encrypted { encrypted_prompt, model } => {
            // A malformed envelope is the request's fault (400); from here on, any failure is
            // the enclave's and answers 500 (contract §7).
            let sealed = SealedRequest::new(&encrypted_prompt, Some(&model), None)?;
            *encrypted = true;
            let Paid { value, billing: _, settlement } = private::encrypted_agent::run(app, sealed, payer).await?;
            let free = free_remaining(app, address).await?;
            let mut response = Json(EncryptedWithFree { answer: value, free_messages_remaining: free }).into_response();
            if let Some(s) = settlement {
                s.attach(&mut response);
            }
            return Ok(response);
        }
        AgentRequest::Plain { prompt, model, chat_id, path } => {
            if !app.plain.serves(&model) {
                return Err(RelayError::GpuNotConfigured(model.chars().take(64).collect()));
            }
            // History belongs to an account. A guest is a network address, shared behind a
            // NAT, where a guessed chat id would read another guest's chat: guests and x402
            // callers keep none.
            let (owner, chat_id) = match &payer {
                Payer::Key(caller) => (caller.key_id.clone(), chat_id),
                Payer::X402 { .. } | Payer::Guest(_) => (String::new(), None),
            };
            let history = match &chat_id {
                Some(id) => chats::history(&app.store, &owner, id, app.max_history_turns).await?,
                None => Vec::new(),
            };
            let context = shared::catalog::context_length(&model).unwrap_or(u32::MAX);
            if app.plain.estimated_tokens(&model, &prompt, &history) > u64::from(context) {
                return Err(RelayError::input(
                    codes::CONTEXT_LENGTH_EXCEEDED,
                    format!("the prompt and chat history do not fit the model's {context}-token context"),
                ));
            }
            let bill = Bill { payer, price, route: "/agent", model: model.clone() };
            let call = PlainCall { prompt, model: model.clone(), path, chat: chat_id.map(|id| (owner, id)), history };
            let paid = crate::plain_agent::run(app, call, bill).await?;
            (paid, model)
        }
    };
    let (Paid { value: outcome, billing, settlement }, model) = paid;
    let free = free_remaining(app, address).await?;
    let mut response = Json(PlainReply::new(outcome, model, billing, free)).into_response();
    if let Some(s) = settlement {
        s.attach(&mut response);
    }
    Ok(response)
}

/// Encrypted `/agent`'s answer with the free messages left.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EncryptedWithFree {
    #[serde(flatten)]
    answer: private::encrypted_agent::EncryptedAgentAnswer,
    free_messages_remaining: u32,
}

async fn free_remaining(app: &App, address: IpAddr) -> Result<u32, RelayError> {
    Ok(metering::free_remaining(&app.store, &address, app.free_per_day, crate::unix_now()).await?)
}

/// `POST /agent`.
pub fn routes() -> axum::Router<App> {
    axum::Router::new().route("/agent", axum::routing::post(handle))
}
