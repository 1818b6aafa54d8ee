//! One-shot private swaps (Mode B, contract §2.8, §4.3): `POST /agents/v1/swaps/oneshot`
//! starts a session, `POST /agents/v1/swaps/oneshot/{id}/execute` hands over the funding.
//!
//! Start: a fresh router quote fixes the minimum output; the enclave makes the session key (a
//! sealed object) and signs the commitment; the relay builds the funding transaction and
//! stores the session before answering. Execute: the enclave checks on chain that this
//! transaction funded this session, the relay records it (one signature, one session) and
//! the workers take it from there.

use std::time::Duration;

use axum::Json;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use chain::Chain;
use serde::Serialize;
use shared::address::Address;
use shared::solana::token;
use shared::swap::{OneshotStart, SessionTerms, StepAnswer, StepRequest, funding};
use shared::wire::codes::{self, EnclaveCode};

use super::params::{self, Fields, FromFields};
use super::quote::{self, Pair};
use super::{buckets, enclave};
use crate::agents::Agents;
use crate::agents::sessions::{self, FundingRefused, Order, Session, state};
use crate::billing::metering::{Bill, paid};
use crate::http::body;
use crate::http::error::{ErrorBody, RelayError};
use crate::state::App;

pub const PATH: &str = "/agents/v1/swaps/oneshot";

/// How the x402 manifest lists it.
pub const PRICED: crate::x402::manifest::PricedRoute = crate::x402::manifest::PricedRoute {
    method: "POST",
    path: PATH,
    description: "Start one one-shot private swap session (Mode B): an enclave-held key, a signed commitment, the funding transaction",
    input: &[
        ("payerPubkey", "string: the wallet that signs the funding"),
        ("fromMint", "string: input mint"),
        ("toMint", "string: output mint"),
        ("amount", "string: base units of the input"),
        ("destinationPubkey", "string: a fresh wallet that receives the output"),
        ("slippageBps", "integer, optional"),
    ],
};
/// The `mode` of a one-shot session.
pub const MODE: &str = "oneshot";

/// `{sessionId, status, estimatedSeconds}` (contract §4.3).
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Running {
    pub session_id: String,
    pub status: &'static str,
    pub estimated_seconds: u64,
}

/// The start request (contract §4.3).
#[derive(utoipa::ToSchema)]
#[schema(rename_all = "camelCase", example = json!({
    "payerPubkey": "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin", "fromMint": "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
    "toMint": "So11111111111111111111111111111111111111112", "amount": "10000000",
    "destinationPubkey": "J1uu1RsZxECfBaj7v8CFpdzHUrXSsGJbxkrd2aq9fAaQ", "slippageBps": 50}))]
pub struct OneshotBody {
    /// The wallet that signs the funding (base58).
    #[schema(value_type = String)]
    pub payer_pubkey: Address,
    #[schema(value_type = String)]
    pub from_mint: Address,
    #[schema(value_type = String)]
    pub to_mint: Address,
    /// Base units of the input.
    #[schema(value_type = String, pattern = "^[1-9][0-9]{0,19}$")]
    pub amount: u64,
    /// A fresh wallet for the output; not the payer.
    #[schema(value_type = String)]
    pub destination_pubkey: Address,
    #[schema(maximum = 10000)]
    pub slippage_bps: Option<u16>,
}

impl FromFields for OneshotBody {
    const SHAPE: &'static str = "{payerPubkey, fromMint, toMint, amount, destinationPubkey, slippageBps}";
    const REQUIRED: &'static [&'static str] = &["payerPubkey", "fromMint", "toMint", "amount", "destinationPubkey"];

    fn from_fields(f: &Fields) -> Result<Self, RelayError> {
        Ok(OneshotBody {
            from_mint: f.mint("fromMint")?,
            to_mint: f.mint("toMint")?,
            amount: f.amount("amount")?,
            slippage_bps: f.bps("slippageBps")?,
            payer_pubkey: f.pubkey("payerPubkey")?,
            destination_pubkey: f.pubkey("destinationPubkey")?,
        })
    }
}

/// The execute request.
#[derive(utoipa::ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct ExecuteBody {
    /// The signature of the broadcast funding transaction (base58 of 64 bytes).
    pub funding_tx_sig: String,
}

impl FromFields for ExecuteBody {
    const SHAPE: &'static str = "{fundingTxSig}";
    const REQUIRED: &'static [&'static str] = &["fundingTxSig"];

    fn from_fields(f: &Fields) -> Result<Self, RelayError> {
        Ok(ExecuteBody { funding_tx_sig: f.signature("fundingTxSig")? })
    }
}

