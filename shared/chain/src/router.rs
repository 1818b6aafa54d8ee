//! A swap router speaking Jupiter's wire (notes/swaps.md §3, notes/jupiter.md §2): `GET
//! /swap/v1/quote` and `POST /swap/v1/swap` (the quote kept verbatim in `raw` and handed back
//! to `/swap` unchanged, as the API asks), and the Swap API v2's `GET /swap/v2/build`, whose
//! instructions the caller compiles and checks itself.

use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};
use shared::address::Address;
use shared::amount::Amount;
use shared::solana::{AccountMeta, Instruction};

/// Largest router answer read.
const MAX_ANSWER: usize = 1 << 20;

#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum RouterError {
    #[error("the router did not answer")]
    Unreachable,
    /// The router refused: its HTTP status and its `errorCode` (or `error`), never its body.
    #[error("the router refused (HTTP {status}): {code}")]
    Refused { status: u16, code: String },
    #[error("the router answered with an unexpected body")]
    Malformed,
}

/// A quote: the router's answer verbatim, and what the service reads of it.
#[derive(Debug, Clone, PartialEq)]
pub struct Quote {
    pub raw: Value,
    pub in_amount: u64,
    pub out_amount: u64,
    /// `outAmount` less the slippage the quote was asked with.
    pub other_amount_threshold: u64,
    pub price_impact_pct: String,
    pub route_plan_len: usize,
}

/// An unsigned (or partly signed) swap transaction for `userPublicKey` to sign.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SwapTransaction {
    pub transaction: Vec<u8>,
    pub last_valid_block_height: u64,
}

/// `/swap/v2/build`'s answer: the instructions in transaction order (compute budget, setup,
/// the swap, cleanup, others) and the lookup tables' addresses as the router reports them
/// (unauthenticated: a compiler may only use them for accounts it does not check).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Build {
    pub instructions: Vec<Instruction>,
    pub lookup_tables: Vec<(Address, Vec<Address>)>,
    pub out_amount: u64,
}

