//! `GET /swap/v1/quote?inputMint&outputMint&amount&slippageBps&swapMode`: an exact-input quote
//! priced against the pool's balances as the chain reports them now.
//!
//! Routing preferences (`dexes`, `onlyDirectRoutes`, `maxAccounts`, ...) are accepted and
//! ignored: there is one pool and one route. `ExactOut` and platform fees are refused with
//! `NOT_SUPPORTED` rather than answered wrongly.

use std::time::Instant;

use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use shared::address::Address;

use super::{App, DEFAULT_SLIPPAGE_BPS, Gated, NOT_SUPPORTED, Refusal, amm};

/// What a quote asks, parsed.
pub(super) struct QuoteRequest {
    pub input: Address,
    pub output: Address,
    pub amount: u64,
    pub slippage_bps: u16,
}

pub(super) fn param<'a>(query: &'a [(String, String)], name: &str) -> Option<&'a str> {
    query.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
}

fn cannot_parse(name: &str) -> Refusal {
    Refusal::bad_request(format!("Query parameter {name} cannot be parsed"))
}

impl QuoteRequest {
    pub(super) fn parse(query: &[(String, String)]) -> Result<Self, Refusal> {
        let mint = |name: &str| -> Result<Address, Refusal> {
            let text = param(query, name)
                .ok_or_else(|| Refusal::bad_request(format!("Query parameter {name} is required")))?;
            Address::parse(text).ok_or_else(|| cannot_parse(name))
        };
        let (input, output) = (mint("inputMint")?, mint("outputMint")?);
        let amount =
            param(query, "amount").ok_or_else(|| Refusal::bad_request("Query parameter amount is required"))?;
        let amount = amount.parse::<u64>().ok().filter(|a| *a > 0).ok_or_else(|| cannot_parse("amount"))?;
        let slippage_bps = match param(query, "slippageBps") {
            None => DEFAULT_SLIPPAGE_BPS,
            Some(s) => s.parse::<u16>().ok().filter(|s| *s <= amm::BPS).ok_or_else(|| cannot_parse("slippageBps"))?,
        };
        match param(query, "swapMode") {
            None | Some("ExactIn") => {}
            Some("ExactOut") => {
                return Err(Refusal::route(NOT_SUPPORTED, "swapMode ExactOut is not supported by this router"));
            }
            Some(_) => return Err(cannot_parse("swapMode")),
        }
        if param(query, "platformFeeBps").is_some_and(|fee| fee != "0") {
            return Err(Refusal::route(NOT_SUPPORTED, "Platform fees are not supported by this router"));
        }
        Ok(QuoteRequest { input, output, amount, slippage_bps })
    }
}

pub(super) async fn quote(
    State(app): State<App>,
    _: Gated,
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Response {
    let answer = match query {
        Ok(Query(query)) => answer(&app, &query, Instant::now()).await,
        Err(rejection) => Err(Refusal::bad_request(rejection.body_text())),
    };
    match answer {
        Ok(body) => Json(body).into_response(),
        Err(refusal) => refusal.into_response(),
    }
}

async fn answer(app: &App, query: &[(String, String)], started: Instant) -> Result<Value, Refusal> {
    let request = QuoteRequest::parse(query)?;
    app.check_pair(&request.input, &request.output)?;
    // The slot first: the balances read after it are at least that recent.
    let slot = app.rpc.slot().await.map_err(Refusal::chain)?;
    let (reserve_in, reserve_out) = app.reserves(&request.input, &request.output).await?;
    let fill = amm::fill(reserve_in, reserve_out, request.amount, app.pool.fee_bps).map_err(Refusal::no_fill)?;
    let (input, output) = (request.input.to_string(), request.output.to_string());
    Ok(json!({
        "inputMint": input,
        "inAmount": fill.in_amount.to_string(),
        "outputMint": output,
        "outAmount": fill.out_amount.to_string(),
        "otherAmountThreshold": amm::threshold(fill.out_amount, request.slippage_bps).to_string(),
        "swapMode": "ExactIn",
        "slippageBps": request.slippage_bps,
        "platformFee": null,
        "priceImpactPct": amm::decimal(fill.price_impact),
        "routePlan": [{
            "swapInfo": {
                "ammKey": app.pool.owner().to_string(),
                "label": app.pool.label,
                "inputMint": input,
                "outputMint": output,
                "inAmount": fill.in_amount.to_string(),
                "outAmount": fill.out_amount.to_string(),
                "feeAmount": fill.fee.to_string(),
                "feeMint": input,
            },
            "percent": 100,
            "bps": 10_000,
        }],
        "contextSlot": slot,
        "timeTaken": started.elapsed().as_secs_f64(),
    }))
}
