//! `swap_quote`: Jupiter Swap API v1 quote (provider id `jupiter`).
//!
//! `GET {base}/swap/v1/quote?inputMint=..&outputMint=..&amount=..&slippageBps=..` with
//! `x-api-key` when a key is configured. Amounts are integers in the token's base units.
//! Only a quote: nothing is signed or sent. Returns the amounts, the minimum received
//! (`otherAmountThreshold`), price impact and the route's legs.
//! Docs: <https://dev.jup.ag/docs/api/swap-api/quote>

use serde_json::{Map, Value, json};

use super::token_price::{jupiter_get, known_token, resolve_mint};
use crate::tool::{Args, Tool, ToolError, ToolFuture, opt_u64_arg, str_arg};
use crate::tools::{ToolContext, Upstream};

const NAME: &str = "swap_quote";
pub(crate) const DEFAULT_SLIPPAGE_BPS: u64 = 50;
pub(crate) const MAX_SLIPPAGE_BPS: u64 = 10_000;
/// Legs of the route shown.
const MAX_LEGS: usize = 6;

pub struct SwapQuote {
    http: reqwest::Client,
    upstream: Option<Upstream>,
}

impl SwapQuote {
    pub fn new(ctx: &ToolContext) -> Self {
        SwapQuote { http: ctx.http.clone(), upstream: ctx.upstream("jupiter").cloned() }
    }
}

impl Tool for SwapQuote {
    fn name(&self) -> &'static str {
        NAME
    }
    fn call<'a>(&'a self, args: &'a Args) -> ToolFuture<'a> {
        Box::pin(async move {
            let input_mint = resolve_mint(str_arg(args, "inputMint")?, "inputMint")?;
            let output_mint = resolve_mint(str_arg(args, "outputMint")?, "outputMint")?;
            if input_mint == output_mint {
                return Err(ToolError::BadArguments("`inputMint` and `outputMint` must differ".into()));
            }
            let amount = amount_arg(args)?;
            let slippage_bps = opt_u64_arg(args, "slippageBps", MAX_SLIPPAGE_BPS)?.unwrap_or(DEFAULT_SLIPPAGE_BPS);
            let upstream = self.upstream.as_ref().ok_or(ToolError::NotConfigured(NAME))?;
            // Mints are validated base58 and the numbers are digits: nothing needs escaping.
            let url = format!(
                "{}?inputMint={input_mint}&outputMint={output_mint}&amount={amount}&slippageBps={slippage_bps}",
                upstream.url("/swap/v1/quote")
            );
            let body = jupiter_get(&self.http, upstream, url).await?;
            summarize(&body)
        })
    }
}

/// `amount`: a positive integer (u64), as a JSON number or a string of digits.
fn amount_arg(args: &Args) -> Result<u64, ToolError> {
    let bad = || ToolError::BadArguments("`amount` must be a positive integer in base units, e.g. \"1000000\"".into());
    let amount = match args.get("amount") {
        None | Some(Value::Null) => return Err(ToolError::BadArguments("`amount` is required".into())),
        Some(Value::Number(n)) => n.as_u64().ok_or_else(bad)?,
        Some(Value::String(s)) => {
            let s = s.trim();
            if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad());
            }
            s.parse::<u64>().map_err(|_| bad())?
        }
        Some(_) => return Err(bad()),
    };
    if amount == 0 {
        return Err(bad());
    }
    Ok(amount)
}

/// Integer strings of the API as numbers (they fit u64); anything else as it came.
fn amount_value(v: Option<&Value>) -> Value {
    match v {
        Some(Value::String(s)) => s.parse::<u64>().map(Value::from).unwrap_or_else(|_| json!(s)),
        Some(other) => other.clone(),
        None => Value::Null,
    }
}

/// `amount` in whole tokens when the mint's decimals are known.
fn ui_amount(mint: &str, amount: &Value) -> Option<Value> {
    let (_, decimals) = known_token(mint)?;
    let raw = amount.as_u64()?;
    Some(json!(raw as f64 / 10f64.powi(decimals as i32)))
}

