//! `token_price`: Jupiter Price API v3 (provider id `jupiter`).
//!
//! `GET {base}/price/v3?ids=<mint>,<mint>` with `x-api-key` when a key is configured. The
//! answer is an object keyed by mint; mints Jupiter has no reliable price for are absent and
//! are reported as `missing`. A few well-known symbols are accepted in place of mints; the
//! helpers for that are shared with `swap_quote`.
//! Docs: <https://dev.jup.ag/api-reference/price/v3/price>

use serde_json::{Map, Value, json};

use super::http::transport_error_sentence;
use crate::tool::{Args, Tool, ToolError, ToolFuture};
use crate::tools::{ToolContext, Upstream};

const NAME: &str = "token_price";
pub(crate) const MAX_MINTS: usize = 20;

/// Well-known mainnet tokens the model may name by symbol: (symbol, mint, decimals).
pub(crate) const KNOWN_TOKENS: [(&str, &str, u32); 5] = [
    ("SOL", "So11111111111111111111111111111111111111112", 9),
    ("USDC", "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", 6),
    ("USDT", "Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB", 6),
    ("JUP", "JUPyiwrYJFskUPiHa7hkeR8VUtAeFoSYbKedZNsDvCN", 6),
    ("BONK", "DezXAZ8z7PnrnRJjz3wXBoRgixCa6xjnB7YaB1pPB263", 5),
];

/// True for a base58 string of a 32-byte public key (what mints and wallets are).
pub(crate) fn is_pubkey(s: &str) -> bool {
    (32..=44).contains(&s.len()) && bs58::decode(s).into_vec().is_ok_and(|bytes| bytes.len() == 32)
}

/// A known symbol (`SOL`, `$usdc`, `wSOL`) or a mint address, as a mint address.
pub(crate) fn resolve_mint(input: &str, arg: &str) -> Result<String, ToolError> {
    let input = input.trim();
    let symbol = input.trim_start_matches('$').to_ascii_uppercase();
    let symbol = if symbol == "WSOL" { "SOL" } else { symbol.as_str() };
    if let Some((_, mint, _)) = KNOWN_TOKENS.iter().find(|(s, _, _)| *s == symbol) {
        return Ok((*mint).to_string());
    }
    if is_pubkey(input) {
        return Ok(input.to_string());
    }
    let shown = if input.chars().count() <= 64 { input } else { "(value)" };
    Err(ToolError::BadArguments(format!(
        "`{arg}`: `{shown}` is neither a mint address (base58, 32 bytes) nor one of SOL, USDC, USDT, JUP, BONK"
    )))
}

/// The symbol and decimals of a well-known mint.
pub(crate) fn known_token(mint: &str) -> Option<(&'static str, u32)> {
    KNOWN_TOKENS.iter().find(|(_, m, _)| *m == mint).map(|(s, _, d)| (*s, *d))
}

/// How a Jupiter error answer is reported: the status, and Jupiter's machine-readable
/// `errorCode` when it has one (a short upper-case identifier, never free text).
pub(crate) fn jupiter_status_error(status: reqwest::StatusCode, body: &[u8]) -> ToolError {
    let code = serde_json::from_slice::<Value>(body).ok().and_then(|v| {
        v.get("errorCode")
            .and_then(Value::as_str)
            .filter(|c| !c.is_empty() && c.len() <= 64 && c.bytes().all(|b| b.is_ascii_uppercase() || b == b'_'))
            .map(str::to_string)
    });
    let status = status.as_u16();
    ToolError::Upstream(match (status, code) {
        (401 | 403, _) => format!("jupiter refused the API key (HTTP {status})"),
        (429, _) => "jupiter rate limit reached (HTTP 429)".to_string(),
        (_, Some(code)) => format!("jupiter answered HTTP {status} ({code})"),
        (_, None) => format!("jupiter answered HTTP {status}"),
    })
}

/// Sends a GET to Jupiter (with the key if one is configured) and returns the JSON answer.
pub(crate) async fn jupiter_get(http: &reqwest::Client, upstream: &Upstream, url: String) -> Result<Value, ToolError> {
    let mut request = http.get(url).header("Accept", "application/json");
    if let Some(key) = &upstream.api_key {
        request = request.header("x-api-key", key.as_str());
    }
    let response = request.send().await.map_err(|e| transport_error_sentence("jupiter", &e))?;
    let status = response.status();
    let body = response.bytes().await.map_err(|e| transport_error_sentence("jupiter", &e))?;
    if !status.is_success() {
        return Err(jupiter_status_error(status, &body));
    }
    serde_json::from_slice(&body).map_err(|_| ToolError::Upstream("jupiter answered with invalid JSON".into()))
}

pub struct TokenPrice {
    http: reqwest::Client,
    upstream: Option<Upstream>,
}

impl TokenPrice {
    pub fn new(ctx: &ToolContext) -> Self {
        TokenPrice { http: ctx.http.clone(), upstream: ctx.upstream("jupiter").cloned() }
    }
}

