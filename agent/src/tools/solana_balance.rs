//! `solana_balance`: a wallet's SOL and SPL token balances over Solana JSON-RPC 2.0
//! (provider id `solanaRpc`).
//!
//! Three POSTs to the base URL, in parallel: `getBalance` and `getTokenAccountsByOwner` for
//! the SPL Token program and for Token-2022, all at `confirmed` commitment, token accounts
//! `jsonParsed`. Accounts of the same mint are added up, empty ones left out, at most 20
//! tokens listed. A JSON-RPC `error` member becomes an upstream error (its code only).
//! When a credential is configured it replaces `{apiKey}` in the base URL (RPC providers
//! take it in the path or the query string).
//! Docs: <https://solana.com/docs/rpc/http/getbalance>,
//! <https://solana.com/docs/rpc/http/gettokenaccountsbyowner>

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::http::transport_error_sentence;
use super::token_price::{is_pubkey, known_token};
use crate::tool::{Args, Tool, ToolError, ToolFuture, str_arg};
use crate::tools::{ToolContext, Upstream};

const NAME: &str = "solana_balance";
const MAX_TOKENS: usize = 20;
pub(crate) const TOKEN_PROGRAM: &str = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA";
pub(crate) const TOKEN_2022_PROGRAM: &str = "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb";

pub struct SolanaBalance {
    http: reqwest::Client,
    upstream: Option<Upstream>,
}

impl SolanaBalance {
    pub fn new(ctx: &ToolContext) -> Self {
        SolanaBalance { http: ctx.http.clone(), upstream: ctx.upstream("solanaRpc").cloned() }
    }
}

impl Tool for SolanaBalance {
    fn name(&self) -> &'static str {
        NAME
    }
    fn call<'a>(&'a self, args: &'a Args) -> ToolFuture<'a> {
        Box::pin(async move {
            let address = str_arg(args, "address")?.trim();
            if !is_pubkey(address) {
                return Err(ToolError::BadArguments("`address` must be a base58 Solana public key (32 bytes)".into()));
            }
            let upstream = self.upstream.as_ref().ok_or(ToolError::NotConfigured(NAME))?;
            let url = match &upstream.api_key {
                Some(key) => upstream.base_url.replace("{apiKey}", key),
                None => upstream.base_url.clone(),
            };
            let parsed = json!({"encoding": "jsonParsed", "commitment": "confirmed"});
            let token_accounts = |program: &str| json!([address, {"programId": program}, parsed]);
            let (balance, spl, spl_2022) = tokio::try_join!(
                rpc(&self.http, &url, "getBalance", json!([address, {"commitment": "confirmed"}])),
                rpc(&self.http, &url, "getTokenAccountsByOwner", token_accounts(TOKEN_PROGRAM)),
                rpc(&self.http, &url, "getTokenAccountsByOwner", token_accounts(TOKEN_2022_PROGRAM)),
            )?;
            let lamports = balance
                .get("value")
                .and_then(Value::as_u64)
                .ok_or_else(|| ToolError::Upstream("solana RPC answered an unexpected shape".into()))?;
            let mut holdings = Holdings::default();
            for result in [&spl, &spl_2022] {
                let accounts = result
                    .get("value")
                    .and_then(Value::as_array)
                    .ok_or_else(|| ToolError::Upstream("solana RPC answered an unexpected shape".into()))?;
                for account in accounts {
                    holdings.add(account);
                }
            }
            let mut out = json!({
                "address": address,
                "lamports": lamports,
                "sol": ui_number(u128::from(lamports), 9),
                "tokens": holdings.listed(),
            });
            if holdings.by_mint.len() > MAX_TOKENS {
                out["tokensOmitted"] = json!(holdings.by_mint.len() - MAX_TOKENS);
            }
            if let Some(slot) = balance.pointer("/context/slot").and_then(Value::as_u64) {
                out["slot"] = json!(slot);
            }
            Ok(out)
        })
    }
}

/// Non-empty token balances by mint, in the order the RPC listed them.
#[derive(Default)]
struct Holdings {
    by_mint: BTreeMap<String, (usize, u128, u32)>,
}

impl Holdings {
    fn add(&mut self, account: &Value) {
        let Some(info) = account.pointer("/account/data/parsed/info") else { return };
        let Some(mint) = info.get("mint").and_then(Value::as_str) else { return };
        let amount = info.pointer("/tokenAmount/amount").and_then(Value::as_str).and_then(|a| a.parse::<u128>().ok());
        let decimals =
            info.pointer("/tokenAmount/decimals").and_then(Value::as_u64).and_then(|d| u32::try_from(d).ok());
        let (Some(amount), Some(decimals)) = (amount, decimals) else { return };
        if amount == 0 || decimals > 30 {
            return;
        }
        let order = self.by_mint.len();
        let entry = self.by_mint.entry(mint.to_string()).or_insert((order, 0, decimals));
        entry.1 = entry.1.saturating_add(amount);
    }