#[utoipa::path(post, path = "/agents/v1/swaps/oneshot", tag = "agents",
    summary = "Start a one-shot private swap (Mode B, contract §2.8): the enclave's session key and signed commitment, the funding transaction",
    description = "Moves real funds once the payer signs and sends the funding. Check `commitment` (signed by the attested enclave) and the funding transaction before signing.",
    security(("ApiKey" = []), ("X402" = [])), request_body = OneshotBody,
    responses((status = 200, body = shared::swap::OneshotStart),
              (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 402, body = ErrorBody),
              (status = 501, body = ErrorBody), (status = 502, body = ErrorBody), (status = "default", body = ErrorBody)))]
pub async fn start(State(app): State<App>, headers: HeaderMap, body: Body) -> Response {
    match start_session(&app, &headers, body).await {
        Ok(r) => r,
        Err(e) => e.into_response(),
    }
}

async fn start_session(app: &App, headers: &HeaderMap, body: Body) -> Result<Response, RelayError> {
    let asked: OneshotBody = Fields::parse(&body::read(body, body::MAX_SMALL_BODY).await?)?;
    let agents = crate::agents::agents(app)?;
    let pair = Pair::check(agents, asked.from_mint, asked.to_mint, asked.amount, asked.slippage_bps)?;
    let (payer, destination) = (asked.payer_pubkey, asked.destination_pubkey);
    if destination == payer {
        return Err(RelayError::input(
            codes::INVALID_FIELD,
            "`destinationPubkey` must not be the payer: use a fresh destination, or the swap links them",
        ));
    }
    let who = match quote::payer(app, headers, PATH, "Start one one-shot private swap session").await? {
        Ok(p) => p,
        Err(challenge) => return Ok(challenge),
    };
    let bill = Bill {
        price: quote::price(app, &who, agents.config.session_price_per_call),
        payer: who,
        route: PATH,
        model: String::new(),
    };
    let done = paid(app, bill, move |app| async move {
        let started = open(&app, &pair, payer, destination).await?;
        Ok((started, shared::wire::Usage::default()))
    })
    .await?;
    let mut response = Json(done.value).into_response();
    if let Some(settlement) = done.settlement {
        settlement.attach(&mut response);
    }
    Ok(response)
}

/// Quote, session key and commitment, funding transaction; stored before it is answered.
async fn open(
    app: &App,
    pair: &Pair,
    payer: shared::address::Address,
    destination: shared::address::Address,
) -> Result<OneshotStart, RelayError> {
    let agents = crate::agents::agents(app)?;
    let quoted = quote::router_quote(agents, pair).await?;
    let expected_out = quote::less_bps(quoted.out_amount, agents.config.spread_bps);
    let min_out = quote::less_bps(expected_out, pair.slippage_bps);
    if min_out == 0 {
        return Err(RelayError::input(codes::INVALID_AMOUNT, "`amount` is too small: it would buy nothing"));
    }
    let blockhash = agents.chain.latest_blockhash().await.map_err(RelayError::Chain)?;
    let now = crate::unix_now();
    let lifetime = agents.config.session_ttl_secs.min(agents.config.blockhash_lifetime_secs);
    let expires_at = now + lifetime as i64;
    let session_id = crate::ids::new_uuid();
    let terms = SessionTerms {
        session_id: session_id.clone(),
        payer: payer.to_string(),
        from_mint: pair.from_mint.to_string(),
        to_mint: pair.to_mint.to_string(),
        amount: pair.amount.to_string(),
        destination: destination.to_string(),
        min_out: min_out.to_string(),
        expires_at: expires_at as u64,
    };
    let opened = enclave::open_session(&app.enclaves, &terms).await?;
    let parsed = terms.parse().map_err(|_| RelayError::Internal("the session terms just built do not parse"))?;
    let ephemeral = shared::address::Address::parse(&opened.commitment.ephemeral_pubkey)
        .ok_or(RelayError::Internal("the enclave's session key is not base58"))?;
    let lamports = session_lamports(agents).await?;
    let decimals = agents
        .config
        .mint(&pair.from_mint)
        .map(|m| m.decimals)
        .ok_or(RelayError::Internal("a checked mint left the configuration"))?;
    let tx = funding::build(&parsed, &ephemeral, decimals, lamports, blockhash.blockhash);
    let from =
        agents.config.mint(&pair.from_mint).ok_or(RelayError::Internal("a checked mint left the configuration"))?;
    let bucketing = buckets::bucket(pair.amount, from);
    let order = Order::of_terms(&parsed, pair.slippage_bps, expected_out);
    let session = Session {
        expires_at,
        funding_valid_height: blockhash.last_valid_block_height as i64,
        object_id: opened.object.id.clone(),
        commitment_json: serde_json::to_string(&opened.commitment)
            .map_err(|_| RelayError::Internal("a value did not serialize"))?,
        bucketed: bucketing.as_ref().is_some_and(|b| b.bucketed),
        bucket_label: bucketing.as_ref().map(|b| b.label.clone()),
        ..Session::new(session_id.clone(), (MODE, state::AWAITING_FUNDING), order, ephemeral, now)
    };
    crate::enclaves::objects::insert(&app.store, &opened.object, now).await?;
    sessions::insert(app.store.pool(), &session).await?;
    tracing::info!(session = %session_id, "swap session opened");
    Ok(OneshotStart {
        session_id,
        ephemeral_pubkey: ephemeral.to_string(),
        funding_tx: shared::b64::encode(tx.serialize()),
        expected_seconds: agents.config.expected_seconds,
        bucketed: session.bucketed,
        expires_at: shared::time::rfc3339(expires_at as u64),
        bucket_label: session.bucket_label,
        expected_out: expected_out.to_string(),
        min_out: terms.min_out,
        funding_lamports: lamports.to_string(),
        commitment: opened.commitment,
    })
}

