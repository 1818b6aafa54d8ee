//! `GET /agents/v1/quote` (contract §2.7, §4.3): the router's price for an amount, less the
//! service's spread, with where the amount stands among the mint's denomination buckets. Paid
//! per call with an API key (scope `swap`) or x402.

use std::collections::HashMap;

use axum::Json;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, header};
use axum::response::{IntoResponse, Response};
use chain::Quote;
use serde::Serialize;
use shared::address::Address;
use shared::wire::codes;

use super::buckets::{self, Bucketing};
use super::params::Fields;
use crate::agents::{Agents, agents};
use crate::billing::metering::{Bill, Payer, Price, paid};
use crate::http::error::{ErrorBody, RelayError};
use crate::state::App;

pub const PATH: &str = "/agents/v1/quote";

/// How the x402 manifest lists it.
pub const PRICED: crate::x402::manifest::PricedRoute = crate::x402::manifest::PricedRoute {
    method: "GET",
    path: PATH,
    description: "One swap quote: router output less the service's spread, with denomination buckets",
    input: &[
        ("fromMint", "string (query): input mint, base58"),
        ("toMint", "string (query): output mint, base58"),
        ("amount", "string (query): base units of the input"),
        ("slippageBps", "integer (query), optional"),
    ],
};

/// Contract §2.7.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[schema(example = json!({
    "fromMint": "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", "toMint": "So11111111111111111111111111111111111111112",
    "amount": "10000000", "slippageBps": 50, "expectedOut": "49699954", "rawRouteOut": "49849503", "spreadBps": 30,
    "priceImpactPct": "0.00000997", "routePlanLength": 1, "bucketed": true, "bucketLabel": "10 USDC",
    "nearestBucket": "10000000", "privacyNotes": "10 USDC is a standard denomination: …"}))]
#[serde(rename_all = "camelCase")]
pub struct QuoteAnswer {
    pub from_mint: String,
    pub to_mint: String,
    pub amount: String,
    pub slippage_bps: u16,
    pub expected_out: String,
    pub raw_route_out: String,
    pub spread_bps: u16,
    pub price_impact_pct: String,
    pub route_plan_length: usize,
    pub bucketed: bool,
    pub bucket_label: String,
    pub nearest_bucket: String,
    pub privacy_notes: String,
}

/// A checked swap request: both mints swapped here, the amount within the input's bounds.
#[derive(Debug, Clone, Copy)]
pub struct Pair {
    pub from_mint: Address,
    pub to_mint: Address,
    pub amount: u64,
    pub slippage_bps: u16,
}

impl Pair {
    /// Reads `fromMint`, `toMint`, `amount` and `slippageBps` (the first three required, all
    /// missing ones named at once).
    pub fn read(fields: &Fields, agents: &Agents) -> Result<Self, RelayError> {
        let (from_mint, to_mint) = (fields.mint("fromMint")?, fields.mint("toMint")?);
        let amount = fields.amount("amount")?;
        let slippage_bps = fields.bps("slippageBps")?;
        Pair::check(agents, from_mint, to_mint, amount, slippage_bps)
    }

    /// Both mints swapped here and different, the amount within the input's bounds; the
    /// configured slippage unless one was asked for.
    pub fn check(
        agents: &Agents,
        from_mint: Address,
        to_mint: Address,
        amount: u64,
        slippage_bps: Option<u16>,
    ) -> Result<Self, RelayError> {
        let slippage_bps = slippage_bps.unwrap_or(agents.config.default_slippage_bps);
        let from = agents.mint("fromMint", &from_mint)?;
        agents.mint("toMint", &to_mint)?;
        if from_mint == to_mint {
            return Err(RelayError::input(codes::INVALID_MINT, "`fromMint` and `toMint` must differ"));
        }
        if amount < from.min_amount || amount > from.max_amount {
            return Err(RelayError::input(
                codes::AMOUNT_OUT_OF_BOUNDS,
                format!(
                    "`amount` must be from {} to {} base units of {}",
                    from.min_amount, from.max_amount, from.symbol
                ),
            ));
        }
        Ok(Pair { from_mint, to_mint, amount, slippage_bps })
    }
}

/// Who pays for a priced `/agents/v1` call: a key with the `swap` scope, else an x402
/// payment; with neither, the 402 challenge (or 401 when x402 is off).
pub async fn payer(
    app: &App,
    headers: &HeaderMap,
    path: &str,
    description: &str,
) -> Result<Result<Payer, Response>, RelayError> {
    if headers.contains_key(header::AUTHORIZATION) {
        return Ok(Ok(Payer::Key(app.keys.check::<crate::accounts::keys::Swap>(headers).await?)));
    }
    let resource = format!("{}{path}", app.public_url);
    match Payer::x402(headers, resource.clone()) {
        Some(payer) => Ok(Ok(payer)),
        None if app.x402.enabled() => Ok(Err(app.x402.challenge(&resource, description).await)),
        None => Err(RelayError::Unauthorized("send an API key (Authorization: Bearer sk_svc_…) or an x402 payment")),
    }
}

