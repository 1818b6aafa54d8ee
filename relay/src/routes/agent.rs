//! `POST /agent` (contract §2.2, §2.3): parse, find the payer, charge, run the plaintext
//! path here or forward the envelope to the enclave, give the charge back on failure.

use std::net::{IpAddr, SocketAddr};

use axum::Json;
use axum::body::Body;
use axum::extract::{ConnectInfo, State};
use axum::http::{HeaderMap, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use shared::catalog::PROVIDER;
use shared::envelope::Envelope;
use shared::wire::{EncryptedAgentResponse, OnchainAttestation, ProcessRequest, codes};

use crate::agent_request::{self, AgentRequest, InputError, Path};
use crate::app::App;
use crate::error::ApiError;
use crate::metering::{self, Charge, ChargeError, Payer};
use crate::plain_agent::PlainOutcome;
use crate::routes::tee::MAX_PROCESS_BODY;

pub async fn agent(
    State(app): State<App>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let address = crate::peer::client_address(peer, &headers, &app.trusted_proxies);
    match handle(&app, address, &headers, body).await {
        Ok(response) => response,
        Err(e) => {
            // Every /agent answer says how many free messages are left (a failed call used none).
            let free = metering::free_remaining(&app.store, &address, app.free_per_day, crate::unix_now()).await;
            let e = e.with_success();
            match free {
                Ok(n) => e.with_field("freeMessagesRemaining", json!(n)).into_response(),
                Err(_) => e.into_response(),
            }
        }
    }
}

fn input_error(e: InputError) -> ApiError {
    ApiError::new(400, e.code, e.message)
}

async fn handle(app: &App, address: IpAddr, headers: &HeaderMap, body: Body) -> Result<Response, ApiError> {
    let bytes = axum::body::to_bytes(body, MAX_PROCESS_BODY).await.map_err(|_| {
        ApiError::new(413, codes::PAYLOAD_TOO_LARGE, format!("request body exceeds {MAX_PROCESS_BODY} bytes"))
    })?;
    let request = agent_request::parse(&bytes).map_err(input_error)?;
    // A caller that sends a key must send a good one; no key means a guest.
    let payer = match headers.contains_key(header::AUTHORIZATION) {
        true => Payer::Key(app.keys.check(headers, "chat").await?),
        false => Payer::Guest(address),
    };
    let owner = match &payer {
        Payer::Key(caller) => caller.key_id.clone(),
        Payer::Guest(ip) => format!("addr:{ip}"),
    };

    // Everything that can be refused without running the model is refused before charging.
    let history = match &request {
        AgentRequest::Plain { prompt, model, chat_id, .. } => {
            if !app.plain.serves(model) {
                return Err(ApiError::new(
                    501,
                    codes::GPU_NOT_CONFIGURED,
                    format!(
                        "model `{}` has no configured GPU-node endpoint",
                        model.chars().take(64).collect::<String>()
                    ),
                ));
            }
            let history = match chat_id {
                Some(id) => crate::chats::history(&app.store, &owner, id, app.max_history_turns).await?,
                None => Vec::new(),
            };
            let context = shared::catalog::context_length(model).unwrap_or(u32::MAX);
            if app.plain.estimated_tokens(model, prompt, &history) > u64::from(context) {
                return Err(ApiError::new(
                    400,
                    agent_request::codes::CONTEXT_LENGTH_EXCEEDED,
                    format!("the prompt and chat history do not fit the model's {context}-token context"),
                ));
            }
            history
        }
        AgentRequest::Encrypted { encrypted_prompt, .. } => {
            Envelope::parse(encrypted_prompt)
                .map_err(|e| ApiError::new(400, codes::INVALID_ENVELOPE, e.to_string()))?;
            Vec::new()
        }
    };

    let now = crate::unix_now();
    // A guest may pay with x402 instead of spending a free message (contract §4.1).
    let resource = format!("{}/agent", app.public_url);
    let payment = match payer {
        Payer::Guest(_) => match app.x402.verify(headers, &resource, &app.store).await {
            Ok(payment) => payment,
            Err(e) => return Ok(e.into_response()),
        },
        Payer::Key(_) => None,
    };
    let usage = crate::billing::NewUsage { route: "/agent", model: request.model() };
    let charged = match &payment {
        Some(p) => Ok(Charge::X402 { amount: p.amount() }),
        None => metering::charge(&app.store, &payer, app.agent_price, app.free_per_day, usage, now).await,
    };
    let mut charge = match charged {
        Ok(charge) => charge,
        Err(ChargeError::FreeTrialExhausted) => {
            let body = json!({
                "success": false,
                "requiresDeposit": true,
                "reason": "free_trial_exhausted",
                "error": "free_trial_exhausted",
                "message": "no free messages left today: pay per call with x402 (see /.well-known/x402), or sign in \
                            with a wallet and deposit",
                "freeMessagesRemaining": 0,
            });
            return Ok(Json(body).into_response());
        }
        Err(e) => return Err(e.into()),
    };
    let outcome = run(app, request, &history, &owner, address, &mut charge, now).await;
    match (outcome, payment) {
        (Ok(mut response), Some(payment)) => match app.x402.settle(&payment, &app.store).await {
            Ok(settlement) => {
                settlement.attach(&mut response);
                Ok(response)
            }
            // No settlement, no reply (the payment is marked failed and cannot be reused).
            Err(e) => Ok(e.into_response()),
        },
        (Ok(response), None) => Ok(response),
        (Err(e), payment) => {
            if let Some(payment) = payment {
                app.x402.release(&payment, &app.store).await;
            }
            metering::refund(&app.store, &charge, crate::unix_now()).await;
            Err(e)
        }
    }
}

/// Runs the chosen path for a request that passed every check and is paid for.
#[allow(clippy::too_many_arguments)]
async fn run(
    app: &App,
    request: AgentRequest,
    history: &[crate::chats::Turn],
    owner: &str,
    address: IpAddr,
    charge: &mut Charge,
    now: i64,
) -> Result<Response, ApiError> {
    match request {
        AgentRequest::Plain { prompt, model, chat_id, path } => {
            let outcome = run_plain(app, &prompt, &model, history, &path).await?;
            if let Some(id) = chat_id {
                crate::chats::append(&app.store, owner, &id, &prompt, &outcome.reply, now).await?;
            }
            metering::complete(&app.store, charge, outcome.usage, None, crate::unix_now()).await?;
            let free = free_remaining(app, address, now).await?;
            Ok(Json(plain_body(outcome, &model, charge, free)).into_response())
        }
        AgentRequest::Encrypted { encrypted_prompt, model } => {
            let mut response = run_encrypted(app, encrypted_prompt, model).await?;
            // The relay never sees the encrypted call's tokens; the usage row keeps zeros.
            metering::complete(&app.store, charge, shared::wire::Usage::default(), None, crate::unix_now()).await?;
            let free = free_remaining(app, address, now).await?;
            if let Some(o) = response.as_object_mut() {
                o.insert("freeMessagesRemaining".into(), json!(free));
                o.insert("billing".into(), json!(charge.report()));
            }
            Ok(Json(response).into_response())
        }
    }
}

async fn run_plain(
    app: &App,
    prompt: &str,
    model: &str,
    history: &[crate::chats::Turn],
    path: &Path,
) -> Result<PlainOutcome, ApiError> {
    app.plain.run(model, prompt, history, path).await.map_err(|e| match e {
        agent::model::ModelError::ContextExceeded => {
            ApiError::new(400, agent_request::codes::CONTEXT_LENGTH_EXCEEDED, e.to_string())
        }
        agent::model::ModelError::Timeout => ApiError::new(504, codes::MODEL_ERROR, e.to_string()),
        _ => ApiError::new(502, codes::MODEL_ERROR, e.to_string()),
    })
}

fn plain_body(outcome: PlainOutcome, model: &str, charge: &Charge, free: u32) -> Value {
    let usage = json!({
        "promptTokens": outcome.usage.prompt_tokens,
        "completionTokens": outcome.usage.completion_tokens,
        "totalTokens": outcome.usage.total_tokens,
    });
    match outcome.braid {
        None => json!({
            "success": true,
            "reply": outcome.reply,
            "toolCalls": outcome.tool_calls,
            "usage": usage,
            "iterations": outcome.iterations,
            "model": model,
            "provider": PROVIDER,
            "billing": charge.report(),
            "freeMessagesRemaining": free,
        }),
        Some(braid) => {
            let cost = match charge {
                Charge::FreeMessage { .. } => "FREE".to_string(),
                Charge::Balance { amount, .. } => format!("{amount} {}", metering::CALL_CURRENCY),
                Charge::X402 { amount } => format!("{amount} {} (x402)", metering::CALL_CURRENCY),
            };
            let mut body = json!({
                "success": true,
                "reply": outcome.reply,
                "reasoning": "braid",
                "usage": usage,
                "iterations": outcome.iterations,
                "model": model,
                "provider": PROVIDER,
                "cost": cost,
                "billing": charge.report(),
                "freeMessagesRemaining": free,
            });
            if braid.include_trace {
                body["braidTrace"] = json!({
                    "grdId": braid.grd_id,
                    "intent": braid.intent,
                    "nodes": braid.nodes,
                    "totalDurationMs": braid.total_duration_ms,
                    "totalTokens": outcome.usage.total_tokens,
                });
            }
            body
        }
    }
}

/// Encrypted mode: forward unread, check and commit the receipt, never fall back to plaintext.
/// Every failure is HTTP 500 (contract §7), keeping the enclave's error code.
async fn run_encrypted(app: &App, encrypted_prompt: String, model: String) -> Result<Value, ApiError> {
    let as_500 = |e: ApiError| ApiError { status: 500, ..e };
    let prompt_hash = Envelope::parse(&encrypted_prompt)
        .map_err(|e| ApiError::new(500, codes::INVALID_ENVELOPE, e.to_string()))?
        .ciphertext_hash();
    let request = ProcessRequest { encrypted_prompt, model: Some(model), max_tokens: None };
    let body = crate::forward::post_to_enclave(app, "/agent", &request).await.map_err(as_500)?;
    let mut response: EncryptedAgentResponse = serde_json::from_slice(&body)
        .map_err(|_| ApiError::new(500, codes::ENCLAVE_ERROR, "the enclave answered with an unexpected body"))?;
    let signature = crate::forward::commit_receipt(app, &response.receipt, &prompt_hash).await.map_err(as_500)?;
    response.onchain_attestation = Some(OnchainAttestation {
        address: response.receipt.address.clone(),
        encrypted_prompt_hash: response.receipt.encrypted_prompt_hash.clone(),
        explorer_url: crate::forward::explorer_url(app, &signature),
        signature,
    });
    serde_json::to_value(&response).map_err(|_| ApiError::internal())
}

async fn free_remaining(app: &App, address: IpAddr, now: i64) -> Result<u32, ApiError> {
    Ok(metering::free_remaining(&app.store, &address, app.free_per_day, now).await?)
}