/// Lamports the session key needs: the rent of its output account and of the destination's
/// (if it has none yet), and its fees. What is left goes back to the payer.
pub async fn session_lamports(agents: &Agents) -> Result<u64, RelayError> {
    let rent = agents.chain.minimum_balance_for_rent_exemption(token::ACCOUNT_LEN).await.map_err(RelayError::Chain)?;
    Ok(2 * rent + agents.config.session_fee_lamports)
}

/// How long execute waits for the funding to show on the enclave's RPC (the client sends
/// execute once its own node confirmed it; another node may lag a little).
const FUNDING_VISIBLE_WAIT: Duration = Duration::from_secs(10);

#[utoipa::path(post, path = "/agents/v1/swaps/oneshot/{id}/execute", tag = "agents",
    summary = "Execute a funded session: the enclave checks the funding on chain, then the swap runs in the background",
    params(("id" = String, Path, description = "The session id (uuid)")), request_body = ExecuteBody,
    responses((status = 200, body = Running),
              (status = 400, description = "`missing_required_fields`, `invalid_field`, the `funding_*` verdicts", body = ErrorBody),
              (status = 404, description = "`not_found`, `funding_not_found`", body = ErrorBody),
              (status = 409, description = "`funding_already_used`, `invalid_state`", body = ErrorBody),
              (status = "default", body = ErrorBody)))]
pub async fn execute(State(app): State<App>, Path(id): Path<String>, body: Body) -> Response {
    match execute_session(&app, &id, body).await {
        Ok(r) => Json(r).into_response(),
        Err(e) => e.into_response(),
    }
}

async fn execute_session(app: &App, id: &str, body: Body) -> Result<Running, RelayError> {
    let asked: ExecuteBody = Fields::parse(&body::read(body, body::MAX_SMALL_BODY).await?)?;
    let agents = crate::agents::agents(app)?;
    let id = params::session_id(id)?;
    let signature = asked.funding_tx_sig;
    let running =
        Running { session_id: id.clone(), status: "running", estimated_seconds: agents.config.expected_seconds };
    let session = sessions::get(&app.store, &id).await?.ok_or(RelayError::NotFound("no such session"))?;
    if session.funding_tx_sig.as_deref() == Some(signature.as_str()) {
        return Ok(running);
    }
    if !sessions::takes_funding(&session) {
        return Err(RelayError::conflict(
            codes::INVALID_STATE,
            format!("the session is {}; it takes no funding now", session.state),
        ));
    }
    if sessions::funded_by(&app.store, &signature).await?.is_some() {
        return Err(funding_used());
    }
    let object = crate::enclaves::objects::load_named(&app.store, &session.object_id).await?;
    let check = StepRequest::CheckFunding { blob: object.blob, funding_tx_sig: signature.clone() };
    let deadline = tokio::time::Instant::now() + FUNDING_VISIBLE_WAIT;
    let answer = loop {
        match enclave::step(&app.enclaves, &check).await {
            Err(RelayError::Enclave { code: Some(EnclaveCode::FundingNotFound), .. })
                if tokio::time::Instant::now() < deadline =>
            {
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
            other => break other?,
        }
    };
    let (next, reason) = match answer {
        StepAnswer::Funded { expired: true, .. } => (state::REFUNDING, Some(sessions::EXPIRED)),
        StepAnswer::Funded { expired: false, .. } => (state::FUNDED, None),
        _ => return Err(RelayError::EnclaveAnswer("the enclave's funding check is not a funding")),
    };
    match sessions::record_funding(&app.store, &id, &signature, next, reason, crate::unix_now()).await? {
        Ok(_) => {
            tracing::info!(session = %id, next, "swap session funded");
            crate::failpoint::hit("swap:funding:recorded");
            crate::agents::wake(app);
            Ok(running)
        }
        Err(FundingRefused::AlreadyUsed) => Err(funding_used()),
        Err(FundingRefused::NotFound) => Err(RelayError::NotFound("no such session")),
        Err(FundingRefused::WrongState(s)) => {
            Err(RelayError::conflict(codes::INVALID_STATE, format!("the session is {s}; it takes no funding now")))
        }
    }
}

fn funding_used() -> RelayError {
    RelayError::conflict(codes::FUNDING_ALREADY_USED, "that transaction already funded another session")
}