fn summarize(body: &Value) -> Result<Value, ToolError> {
    let shape = || ToolError::Upstream("jupiter answered an unexpected shape".into());
    let input_mint = body.get("inputMint").and_then(Value::as_str).ok_or_else(shape)?;
    let output_mint = body.get("outputMint").and_then(Value::as_str).ok_or_else(shape)?;
    let in_amount = amount_value(body.get("inAmount"));
    let out_amount = amount_value(body.get("outAmount"));
    if in_amount.is_null() || out_amount.is_null() {
        return Err(shape());
    }
    let mut result = Map::new();
    result.insert("inputMint".into(), json!(input_mint));
    if let Some((symbol, _)) = known_token(input_mint) {
        result.insert("inputSymbol".into(), json!(symbol));
    }
    result.insert("outputMint".into(), json!(output_mint));
    if let Some((symbol, _)) = known_token(output_mint) {
        result.insert("outputSymbol".into(), json!(symbol));
    }
    if let Some(ui) = ui_amount(input_mint, &in_amount) {
        result.insert("inUiAmount".into(), ui);
    }
    if let Some(ui) = ui_amount(output_mint, &out_amount) {
        result.insert("outUiAmount".into(), ui);
    }
    result.insert("inAmount".into(), in_amount);
    result.insert("outAmount".into(), out_amount);
    result.insert("otherAmountThreshold".into(), amount_value(body.get("otherAmountThreshold")));
    for field in ["swapMode", "slippageBps", "contextSlot"] {
        if let Some(v) = body.get(field) {
            result.insert(field.into(), v.clone());
        }
    }
    // A decimal string in the API ("0.0012" is 0.12 %).
    if let Some(impact) = body.get("priceImpactPct") {
        let number = match impact {
            Value::String(s) => s.parse::<f64>().ok().map(Value::from),
            Value::Number(_) => Some(impact.clone()),
            _ => None,
        };
        if let Some(number) = number {
            result.insert("priceImpactPct".into(), number);
        }
    }
    let legs = body.get("routePlan").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let route: Vec<Value> = legs
        .iter()
        .take(MAX_LEGS)
        .map(|leg| {
            let info = leg.get("swapInfo").cloned().unwrap_or(Value::Null);
            json!({
                "label": info.get("label").cloned().unwrap_or(Value::Null),
                "percent": leg.get("percent").cloned().unwrap_or(Value::Null),
                "inputMint": info.get("inputMint").cloned().unwrap_or(Value::Null),
                "outputMint": info.get("outputMint").cloned().unwrap_or(Value::Null),
                "inAmount": amount_value(info.get("inAmount")),
                "outAmount": amount_value(info.get("outAmount")),
            })
        })
        .collect();
    result.insert("route".into(), json!(route));
    if legs.len() > MAX_LEGS {
        result.insert("routeLegsOmitted".into(), json!(legs.len() - MAX_LEGS));
    }
    Ok(Value::Object(result))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(v: Value) -> Args {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn amounts_must_be_positive_integers() {
        assert_eq!(amount_arg(&args(json!({"amount": "1000000"}))), Ok(1_000_000));
        assert_eq!(amount_arg(&args(json!({"amount": 5}))), Ok(5));
        for bad in [json!("1.5"), json!("-3"), json!("0"), json!(0), json!(1.5), json!("1e6"), json!(""), json!(true)] {
            assert!(matches!(amount_arg(&args(json!({"amount": bad}))), Err(ToolError::BadArguments(_))), "{bad}");
        }
        assert!(amount_arg(&args(json!({"amount": "99999999999999999999999"}))).is_err());
    }

    #[test]
    fn a_quote_is_summarized_with_numbers() {
        let body = json!({
            "inputMint": "So11111111111111111111111111111111111111112", "inAmount": "1000000000",
            "outputMint": "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", "outAmount": "150250000",
            "otherAmountThreshold": "149498750", "swapMode": "ExactIn", "slippageBps": 50,
            "platformFee": null, "priceImpactPct": "0.0001",
            "routePlan": [{"swapInfo": {"ammKey": "k", "label": "Whirlpool", "inputMint": "a", "outputMint": "b",
                           "inAmount": "1000000000", "outAmount": "150250000", "feeAmount": "1", "feeMint": "a"},
                           "percent": 100}],
            "contextSlot": 300000000u64, "timeTaken": 0.01
        });
        let out = summarize(&body).unwrap();
        assert_eq!(out["inAmount"], 1_000_000_000u64);
        assert_eq!(out["outAmount"], 150_250_000u64);
        assert_eq!(out["inUiAmount"], 1.0);
        assert_eq!(out["outUiAmount"], 150.25);
        assert_eq!(out["inputSymbol"], "SOL");
        assert_eq!(out["priceImpactPct"], 0.0001);
        assert_eq!(out["route"][0]["label"], "Whirlpool");
        assert_eq!(out["route"][0]["percent"], 100);
        assert!(out.get("timeTaken").is_none());
        assert!(summarize(&json!({"error": "x"})).is_err());
    }
}