    fn listed(&self) -> Vec<Value> {
        let mut entries: Vec<_> = self.by_mint.iter().collect();
        entries.sort_by_key(|(_, (order, _, _))| *order);
        entries
            .into_iter()
            .take(MAX_TOKENS)
            .map(|(mint, (_, amount, decimals))| {
                let raw = u64::try_from(*amount).map(Value::from).unwrap_or_else(|_| json!(amount.to_string()));
                let ui = ui_number(*amount, *decimals);
                let mut token = json!({"mint": mint, "amount": raw, "decimals": decimals, "uiAmount": ui});
                if let Some((symbol, _)) = known_token(mint) {
                    token["symbol"] = json!(symbol);
                }
                token
            })
            .collect()
    }
}

/// `amount / 10^decimals` as a JSON number, via the exact decimal string (so 3 with 1 decimal
/// is 0.3, not 0.30000000000000004).
fn ui_number(amount: u128, decimals: u32) -> Value {
    let digits = amount.to_string();
    let decimals = decimals as usize;
    let text = if decimals == 0 {
        digits
    } else if digits.len() > decimals {
        format!("{}.{}", &digits[..digits.len() - decimals], &digits[digits.len() - decimals..])
    } else {
        format!("0.{}{}", "0".repeat(decimals - digits.len()), digits)
    };
    text.parse::<f64>().ok().filter(|f| f.is_finite()).map_or(Value::Null, Value::from)
}

/// One JSON-RPC 2.0 call; returns `result`.
async fn rpc(http: &reqwest::Client, url: &str, method: &str, params: Value) -> Result<Value, ToolError> {
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let response =
        http.post(url).json(&request).send().await.map_err(|e| transport_error_sentence("solana RPC", &e))?;
    let status = response.status();
    if !status.is_success() {
        return Err(ToolError::Upstream(match status.as_u16() {
            401 | 403 => format!("solana RPC refused the request (HTTP {})", status.as_u16()),
            429 => "solana RPC rate limit reached (HTTP 429)".to_string(),
            code => format!("solana RPC answered HTTP {code}"),
        }));
    }
    let mut body: Value =
        response.json().await.map_err(|_| ToolError::Upstream("solana RPC answered with invalid JSON".into()))?;
    if let Some(error) = body.get("error").filter(|e| !e.is_null()) {
        return Err(ToolError::Upstream(match error.get("code").and_then(Value::as_i64) {
            Some(code) => format!("solana RPC error {code} on {method}"),
            None => format!("solana RPC error on {method}"),
        }));
    }
    match body.get_mut("result").map(Value::take) {
        Some(result) if !result.is_null() => Ok(result),
        _ => Err(ToolError::Upstream(format!("solana RPC answered {method} without a result"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ui_amounts_are_exact_decimals() {
        assert_eq!(ui_number(3, 1), json!(0.3));
        assert_eq!(ui_number(1_500_000_000, 9), json!(1.5));
        assert_eq!(ui_number(42, 0), json!(42.0));
        assert_eq!(ui_number(5, 6), json!(0.000005));
        assert_eq!(ui_number(0, 9), json!(0.0));
    }

    #[test]
    fn holdings_add_up_by_mint_and_skip_empty_accounts() {
        let account = |mint: &str, amount: &str, decimals: u64| {
            json!({"pubkey": "x", "account": {"data": {"parsed": {"info": {
                "mint": mint, "owner": "o",
                "tokenAmount": {"amount": amount, "decimals": decimals, "uiAmountString": "?"}
            }}}}})
        };
        let mut h = Holdings::default();
        h.add(&account("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", "1500000", 6));
        h.add(&account("Mint2", "0", 2));
        h.add(&account("Mint3", "7", 0));
        h.add(&account("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", "500000", 6));
        h.add(&json!({"account": {"data": ["base64", "AAAA"]}}));
        assert_eq!(
            h.listed(),
            vec![
                json!({"mint": "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", "symbol": "USDC",
                       "amount": 2000000, "decimals": 6, "uiAmount": 2.0}),
                json!({"mint": "Mint3", "amount": 7, "decimals": 0, "uiAmount": 7.0}),
            ]
        );
    }
}
