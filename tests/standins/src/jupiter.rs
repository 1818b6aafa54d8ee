//! Stand-in for Jupiter: Price API v3 (`GET /price/v3?ids=..`) and Swap API v1
//! (`GET /swap/v1/quote?inputMint&outputMint&amount&slippageBps`).
//!
//! `start(api_key)` serves on loopback and returns `(Running, Recorder)`; point the `jupiter`
//! upstream's base URL at `Running::base_url`. With `Some(key)` every request must carry
//! `x-api-key: key` (401 otherwise, as `api.jup.ag` does); with `None` the header is not
//! required (as `lite-api.jup.ag`). Prices are fixed for SOL, USDC, USDT, JUP and BONK
//! ([`PRICES`]); other well-formed mints are simply absent from the price answer, and a quote
//! involving one is refused with `TOKEN_NOT_TRADABLE`. Malformed ids, amounts or slippage are
//! answered 400 `{"error": ..}` like the real API. Quotes are computed from the fixed prices
//! (`outAmount = amount * priceIn / priceOut`, scaled by decimals) and routed through USDC
//! when neither side is USDC. `Recorder::requests` lists every request (path, query pairs,
//! key); `Recorder::fail_with` makes later requests fail.

use axum::Json;
use axum::Router;
use axum::extract::Query;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Map, Value, json};

/// (mint, USD price, decimals) the stand-in knows.
pub const PRICES: [(&str, f64, u32); 5] = [
    ("So11111111111111111111111111111111111111112", 147.48, 9),
    ("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", 0.9999, 6),
    ("Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB", 1.0001, 6),
    ("JUPyiwrYJFskUPiHa7hkeR8VUtAeFoSYbKedZNsDvCN", 0.52, 6),
    ("DezXAZ8z7PnrnRJjz3wXBoRgixCa6xjnB7YaB1pPB263", 0.0000231, 5),
];
const USDC: &str = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
/// The slot every answer reports.
pub const SLOT: u64 = 348_004_023;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    pub path: String,
    pub query: Vec<(String, String)>,
    pub api_key: Option<String>,
}

impl Seen {
    pub fn param(&self, name: &str) -> Option<&str> {
        self.query.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }
}

pub use crate::Failure;

/// What the stand-in was asked, and how it should fail.
pub type Recorder = crate::Recorder<Seen>;

/// The body of a forced failure; tests check it never reaches the model.
pub const FAILURE_BODY: &str = r#"{"error":"jupiter-internal-detail-91c2"}"#;

#[derive(Clone)]
struct App {
    api_key: Option<String>,
    recorder: Recorder,
}

pub async fn start(api_key: Option<&str>) -> (crate::Running, Recorder) {
    let recorder = Recorder::default();
    let app = App { api_key: api_key.map(str::to_string), recorder: recorder.clone() };
    let router = Router::new().route("/price/v3", get(price)).route("/swap/v1/quote", get(quote)).with_state(app);
    (crate::serve(router).await, recorder)
}

/// A request recorded (with its decoded query) and past the key check and any forced failure,
/// which are its rejection.
struct Gated(Vec<(String, String)>);

impl axum::extract::FromRequestParts<App> for Gated {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut axum::http::request::Parts, app: &App) -> Result<Self, Response> {
        let Query(query) = Query::<Vec<(String, String)>>::from_request_parts(parts, app)
            .await
            .map_err(IntoResponse::into_response)?;
        match gate(app, &parts.uri, &parts.headers, &query) {
            Some(response) => Err(response),
            None => Ok(Gated(query)),
        }
    }
}

/// Records the request, then answers the key check and forced failures; `None` means go on.
fn gate(app: &App, uri: &Uri, headers: &HeaderMap, query: &[(String, String)]) -> Option<Response> {
    let api_key = headers.get("x-api-key").and_then(|v| v.to_str().ok()).map(str::to_string);
    let seen = Seen { path: uri.path().to_string(), query: query.to_vec(), api_key: api_key.clone() };
    app.recorder.push(seen);
    if let Some(expected) = &app.api_key
        && api_key.as_deref() != Some(expected.as_str())
    {
        return Some((StatusCode::UNAUTHORIZED, Json(json!({"code": 401, "message": "Unauthorized"}))).into_response());
    }
    app.recorder.forced_failure(FAILURE_BODY)
}

fn bad_request(message: &str, code: Option<&str>) -> Response {
    let mut body = json!({"error": message});
    if let Some(code) = code {
        body["errorCode"] = json!(code);
    }
    (StatusCode::BAD_REQUEST, Json(body)).into_response()
}

