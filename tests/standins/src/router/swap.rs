//! `POST /swap/v1/swap` with `{userPublicKey, quoteResponse, ...}`: a legacy transaction paid
//! by the user that carries out the quote against the pool, co-signed by the pool.
//!
//! The quote's input is priced again against the pool as it is now. If that still meets the
//! quote's `otherAmountThreshold`, the pool pays what it would give now (the quote's
//! `outAmount` when nothing moved), as an AMM does; otherwise the answer carries Jupiter's
//! slippage failure (`simulationError`, custom program error 6001 `SlippageToleranceExceeded`)
//! and the transaction is not signed by the pool, so it cannot land either.
//!
//! Instructions, in order: SetComputeUnitLimit; the user's output account, created idempotently
//! and paid by the user; `TransferChecked` of `inAmount` from the user's account to the pool's;
//! `TransferChecked` of the output from the pool's account to the user's, authority the pool.
//! Accepted and not acted on: `wrapAndUnwrapSol` (no SOL wrapping: a wrapped-SOL pool needs
//! the user to hold wrapped SOL), `prioritizationFeeLamports` (no price is set, the answer says
//! 0), `dynamicComputeUnitLimit`, `asLegacyTransaction` (always legacy). Refused with
//! `NOT_SUPPORTED`: a `payer` other than the user, `destinationTokenAccount`, `feeAccount`.

use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, Uri};
use axum::response::{IntoResponse, Response};
use chain::Chain;
use serde::Deserialize;
use serde_json::{Value, json};
use shared::address::Address;
use shared::solana::programs::TOKEN_PROGRAM;
use shared::solana::{Instruction, Message, Transaction, associated_token, compute_budget, token};

use super::{App, COMPUTE_UNIT_LIMIT, MARKET_NOT_FOUND, NOT_SUPPORTED, Refusal, Seen, Tamper, amm, elsewhere};

/// The Jupiter program's `SlippageToleranceExceeded`.
const SLIPPAGE_TOLERANCE_EXCEEDED: u32 = 6001;
/// Where a mint's decimals sit (after the optional authority and the supply).
const MINT_DECIMALS: usize = 44;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SwapRequest {
    user_public_key: String,
    quote_response: QuoteResponse,
    payer: Option<String>,
    destination_token_account: Option<String>,
    fee_account: Option<String>,
}

/// The fields of `/quote`'s answer that `/swap` acts on; the rest is passed back and ignored.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct QuoteResponse {
    input_mint: String,
    in_amount: String,
    output_mint: String,
    out_amount: String,
    other_amount_threshold: String,
    swap_mode: String,
    route_plan: Vec<RouteStep>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RouteStep {
    swap_info: SwapInfo,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SwapInfo {
    amm_key: String,
}

/// A checked request: who swaps what, and the least output the quote allows.
struct Swap {
    user: Address,
    input: Address,
    output: Address,
    in_amount: u64,
    threshold: u64,
}

fn address(field: &str, text: &str) -> Result<Address, Refusal> {
    Address::parse(text).ok_or_else(|| Refusal::unprocessable(format!("{field}: not a base58 public key")))
}

fn amount(field: &str, text: &str) -> Result<u64, Refusal> {
    text.parse().map_err(|_| Refusal::unprocessable(format!("{field}: not an unsigned 64-bit integer")))
}

fn not_supported(what: &str) -> Refusal {
    Refusal::route(NOT_SUPPORTED, format!("{what} is not supported by this router"))
}

impl Swap {
    fn check(app: &App, request: &SwapRequest) -> Result<Self, Refusal> {
        if app.pool.route_id.is_some() {
            return Err(not_supported("/swap for a pool held by the route program (use /swap/v2/build)"));
        }
        let user = address("userPublicKey", &request.user_public_key)?;
        if request.payer.as_deref().is_some_and(|payer| payer != request.user_public_key) {
            return Err(not_supported("A payer other than userPublicKey"));
        }
        if request.destination_token_account.is_some() {
            return Err(not_supported("destinationTokenAccount"));
        }
        if request.fee_account.is_some() {
            return Err(not_supported("feeAccount"));
        }
        let quote = &request.quote_response;
        let input = address("quoteResponse.inputMint", &quote.input_mint)?;
        let output = address("quoteResponse.outputMint", &quote.output_mint)?;
        let in_amount = amount("quoteResponse.inAmount", &quote.in_amount)?;
        amount("quoteResponse.outAmount", &quote.out_amount)?;
        let threshold = amount("quoteResponse.otherAmountThreshold", &quote.other_amount_threshold)?;
        if quote.swap_mode != "ExactIn" {
            return Err(not_supported(&format!("swapMode {}", quote.swap_mode)));
        }
        app.check_pair(&input, &output)?;
        let ours = app.pool.owner().to_string();
        match quote.route_plan.as_slice() {
            [step] if step.swap_info.amm_key == ours => {}
            [step] => {
                return Err(Refusal::route(MARKET_NOT_FOUND, format!("Market {} not found", step.swap_info.amm_key)));
            }
            _ => return Err(Refusal::route(MARKET_NOT_FOUND, "The route plan does not have exactly one market")),
        }
        Ok(Swap { user, input, output, in_amount, threshold })
    }
}

pub(super) async fn swap(
    State(app): State<App>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if let Some(response) = app.gate(Seen::new(&method, &uri, &headers, &body)) {
        return response;
    }
    match answer(&app, &body).await {
        Ok(body) => Json(body).into_response(),
        Err(refusal) => refusal.into_response(),
    }
}

async fn answer(app: &App, body: &[u8]) -> Result<Value, Refusal> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| Refusal::bad_request(format!("Failed to parse the request body as JSON: {e}")))?;
    let request: SwapRequest = serde_json::from_value(value).map_err(Refusal::unprocessable)?;
    let swap = Swap::check(app, &request)?;

    let (reserve_in, reserve_out) = app.reserves(&swap.input, &swap.output).await?;
    let now = amm::fill(reserve_in, reserve_out, swap.in_amount, app.pool.fee_bps)
        .ok()
        .map(|fill| fill.out_amount)
        .filter(|out| *out >= swap.threshold);
    let plan = Plan {
        user: swap.user,
        authority: app.pool.authority_address(),
        input: swap.input,
        output: swap.output,
        decimals_in: decimals(app, &swap.input).await?,
        decimals_out: decimals(app, &swap.output).await?,
        in_amount: swap.in_amount,
        // Unsigned by the pool when the price slipped, so the amount cannot matter; the
        // quote's minimum is what Jupiter's transaction would have demanded.
        out_amount: now.unwrap_or(swap.threshold),
        threshold: swap.threshold,
    };
    let (payer, instructions, output_index) = plan.instructions(app.tampering());
    let latest = app.rpc.latest_blockhash().await.map_err(Refusal::chain)?;
    let message = Message::compile(&payer, &instructions, latest.blockhash).map_err(Refusal::internal)?;
    let mut transaction = Transaction::new_unsigned(message);
    let simulation_error = if now.is_some() {
        transaction.sign(&[&app.pool.authority]).map_err(Refusal::internal)?;
        Value::Null
    } else {
        json!({
            "errorCode": "TRANSACTION_ERROR",
            "error": format!(
                "Error processing Instruction {output_index}: custom program error: {SLIPPAGE_TOLERANCE_EXCEEDED:#x}"
            ),
        })
    };
    Ok(json!({
        "swapTransaction": shared::b64::encode(transaction.serialize()),
        "lastValidBlockHeight": latest.last_valid_block_height,
        "prioritizationFeeLamports": 0,
        "computeUnitLimit": COMPUTE_UNIT_LIMIT,
        "simulationError": simulation_error,
    }))
}