#[derive(Clone)]
pub struct Router {
    http: reqwest::Client,
    base: String,
    api_key: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireQuote {
    in_amount: Amount,
    out_amount: Amount,
    other_amount_threshold: Amount,
    price_impact_pct: String,
    route_plan: Vec<Value>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireBuild {
    out_amount: Amount,
    #[serde(default)]
    compute_budget_instructions: Vec<WireInstruction>,
    #[serde(default)]
    setup_instructions: Vec<WireInstruction>,
    swap_instruction: WireInstruction,
    cleanup_instruction: Option<WireInstruction>,
    #[serde(default)]
    other_instructions: Vec<WireInstruction>,
    #[serde(default)]
    addresses_by_lookup_table_address: Option<std::collections::BTreeMap<String, Vec<String>>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireInstruction {
    program_id: String,
    accounts: Vec<WireAccount>,
    data: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireAccount {
    pubkey: String,
    is_signer: bool,
    is_writable: bool,
}

impl WireInstruction {
    fn parse(&self) -> Option<Instruction> {
        let accounts = self
            .accounts
            .iter()
            .map(|a| {
                Some(AccountMeta {
                    pubkey: Address::parse(&a.pubkey)?,
                    is_signer: a.is_signer,
                    is_writable: a.is_writable,
                })
            })
            .collect::<Option<_>>()?;
        Some(Instruction {
            program_id: Address::parse(&self.program_id)?,
            accounts,
            data: shared::b64::decode(&self.data).ok()?,
        })
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireSwap {
    swap_transaction: String,
    last_valid_block_height: u64,
}

impl Router {
    /// A router at `base` (no trailing `/swap/v1`), with the `x-api-key` of a keyed host.
    pub fn new(base: &str, api_key: Option<String>, timeout: Duration, tls: Option<rustls::ClientConfig>) -> Self {
        let mut builder = reqwest::Client::builder().timeout(timeout).redirect(reqwest::redirect::Policy::none());
        if let Some(tls) = tls {
            builder = builder.use_preconfigured_tls(tls);
        }
        let http = builder.build().expect("static reqwest configuration is valid");
        Router { http, base: base.trim_end_matches('/').to_string(), api_key }
    }

    fn request(&self, request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match &self.api_key {
            Some(key) => request.header("x-api-key", key),
            None => request,
        }
    }

    async fn read(response: reqwest::Response) -> Result<Value, RouterError> {
        let status = response.status().as_u16();
        let mut response = response;
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|_| RouterError::Unreachable)? {
            if body.len() + chunk.len() > MAX_ANSWER {
                return Err(RouterError::Malformed);
            }
            body.extend_from_slice(&chunk);
        }
        let value: Value = serde_json::from_slice(&body).map_err(|_| RouterError::Malformed)?;
        if status == 200 {
            return Ok(value);
        }
        let code = value.get("errorCode").or_else(|| value.get("error")).and_then(Value::as_str).unwrap_or("unknown");
        // Codes are short identifiers; anything else is not echoed.
        let code = if code.len() <= 64 && code.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            code.to_string()
        } else {
            "unknown".to_string()
        };
        Err(RouterError::Refused { status, code })
    }

    /// `GET /swap/v1/quote` for `amount` of `input` into `output` (exact in).
    pub async fn quote(
        &self,
        input: &Address,
        output: &Address,
        amount: u64,
        slippage_bps: u16,
    ) -> Result<Quote, RouterError> {
        let query = [
            ("inputMint", input.to_string()),
            ("outputMint", output.to_string()),
            ("amount", amount.to_string()),
            ("slippageBps", slippage_bps.to_string()),
            ("swapMode", "ExactIn".to_string()),
        ];
        let request = self.request(self.http.get(format!("{}/swap/v1/quote", self.base)).query(&query));
        let raw = Self::read(request.send().await.map_err(|_| RouterError::Unreachable)?).await?;
        let wire: WireQuote = serde_json::from_value(raw.clone()).map_err(|_| RouterError::Malformed)?;
        Ok(Quote {
            in_amount: wire.in_amount.0,
            out_amount: wire.out_amount.0,
            other_amount_threshold: wire.other_amount_threshold.0,
            price_impact_pct: wire.price_impact_pct,
            route_plan_len: wire.route_plan.len(),
            raw,
        })
    }

    /// `POST /swap/v1/swap`: the transaction that performs `quote` for `user`.
    pub async fn swap(&self, user: &Address, quote: &Quote) -> Result<SwapTransaction, RouterError> {
        let body = json!({"userPublicKey": user.to_string(), "quoteResponse": quote.raw, "wrapAndUnwrapSol": false});
        let request = self.request(self.http.post(format!("{}/swap/v1/swap", self.base)).json(&body));
        let raw = Self::read(request.send().await.map_err(|_| RouterError::Unreachable)?).await?;
        let wire: WireSwap = serde_json::from_value(raw).map_err(|_| RouterError::Malformed)?;
        let transaction = shared::b64::decode(&wire.swap_transaction).map_err(|_| RouterError::Malformed)?;
        Ok(SwapTransaction { transaction, last_valid_block_height: wire.last_valid_block_height })
    }

    /// `GET /swap/v2/build` (Swap API v2): `amount` of `input` into `output` for `taker`, exact
    /// in (v2 routes only), with the `*_v2` route instruction, no platform fee, the output to
    /// the taker's own account.
    pub async fn build(
        &self,
        input: &Address,
        output: &Address,
        amount: u64,
        slippage_bps: u16,
        taker: &Address,
    ) -> Result<Build, RouterError> {
        let query = [
            ("inputMint", input.to_string()),
            ("outputMint", output.to_string()),
            ("amount", amount.to_string()),
            ("slippageBps", slippage_bps.to_string()),
            ("taker", taker.to_string()),
        ];
        let request = self.request(self.http.get(format!("{}/swap/v2/build", self.base)).query(&query));
        let raw = Self::read(request.send().await.map_err(|_| RouterError::Unreachable)?).await?;
        let wire: WireBuild = serde_json::from_value(raw).map_err(|_| RouterError::Malformed)?;
        let instructions = (wire.compute_budget_instructions.iter())
            .chain(&wire.setup_instructions)
            .chain([&wire.swap_instruction])
            .chain(&wire.cleanup_instruction)
            .chain(&wire.other_instructions)
            .map(|ix| ix.parse().ok_or(RouterError::Malformed))
            .collect::<Result<_, _>>()?;
        let lookup_tables = (wire.addresses_by_lookup_table_address.unwrap_or_default().iter())
            .map(|(table, addresses)| {
                let parsed = addresses.iter().map(|a| Address::parse(a)).collect::<Option<_>>();
                Address::parse(table).zip(parsed).ok_or(RouterError::Malformed)
            })
            .collect::<Result<_, _>>()?;
        Ok(Build { instructions, lookup_tables, out_amount: wire.out_amount.0 })
    }
}