/// The per-call price for `payer`: the key price, or the x402 price.
pub fn price(app: &App, payer: &Payer, key_price: u64) -> Price {
    match payer {
        Payer::X402 { .. } => Price::PerCall(app.x402.price()),
        _ => Price::PerCall(key_price),
    }
}

#[utoipa::path(get, path = "/agents/v1/quote", tag = "agents",
    summary = "A private swap quote (contract §2.7): the router's output less the spread, with the amount's bucket",
    security(("ApiKey" = []), ("X402" = [])),
    params(("fromMint" = String, Query, description = "Input mint (base58); one the service swaps"),
           ("toMint" = String, Query, description = "Output mint (base58)"),
           ("amount" = String, Query, description = "Base units of the input", pattern = "^[1-9][0-9]{0,19}$"),
           ("slippageBps" = Option<u16>, Query, description = "0 to 10000 (default from configuration)", maximum = 10000)),
    responses((status = 200, body = QuoteAnswer),
              (status = 400, description = "`missing_required_fields` (named), `invalid_mint`, `invalid_amount`, `amount_out_of_bounds`, `invalid_field`", body = ErrorBody),
              (status = 401, body = ErrorBody), (status = 402, description = "x402 payment required, or the key's balance is short", body = ErrorBody),
              (status = 501, description = "`swaps_not_configured`", body = ErrorBody),
              (status = 502, description = "`router_error`, `router_unreachable`", body = ErrorBody),
              (status = "default", body = ErrorBody)))]
pub async fn handle(
    State(app): State<App>,
    headers: HeaderMap,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    match quote(&app, &headers, Fields::from_query(query)).await {
        Ok(r) => r,
        Err(e) => e.into_response(),
    }
}

async fn quote(app: &App, headers: &HeaderMap, fields: Fields) -> Result<Response, RelayError> {
    fields.require(&["fromMint", "toMint", "amount"])?;
    let agents = agents(app)?;
    let pair = Pair::read(&fields, agents)?;
    let payer = match payer(app, headers, PATH, "One swap quote through the service's router").await? {
        Ok(p) => p,
        Err(challenge) => return Ok(challenge),
    };
    let bill = Bill {
        price: price(app, &payer, agents.config.quote_price_per_call),
        payer,
        route: PATH,
        model: String::new(),
    };
    let done = paid(app, bill, move |app| async move {
        let agents = crate::agents::agents(&app)?;
        let quote = router_quote(agents, &pair).await?;
        Ok((answer(agents, &pair, &quote), shared::wire::Usage::default()))
    })
    .await?;
    let mut response = Json(done.value).into_response();
    if let Some(settlement) = done.settlement {
        settlement.attach(&mut response);
    }
    Ok(response)
}

/// The router's quote for the whole amount; it must quote exactly that amount.
pub async fn router_quote(agents: &Agents, pair: &Pair) -> Result<Quote, RelayError> {
    let quote = agents
        .router
        .quote(&pair.from_mint, &pair.to_mint, pair.amount, pair.slippage_bps)
        .await
        .map_err(RelayError::Router)?;
    if quote.in_amount != pair.amount || quote.out_amount == 0 {
        return Err(RelayError::Router(chain::RouterError::Malformed));
    }
    Ok(quote)
}

/// `out` less `bps` basis points, rounded down.
pub fn less_bps(out: u64, bps: u16) -> u64 {
    (u128::from(out) * u128::from(10_000 - bps.min(10_000)) / 10_000) as u64
}

fn answer(agents: &Agents, pair: &Pair, quote: &Quote) -> QuoteAnswer {
    let from = agents.config.mint(&pair.from_mint).expect("checked in Pair::read");
    let b = buckets::bucket(pair.amount, from).unwrap_or_else(|| Bucketing {
        bucketed: false,
        nearest: pair.amount,
        label: buckets::label(pair.amount, from),
    });
    QuoteAnswer {
        from_mint: pair.from_mint.to_string(),
        to_mint: pair.to_mint.to_string(),
        amount: pair.amount.to_string(),
        slippage_bps: pair.slippage_bps,
        expected_out: less_bps(quote.out_amount, agents.config.spread_bps).to_string(),
        raw_route_out: quote.out_amount.to_string(),
        spread_bps: agents.config.spread_bps,
        price_impact_pct: quote.price_impact_pct.clone(),
        route_plan_length: quote.route_plan_len,
        bucketed: b.bucketed,
        bucket_label: b.label.clone(),
        nearest_bucket: b.nearest.to_string(),
        privacy_notes: buckets::privacy_notes(&b, agents.config.anonymity_window_hours),
    }
}

#[cfg(test)]
mod tests {
    use super::less_bps;

    #[test]
    fn the_spread_rounds_down() {
        assert_eq!(less_bps(1_000_000, 30), 997_000);
        assert_eq!(less_bps(999, 30), 996);
        assert_eq!(less_bps(u64::MAX, 0), u64::MAX);
        assert_eq!(less_bps(5, 10_000), 0);
    }
}