/// The decimals of an SPL Token mint, read from the chain (`TransferChecked` names them).
async fn decimals(app: &App, mint: &Address) -> Result<u8, Refusal> {
    let account = app.rpc.account(mint).await.map_err(Refusal::chain)?;
    account
        .filter(|a| a.owner == TOKEN_PROGRAM && a.data.len() == token::MINT_LEN)
        .and_then(|a| a.data.get(MINT_DECIMALS).copied())
        .ok_or_else(|| Refusal::internal(format!("{mint} is not an SPL Token mint on this chain")))
}

/// Everything a swap transaction names.
struct Plan {
    user: Address,
    authority: Address,
    input: Address,
    output: Address,
    decimals_in: u8,
    decimals_out: u8,
    in_amount: u64,
    out_amount: u64,
    threshold: u64,
}

impl Plan {
    /// The fee payer, the instructions, and the index of the pool's output transfer (the one a
    /// slippage failure names), honest or as `tamper` breaks them.
    fn instructions(&self, tamper: Option<Tamper>) -> (Address, Vec<Instruction>, usize) {
        let payer = if tamper == Some(Tamper::WrongFeePayer) { self.authority } else { self.user };
        let receiver = if tamper == Some(Tamper::OutputElsewhere) { elsewhere() } else { self.user };
        let out_amount =
            if tamper == Some(Tamper::OutputBelowQuote) { self.threshold.saturating_sub(1) } else { self.out_amount };
        let account = |owner: &Address, mint: &Address| associated_token::address(owner, mint, &TOKEN_PROGRAM);
        let (user_in, pool_in) = (account(&self.user, &self.input), account(&self.authority, &self.input));
        let (pool_out, receiver_out) = (account(&self.authority, &self.output), account(&receiver, &self.output));
        let pay_in =
            token::transfer_checked(&user_in, &self.input, &pool_in, &self.user, self.in_amount, self.decimals_in);
        let mut instructions = vec![
            compute_budget::set_compute_unit_limit(COMPUTE_UNIT_LIMIT),
            associated_token::create_idempotent(&self.user, &receiver, &self.output, &TOKEN_PROGRAM),
            pay_in.clone(),
        ];
        if tamper == Some(Tamper::ExtraTransferOutOfUser) {
            instructions.push(pay_in);
        }
        let output_index = instructions.len();
        instructions.push(token::transfer_checked(
            &pool_out,
            &self.output,
            &receiver_out,
            &self.authority,
            out_amount,
            self.decimals_out,
        ));
        (payer, instructions, output_index)
    }
}
