//! `GET /swap/v2/build?inputMint&outputMint&amount&slippageBps&taker` (Jupiter's Swap API v2):
//! the quote and the instructions that carry it out, in Jupiter's shape, for a pool held by
//! Jupiter's program authority ([`PoolConfig::route_id`]). The swap instruction is a
//! `shared_accounts_route_v2` of the route program at Jupiter's id (on the local chain, the
//! hand-built stand-in `e2e::route_program`), with its twelve named accounts and a one-step
//! route plan; the setup creates the taker's output account. The lookup tables the test set
//! ([`super::Router::lookup_tables`]) are reported in `addressesByLookupTableAddress`.
//!
//! [`Tamper::ExtraTransferOutOfUser`] adds a transfer of the input out of the taker's account
//! to the pool; [`Tamper::OutputElsewhere`] names another wallet's account as the route's
//! destination; [`Tamper::QuoteAbovePool`] quotes more than the pool holds.

use std::collections::BTreeMap;

use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::response::{IntoResponse, Response};
use chain::Chain;
use serde_json::{Value, json};
use shared::address::Address;
use shared::solana::jupiter::{self, SharedRouteV2};
use shared::solana::programs::{JUPITER_PROGRAM, TOKEN_PROGRAM};
use shared::solana::{AccountMeta, Instruction, associated_token, compute_budget, token};

use super::quote::{QuoteRequest, param};
use super::{App, COMPUTE_UNIT_LIMIT, Gated, NOT_SUPPORTED, Refusal, Tamper, amm, elsewhere};

/// The route plan: one step, a Whirlpool swap (`Swap` tag 17, `a_to_b` true) of all the input
/// (10 000 bps) from index 0 to 1, as the mainnet v2 vector's second step is encoded.
const ROUTE_PLAN: [u8; 10] = [1, 0, 0, 0, 17, 1, 0x10, 0x27, 0, 1];

pub(super) async fn build(
    State(app): State<App>,
    _: Gated,
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Response {
    let answer = match query {
        Ok(Query(query)) => answer(&app, &query).await,
        Err(rejection) => Err(Refusal::bad_request(rejection.body_text())),
    };
    match answer {
        Ok(body) => Json(body).into_response(),
        Err(refusal) => refusal.into_response(),
    }
}

fn meta(v: &Instruction) -> Value {
    json!({
        "programId": v.program_id.to_string(),
        "accounts": v.accounts.iter().map(|m| json!({
            "pubkey": m.pubkey.to_string(), "isSigner": m.is_signer, "isWritable": m.is_writable,
        })).collect::<Vec<_>>(),
        "data": shared::b64::encode(&v.data),
    })
}

async fn answer(app: &App, query: &[(String, String)]) -> Result<Value, Refusal> {
    let request = QuoteRequest::parse(query)?;
    let taker = param(query, "taker").ok_or_else(|| Refusal::bad_request("Query parameter taker is required"))?;
    let taker = Address::parse(taker).ok_or_else(|| Refusal::bad_request("Query parameter taker cannot be parsed"))?;
    let Some(id) = app.pool.route_id else {
        return Err(Refusal::route(NOT_SUPPORTED, "/build needs a pool held by the route program"));
    };
    app.check_pair(&request.input, &request.output)?;
    let (reserve_in, reserve_out) = app.reserves(&request.input, &request.output).await?;
    let mut fill = amm::fill(reserve_in, reserve_out, request.amount, app.pool.fee_bps).map_err(Refusal::no_fill)?;
    if app.tampering() == Some(Tamper::QuoteAbovePool) {
        fill.out_amount = reserve_out.saturating_mul(2);
    }
    let (input, output) = (request.input, request.output);
    let account = |owner: &Address, mint: &Address| associated_token::address(owner, mint, &TOKEN_PROGRAM);
    let authority = app.pool.owner();
    let receiver = if app.tampering() == Some(Tamper::OutputElsewhere) { elsewhere() } else { taker };
    let args = SharedRouteV2 {
        id,
        in_amount: fill.in_amount,
        quoted_out_amount: fill.out_amount,
        slippage_bps: request.slippage_bps,
        platform_fee_bps: 0,
        positive_slippage_bps: 0,
    };
    let route = Instruction {
        program_id: JUPITER_PROGRAM,
        accounts: vec![
            AccountMeta::readonly(authority, false),
            AccountMeta::readonly(taker, true),
            AccountMeta::writable(account(&taker, &input), false),
            AccountMeta::writable(account(&authority, &input), false),
            AccountMeta::writable(account(&authority, &output), false),
            AccountMeta::writable(account(&receiver, &output), false),
            AccountMeta::readonly(input, false),
            AccountMeta::readonly(output, false),
            AccountMeta::readonly(TOKEN_PROGRAM, false),
            AccountMeta::readonly(TOKEN_PROGRAM, false),
            AccountMeta::readonly(jupiter::EVENT_AUTHORITY, false),
            AccountMeta::readonly(JUPITER_PROGRAM, false),
        ],
        data: args.encode(&ROUTE_PLAN),
    };
    let mut setup = vec![associated_token::create_idempotent(&taker, &receiver, &output, &TOKEN_PROGRAM)];
    if app.tampering() == Some(Tamper::ExtraTransferOutOfUser) {
        setup.push(token::transfer(&account(&taker, &input), &account(&authority, &input), &taker, fill.in_amount));
    }
    let tables: BTreeMap<String, Vec<String>> = app
        .tables
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .map(|(table, addresses)| (table.to_string(), addresses.iter().map(Address::to_string).collect()))
        .collect();
    let latest = app.rpc.latest_blockhash().await.map_err(Refusal::chain)?;
    Ok(json!({
        "inputMint": input.to_string(),
        "outputMint": output.to_string(),
        "inAmount": fill.in_amount.to_string(),
        "outAmount": fill.out_amount.to_string(),
        "otherAmountThreshold": amm::threshold(fill.out_amount, request.slippage_bps).to_string(),
        "swapMode": "ExactIn",
        "slippageBps": request.slippage_bps,
        "routePlan": [{
            "swapInfo": {
                "ammKey": authority.to_string(),
                "label": app.pool.label,
                "inputMint": input.to_string(),
                "outputMint": output.to_string(),
                "inAmount": fill.in_amount.to_string(),
                "outAmount": fill.out_amount.to_string(),
            },
            "percent": 100,
            "bps": 10_000,
        }],
        "computeBudgetInstructions": [meta(&compute_budget::set_compute_unit_limit(COMPUTE_UNIT_LIMIT))],
        "setupInstructions": setup.iter().map(meta).collect::<Vec<_>>(),
        "swapInstruction": meta(&route),
        "cleanupInstruction": null,
        "otherInstructions": [],
        "addressesByLookupTableAddress": tables,
        "blockhashWithMetadata": {
            "blockhash": latest.blockhash.to_vec(),
            "lastValidBlockHeight": latest.last_valid_block_height,
        },
    }))
}