fn param<'a>(query: &'a [(String, String)], name: &str) -> Option<&'a str> {
    query.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
}

fn known(mint: &str) -> Option<(f64, u32)> {
    PRICES.iter().find(|(m, _, _)| *m == mint).map(|(_, p, d)| (*p, *d))
}

async fn price(Gated(query): Gated) -> Response {
    let Some(ids) = param(&query, "ids").filter(|s| !s.is_empty()) else {
        return bad_request("Query parameter ids is required", None);
    };
    let ids: Vec<&str> = ids.split(',').collect();
    if ids.len() > 50 {
        return bad_request("Too many ids, the maximum is 50", None);
    }
    let mut answer = Map::new();
    for id in ids {
        if !crate::solana_rpc::is_pubkey(id) {
            return bad_request(&format!("Invalid mint address: {id}"), None);
        }
        if let Some((usd, decimals)) = known(id) {
            answer.insert(
                id.to_string(),
                json!({"createdAt": "2024-06-05T08:55:25.527Z", "liquidity": 621_679_197.67, "usdPrice": usd,
                       "blockId": SLOT, "decimals": decimals, "priceChange24h": 1.29}),
            );
        }
    }
    Json(Value::Object(answer)).into_response()
}

async fn quote(Gated(query): Gated) -> Response {
    let (Some(input), Some(output)) = (param(&query, "inputMint"), param(&query, "outputMint")) else {
        return bad_request("Query parameters inputMint and outputMint are required", None);
    };
    for mint in [input, output] {
        if !crate::solana_rpc::is_pubkey(mint) {
            return bad_request(&format!("Invalid mint: {mint}"), None);
        }
    }
    let Some(amount) = param(&query, "amount").and_then(|a| a.parse::<u64>().ok()).filter(|a| *a > 0) else {
        return bad_request("Query parameter amount cannot be parsed", None);
    };
    let slippage = match param(&query, "slippageBps").map(str::parse::<u16>) {
        None => 50,
        Some(Ok(s)) if s <= 10_000 => s,
        Some(_) => return bad_request("Query parameter slippageBps cannot be parsed", None),
    };
    if input == output {
        return bad_request("Circular arbitrage is disabled", Some("CIRCULAR_ARBITRAGE_IS_DISABLED"));
    }
    let (Some((price_in, dec_in)), Some((price_out, dec_out))) = (known(input), known(output)) else {
        return bad_request("The token is not tradable", Some("TOKEN_NOT_TRADABLE"));
    };
    let convert = |amount: u64, from: (f64, u32), to: (f64, u32)| -> u64 {
        let whole = amount as f64 / 10f64.powi(from.1 as i32) * from.0 / to.0;
        (whole * 10f64.powi(to.1 as i32)).floor() as u64
    };
    let out_amount = convert(amount, (price_in, dec_in), (price_out, dec_out));
    let threshold = (u128::from(out_amount) * u128::from(10_000 - slippage) / 10_000) as u64;
    let leg = |label: &str, amm: &str, from: &str, to: &str, in_amount: u64, out_amount: u64| {
        json!({"swapInfo": {"ammKey": amm, "label": label, "inputMint": from, "outputMint": to,
                            "inAmount": in_amount.to_string(), "outAmount": out_amount.to_string(),
                            "feeAmount": "0", "feeMint": from}, "percent": 100, "bps": 10_000})
    };
    let route = if input == USDC || output == USDC {
        vec![leg("Whirlpool", "Czfq3xZZDmsdGdUyrNLtRhGc47cXcZtLG4crryfu44zE", input, output, amount, out_amount)]
    } else {
        let middle = convert(amount, (price_in, dec_in), known(USDC).unwrap_or((1.0, 6)));
        vec![
            leg("Whirlpool", "Czfq3xZZDmsdGdUyrNLtRhGc47cXcZtLG4crryfu44zE", input, USDC, amount, middle),
            leg("Meteora DLMM", "5rCf1DM8LjKTw4YqhnoLcngyZYeNnQqztScTogYHAS6", USDC, output, middle, out_amount),
        ]
    };
    Json(json!({
        "inputMint": input,
        "inAmount": amount.to_string(),
        "outputMint": output,
        "outAmount": out_amount.to_string(),
        "otherAmountThreshold": threshold.to_string(),
        "swapMode": "ExactIn",
        "slippageBps": slippage,
        "platformFee": null,
        "priceImpactPct": "0.0001",
        "routePlan": route,
        "contextSlot": SLOT,
        "timeTaken": 0.0123,
        "swapUsdValue": "147.48"
    }))
    .into_response()
}
