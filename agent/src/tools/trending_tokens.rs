//! `trending_tokens`: CoinGecko's trending search list (provider id `coingecko`).
//!
//! `GET {base}/search/trending` (base like `https://api.coingecko.com/api/v3`), with the key
//! in `x-cg-demo-api-key` when one is configured (`x-cg-pro-api-key` when the base is the Pro
//! API host). Returns the trending coins with rank, price and 24h change; NFTs and categories
//! are left out.
//! Docs: <https://docs.coingecko.com/reference/trending-search>

use serde_json::{Map, Value, json};

use super::http::transport_error_sentence;
use crate::tool::{Args, Tool, ToolError, ToolFuture, opt_u64_arg};
use crate::tools::{ToolContext, Upstream};

const NAME: &str = "trending_tokens";
pub(crate) const DEFAULT_LIMIT: u64 = 10;
pub(crate) const MAX_LIMIT: u64 = 15;

pub struct TrendingTokens {
    http: reqwest::Client,
    upstream: Option<Upstream>,
}

impl TrendingTokens {
    pub fn new(ctx: &ToolContext) -> Self {
        TrendingTokens { http: ctx.http.clone(), upstream: ctx.upstream("coingecko").cloned() }
    }
}

impl Tool for TrendingTokens {
    fn name(&self) -> &'static str {
        NAME
    }
    fn call<'a>(&'a self, args: &'a Args) -> ToolFuture<'a> {
        Box::pin(async move {
            let limit = match opt_u64_arg(args, "limit", MAX_LIMIT)? {
                Some(0) => return Err(ToolError::BadArguments("`limit` must be at least 1".into())),
                Some(n) => n as usize,
                None => DEFAULT_LIMIT as usize,
            };
            let upstream = self.upstream.as_ref().ok_or(ToolError::NotConfigured(NAME))?;
            let mut request = self.http.get(upstream.url("/search/trending")).header("Accept", "application/json");
            if let Some(key) = &upstream.api_key {
                let header = if upstream.base_url.contains("pro-api.coingecko.com") {
                    "x-cg-pro-api-key"
                } else {
                    "x-cg-demo-api-key"
                };
                request = request.header(header, key.as_str());
            }
            let response = request.send().await.map_err(|e| transport_error_sentence("coingecko", &e))?;
            let status = response.status();
            if !status.is_success() {
                return Err(ToolError::Upstream(match status.as_u16() {
                    401 | 403 => format!("coingecko refused the API key (HTTP {})", status.as_u16()),
                    429 => "coingecko rate limit reached (HTTP 429)".to_string(),
                    code => format!("coingecko answered HTTP {code}"),
                }));
            }
            let body: Value = response
                .json()
                .await
                .map_err(|_| ToolError::Upstream("coingecko answered with invalid JSON".into()))?;
            let coins = body
                .get("coins")
                .and_then(Value::as_array)
                .ok_or_else(|| ToolError::Upstream("coingecko answered an unexpected shape".into()))?;
            let coins: Vec<Value> = coins.iter().filter_map(|c| c.get("item")).filter_map(coin).take(limit).collect();
            Ok(json!({"coins": coins}))
        })
    }
}

/// One trending coin, compact. Money strings such as `"$1,234,567"` become numbers.
fn coin(item: &Value) -> Option<Value> {
    let id = item.get("id").and_then(Value::as_str)?;
    let mut out = Map::new();
    out.insert("id".into(), json!(id));
    for (from, to) in
        [("name", "name"), ("symbol", "symbol"), ("market_cap_rank", "marketCapRank"), ("score", "trendingRank")]
    {
        if let Some(v) = item.get(from).filter(|v| !v.is_null()) {
            out.insert(to.into(), v.clone());
        }
    }
    // CoinGecko's score is 0-based; the model reads ranks from 1.
    if let Some(rank) = out.get("trendingRank").and_then(Value::as_u64) {
        out.insert("trendingRank".into(), json!(rank + 1));
    }
    let data = item.get("data");
    if let Some(price) = data.and_then(|d| d.get("price")).and_then(number) {
        out.insert("priceUsd".into(), price);
    }
    if let Some(change) = data.and_then(|d| d.pointer("/price_change_percentage_24h/usd")).and_then(number) {
        out.insert("change24hPct".into(), change);
    }
    if let Some(cap) = data.and_then(|d| d.get("market_cap")).and_then(number) {
        out.insert("marketCapUsd".into(), cap);
    }
    if let Some(volume) = data.and_then(|d| d.get("total_volume")).and_then(number) {
        out.insert("volume24hUsd".into(), volume);
    }
    Some(Value::Object(out))
}

/// A number, or a string holding one (`"0.0123"`, `"$1,234"`).
fn number(v: &Value) -> Option<Value> {
    match v {
        Value::Number(_) => Some(v.clone()),
        Value::String(s) => {
            let cleaned: String = s.chars().filter(|c| !matches!(c, '$' | ',' | ' ')).collect();
            cleaned.parse::<f64>().ok().filter(|f| f.is_finite()).map(Value::from)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trending_item_is_compacted() {
        let item = json!({
            "id": "bonk", "coin_id": 28600, "name": "Bonk", "symbol": "BONK", "market_cap_rank": 60,
            "thumb": "https://x/thumb.png", "small": "s", "large": "l", "slug": "bonk", "price_btc": 2.1e-10,
            "score": 0,
            "data": {"price": 0.0000231, "price_btc": "0.00000000021",
                     "price_change_percentage_24h": {"usd": 12.5, "eur": 12.1},
                     "market_cap": "$1,612,345,678", "total_volume": "$234,567", "sparkline": "https://x",
                     "content": null}
        });
        assert_eq!(
            coin(&item).unwrap(),
            json!({"id": "bonk", "name": "Bonk", "symbol": "BONK", "marketCapRank": 60, "trendingRank": 1,
                   "priceUsd": 0.0000231, "change24hPct": 12.5, "marketCapUsd": 1612345678.0, "volume24hUsd": 234567.0})
        );
        assert_eq!(coin(&json!({"name": "no id"})), None);
        assert_eq!(number(&json!("n/a")), None);
    }
}