impl Tool for TokenPrice {
    fn name(&self) -> &'static str {
        NAME
    }
    fn call<'a>(&'a self, args: &'a Args) -> ToolFuture<'a> {
        Box::pin(async move {
            let mints = mints_arg(args)?;
            let upstream = self.upstream.as_ref().ok_or(ToolError::NotConfigured(NAME))?;
            // Validated base58, so the list needs no escaping; commas stay literal as documented.
            let url = format!("{}?ids={}", upstream.url("/price/v3"), mints.join(","));
            let body = jupiter_get(&self.http, upstream, url).await?;
            let prices =
                body.as_object().ok_or_else(|| ToolError::Upstream("jupiter answered an unexpected shape".into()))?;
            Ok(summarize(&mints, prices))
        })
    }
}

/// `mints` as a string (comma- or space-separated) or an array of strings; symbols resolved,
/// duplicates dropped, order kept.
fn mints_arg(args: &Args) -> Result<Vec<String>, ToolError> {
    let items: Vec<&str> = match args.get("mints") {
        Some(Value::String(s)) => s.split([',', ' ']).map(str::trim).filter(|s| !s.is_empty()).collect(),
        Some(Value::Array(values)) => values
            .iter()
            .map(|v| {
                v.as_str().map(str::trim).ok_or_else(|| ToolError::BadArguments("`mints` must hold strings".into()))
            })
            .collect::<Result<_, _>>()?,
        None | Some(Value::Null) => return Err(ToolError::BadArguments("`mints` is required".into())),
        Some(_) => return Err(ToolError::BadArguments("`mints` must be a string or an array of strings".into())),
    };
    if items.is_empty() {
        return Err(ToolError::BadArguments("`mints` must name at least one token".into()));
    }
    if items.len() > MAX_MINTS {
        return Err(ToolError::BadArguments(format!("`mints` may name at most {MAX_MINTS} tokens")));
    }
    let mut mints: Vec<String> = Vec::with_capacity(items.len());
    for item in items {
        let mint = resolve_mint(item, "mints")?;
        if !mints.contains(&mint) {
            mints.push(mint);
        }
    }
    Ok(mints)
}

fn summarize(mints: &[String], prices: &Map<String, Value>) -> Value {
    let mut found = Vec::new();
    let mut missing = Vec::new();
    for mint in mints {
        let Some(entry) = prices.get(mint).filter(|e| e.get("usdPrice").is_some_and(Value::is_number)) else {
            missing.push(mint.clone());
            continue;
        };
        let mut item = Map::new();
        item.insert("mint".into(), json!(mint));
        if let Some((symbol, _)) = known_token(mint) {
            item.insert("symbol".into(), json!(symbol));
        }
        for field in ["usdPrice", "priceChange24h", "decimals", "blockId"] {
            if let Some(n) = entry.get(field).filter(|v| v.is_number()) {
                item.insert(field.into(), n.clone());
            }
        }
        found.push(Value::Object(item));
    }
    let mut result = json!({"prices": found});
    if !missing.is_empty() {
        result["missing"] = json!(missing);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    const SOL: &str = "So11111111111111111111111111111111111111112";
    const USDC: &str = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";

    fn args(v: Value) -> Args {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn the_known_mints_are_valid_pubkeys() {
        for (symbol, mint, _) in KNOWN_TOKENS {
            assert!(is_pubkey(mint), "{symbol}");
        }
        assert!(!is_pubkey("So1111111111111111111111111111111111111111O")); // 'O' is not base58
        assert!(!is_pubkey("1111111111111111111111111111111")); // 31 zero bytes
        assert!(is_pubkey("11111111111111111111111111111111")); // 32 zero bytes
    }

    #[test]
    fn mints_come_as_string_or_array_with_symbols() {
        assert_eq!(mints_arg(&args(json!({"mints": "sol, $USDC,SOL"}))).unwrap(), vec![SOL, USDC]);
        assert_eq!(mints_arg(&args(json!({"mints": [USDC, "wsol"]}))).unwrap(), vec![USDC, SOL]);
        assert!(matches!(mints_arg(&args(json!({"mints": " , "}))), Err(ToolError::BadArguments(_))));
        assert!(matches!(mints_arg(&args(json!({"mints": [1]}))), Err(ToolError::BadArguments(_))));
        assert!(
            matches!(mints_arg(&args(json!({"mints": "DOGE"}))), Err(ToolError::BadArguments(m)) if m.contains("DOGE"))
        );
        let many: Vec<String> = (0..21).map(|_| SOL.to_string()).collect();
        assert!(
            matches!(mints_arg(&args(json!({"mints": many}))), Err(ToolError::BadArguments(m)) if m.contains("20"))
        );
    }

    #[test]
    fn error_codes_pass_only_when_they_look_like_codes() {
        let status = reqwest::StatusCode::BAD_REQUEST;
        assert_eq!(
            jupiter_status_error(status, br#"{"error":"no route","errorCode":"COULD_NOT_FIND_ANY_ROUTE"}"#),
            ToolError::Upstream("jupiter answered HTTP 400 (COULD_NOT_FIND_ANY_ROUTE)".into())
        );
        assert_eq!(
            jupiter_status_error(status, br#"{"errorCode":"secret body text"}"#),
            ToolError::Upstream("jupiter answered HTTP 400".into())
        );
    }
}
