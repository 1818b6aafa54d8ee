//! The five tools of encrypted mode against their stand-ins (what is sent, what comes back,
//! missing credentials, upstream failures, bad arguments).

use std::time::Duration;

use agent::tool::{Args, Tool, ToolError};
use agent::tools::solana_balance::SolanaBalance;
use agent::tools::swap_quote::SwapQuote;
use agent::tools::token_price::TokenPrice;
use agent::tools::trending_tokens::TrendingTokens;
use agent::tools::web_search::WebSearch;
use agent::tools::{ToolContext, Upstream, upstream_client};
use serde_json::{Value, json};
use standins::{brave, coingecko, jupiter, solana_rpc};
use zeroize::Zeroizing;

const SOL: &str = "So11111111111111111111111111111111111111112";
const USDC: &str = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
const JUP: &str = "JUPyiwrYJFskUPiHa7hkeR8VUtAeFoSYbKedZNsDvCN";
const BONK: &str = "DezXAZ8z7PnrnRJjz3wXBoRgixCa6xjnB7YaB1pPB263";
/// RAY: a real mint the stand-in has no price for.
const RAY: &str = "4k3Dyjzvzp8eMZWUXbBCjEvwSkkk59S5iCNLY3QrkX6R";

fn args(v: Value) -> Args {
    serde_json::from_value(v).expect("test arguments are an object")
}

fn context(upstreams: &[(&str, &str, Option<&str>)]) -> ToolContext {
    ToolContext {
        http: upstream_client(Duration::from_secs(5)),
        upstreams: upstreams
            .iter()
            .map(|(id, base, key)| {
                let upstream = Upstream {
                    base_url: base.to_string(),
                    api_key: key.map(|k| Zeroizing::new(k.to_string())),
                    awaiting_bundle: false,
                };
                (id.to_string(), upstream)
            })
            .collect(),
    }
}

fn upstream_ctx(id: &str, base: &str, key: Option<&str>) -> ToolContext {
    context(&[(id, base, key)])
}

fn no_upstreams() -> ToolContext {
    context(&[])
}

/// A loopback URL nothing listens on.
async fn closed_port_url() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    drop(listener);
    format!("http://{addr}")
}

fn upstream_message(result: Result<Value, ToolError>) -> String {
    match result {
        Err(ToolError::Upstream(message)) => message,
        other => panic!("expected an upstream error, got {other:?}"),
    }
}

fn is_bad_arguments<T>(result: &Result<T, ToolError>) -> bool {
    matches!(result, Err(ToolError::BadArguments(_)))
}

// ---------------------------------------------------------------------------------------
// web_search (brave)

#[tokio::test]
async fn web_search_sends_query_count_and_token_and_returns_compact_results() {
    let (brave, recorder) = brave::start("brave-token-1").await;
    let tool = WebSearch::new(&upstream_ctx("brave", &brave.base_url, Some("brave-token-1")));
    let out = tool.call(&args(json!({"query": "rust async", "count": 3}))).await.expect("search works");
    assert_eq!(
        out,
        json!({"query": "rust async", "results": [
            {"title": "rust async explained", "url": "https://result1.example/rust-async",
             "description": "About rust async & more, number 1."},
            {"title": "Result 2 for rust async", "url": "https://result2.example/rust-async",
             "description": "About rust async & more, number 2."},
            {"title": "Result 3 for rust async", "url": "https://result3.example/rust-async",
             "description": "About rust async & more, number 3."},
        ]})
    );
    let seen = recorder.requests();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].param("q"), Some("rust async"));
    assert_eq!(seen[0].param("count"), Some("3"));
    assert_eq!(seen[0].token.as_deref(), Some("brave-token-1"));

    let out = tool.call(&args(json!({"query": "solana", "count": "7"}))).await.expect("string count works");
    assert_eq!(out["results"].as_array().map(Vec::len), Some(7));
    let out = tool.call(&args(json!({"query": "solana"}))).await.expect("default count");
    assert_eq!(out["results"].as_array().map(Vec::len), Some(5));
    assert_eq!(recorder.requests()[2].param("count"), Some("5"));
}

#[tokio::test]
async fn web_search_without_upstream_or_key_is_not_configured() {
    let (brave, recorder) = brave::start("brave-token-1").await;
    let query = args(json!({"query": "x"}));
    let no_key = WebSearch::new(&upstream_ctx("brave", &brave.base_url, None));
    assert_eq!(no_key.call(&query).await, Err(ToolError::NotConfigured("web_search")));
    let nothing = WebSearch::new(&no_upstreams());
    assert_eq!(nothing.call(&query).await, Err(ToolError::NotConfigured("web_search")));
    assert!(recorder.requests().is_empty());
}

#[tokio::test]
async fn web_search_reports_upstream_failures_without_their_bodies() {
    let (brave, recorder) = brave::start("brave-token-1").await;
    let query = args(json!({"query": "x"}));
    let wrong_key = WebSearch::new(&upstream_ctx("brave", &brave.base_url, Some("wrong")));
    assert_eq!(upstream_message(wrong_key.call(&query).await), "brave refused the subscription token (HTTP 401)");

    let tool = WebSearch::new(&upstream_ctx("brave", &brave.base_url, Some("brave-token-1")));
    recorder.fail_with(Some(brave::Failure::Status(500)));
    let message = upstream_message(tool.call(&query).await);
    assert_eq!(message, "brave answered HTTP 500");
    assert!(!message.contains("brave-internal-detail"));
    recorder.fail_with(Some(brave::Failure::Status(429)));
    assert_eq!(upstream_message(tool.call(&query).await), "brave rate limit reached (HTTP 429)");
    recorder.fail_with(Some(brave::Failure::Garbage));
    assert_eq!(upstream_message(tool.call(&query).await), "brave answered with invalid JSON");

    let gone = WebSearch::new(&upstream_ctx("brave", &closed_port_url().await, Some("k")));
    assert_eq!(upstream_message(gone.call(&query).await), "brave is unreachable");
}

#[tokio::test]
async fn web_search_refuses_bad_arguments_before_calling() {
    let (brave, recorder) = brave::start("brave-token-1").await;
    let tool = WebSearch::new(&upstream_ctx("brave", &brave.base_url, Some("brave-token-1")));
    for bad in [
        json!({}),
        json!({"query": "  "}),
        json!({"query": 5}),
        json!({"query": "x", "count": 11}),
        json!({"query": "x", "count": 0}),
        json!({"query": "x", "count": "many"}),
        json!({"query": "x".repeat(401)}),
    ] {
        assert!(is_bad_arguments(&tool.call(&args(bad.clone())).await), "{bad}");
    }
    assert!(recorder.requests().is_empty());
}

// ---------------------------------------------------------------------------------------
// token_price (jupiter)

#[tokio::test]
async fn token_price_resolves_symbols_and_reports_missing_mints() {
    let (jup, recorder) = jupiter::start(Some("jup-key")).await;
    let tool = TokenPrice::new(&upstream_ctx("jupiter", &jup.base_url, Some("jup-key")));
    let out = tool.call(&args(json!({"mints": format!("SOL, usdc,{RAY}, sol")}))).await.expect("prices");
    assert_eq!(
        out,
        json!({
            "prices": [
                {"mint": SOL, "symbol": "SOL", "usdPrice": 147.48, "priceChange24h": 1.29, "decimals": 9,
                 "blockId": jupiter::SLOT},
                {"mint": USDC, "symbol": "USDC", "usdPrice": 0.9999, "priceChange24h": 1.29, "decimals": 6,
                 "blockId": jupiter::SLOT},
            ],
            "missing": [RAY]
        })
    );
    let seen = recorder.requests();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].path, "/price/v3");
    assert_eq!(seen[0].param("ids"), Some(format!("{SOL},{USDC},{RAY}").as_str()));
    assert_eq!(seen[0].api_key.as_deref(), Some("jup-key"));

    let out = tool.call(&args(json!({"mints": [JUP, "$BONK"]}))).await.expect("array form");
    assert_eq!(out["prices"][0]["usdPrice"], 0.52);
    assert_eq!(out["prices"][1]["symbol"], "BONK");
    assert_eq!(out["prices"][1]["usdPrice"], 0.0000231);
    assert!(out.get("missing").is_none());
}

#[tokio::test]
async fn token_price_works_keyless_and_fails_cleanly() {
    let (lite, lite_recorder) = jupiter::start(None).await;
    let keyless = TokenPrice::new(&upstream_ctx("jupiter", &lite.base_url, None));
    let out = keyless.call(&args(json!({"mints": "JUP"}))).await.expect("no key needed on lite");
    assert_eq!(out["prices"][0]["mint"], JUP);
    assert_eq!(lite_recorder.requests()[0].api_key, None);

    let (jup, recorder) = jupiter::start(Some("jup-key")).await;
    let query = args(json!({"mints": "SOL"}));
    let missing_key = TokenPrice::new(&upstream_ctx("jupiter", &jup.base_url, None));
    assert_eq!(upstream_message(missing_key.call(&query).await), "jupiter refused the API key (HTTP 401)");
    assert_eq!(TokenPrice::new(&no_upstreams()).call(&query).await, Err(ToolError::NotConfigured("token_price")));

    let tool = TokenPrice::new(&upstream_ctx("jupiter", &jup.base_url, Some("jup-key")));
    recorder.fail_with(Some(jupiter::Failure::Status(502)));
    let message = upstream_message(tool.call(&query).await);
    assert_eq!(message, "jupiter answered HTTP 502");
    assert!(!message.contains("jupiter-internal-detail"));
    recorder.fail_with(Some(jupiter::Failure::Garbage));
    assert_eq!(upstream_message(tool.call(&query).await), "jupiter answered with invalid JSON");
}

#[tokio::test]
async fn token_price_refuses_bad_mints_before_calling() {
    let (jup, recorder) = jupiter::start(None).await;
    let tool = TokenPrice::new(&upstream_ctx("jupiter", &jup.base_url, None));
    let too_many: Vec<String> = (0..21).map(|i| if i % 2 == 0 { SOL.into() } else { USDC.into() }).collect();
    for bad in [
        json!({}),
        json!({"mints": ""}),
        json!({"mints": "DOGE"}),
        json!({"mints": "So1111111111111111111111111111111111111111O"}),
        json!({"mints": [SOL, 7]}),
        json!({"mints": 7}),
        json!({"mints": too_many}),
    ] {
        assert!(is_bad_arguments(&tool.call(&args(bad.clone())).await), "{bad}");
    }
    assert!(recorder.requests().is_empty());
}

// ---------------------------------------------------------------------------------------
// swap_quote (jupiter)

#[tokio::test]
async fn swap_quote_sends_the_documented_query_and_summarizes_the_route() {
    let (jup, recorder) = jupiter::start(Some("jup-key")).await;
    let tool = SwapQuote::new(&upstream_ctx("jupiter", &jup.base_url, Some("jup-key")));
    let out = tool
        .call(&args(json!({"inputMint": "SOL", "outputMint": USDC, "amount": "1000000000", "slippageBps": 100})))
        .await
        .expect("quote");
    let seen = recorder.requests();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].path, "/swap/v1/quote");
    assert_eq!(seen[0].param("inputMint"), Some(SOL));
    assert_eq!(seen[0].param("outputMint"), Some(USDC));
    assert_eq!(seen[0].param("amount"), Some("1000000000"));
    assert_eq!(seen[0].param("slippageBps"), Some("100"));
    assert_eq!(seen[0].api_key.as_deref(), Some("jup-key"));
    // 1 SOL at 147.48 USD into USDC at 0.9999 USD.
    assert_eq!(
        out,
        json!({
            "inputMint": SOL, "inputSymbol": "SOL", "outputMint": USDC, "outputSymbol": "USDC",
            "inUiAmount": 1.0, "outUiAmount": 147.494749,
            "inAmount": 1_000_000_000u64, "outAmount": 147_494_749u64, "otherAmountThreshold": 146_019_801u64,
            "swapMode": "ExactIn", "slippageBps": 100, "contextSlot": jupiter::SLOT, "priceImpactPct": 0.0001,
            "route": [{"label": "Whirlpool", "percent": 100, "inputMint": SOL, "outputMint": USDC,
                       "inAmount": 1_000_000_000u64, "outAmount": 147_494_749u64}]
        })
    );

    let out =
        tool.call(&args(json!({"inputMint": "jup", "outputMint": "BONK", "amount": 1_000_000}))).await.expect("quote");
    assert_eq!(recorder.requests()[1].param("slippageBps"), Some("50"));
    assert_eq!(out["route"].as_array().map(Vec::len), Some(2));
    assert_eq!(out["route"][0]["outputMint"], USDC);
    assert_eq!(out["route"][1]["label"], "Meteora DLMM");
    assert_eq!(out["inputMint"], JUP);
    assert_eq!(out["outputMint"], BONK);
}

#[tokio::test]
async fn swap_quote_reports_jupiter_error_codes_and_missing_configuration() {
    let (jup, recorder) = jupiter::start(None).await;
    let tool = SwapQuote::new(&upstream_ctx("jupiter", &jup.base_url, None));
    let untradable = args(json!({"inputMint": RAY, "outputMint": "USDC", "amount": "5"}));
    assert_eq!(upstream_message(tool.call(&untradable).await), "jupiter answered HTTP 400 (TOKEN_NOT_TRADABLE)");
    recorder.fail_with(Some(jupiter::Failure::Status(500)));
    let message = upstream_message(tool.call(&untradable).await);
    assert_eq!(message, "jupiter answered HTTP 500");
    assert!(!message.contains("jupiter-internal-detail"));
    assert_eq!(SwapQuote::new(&no_upstreams()).call(&untradable).await, Err(ToolError::NotConfigured("swap_quote")));
}

#[tokio::test]
async fn swap_quote_refuses_bad_arguments_before_calling() {
    let (jup, recorder) = jupiter::start(None).await;
    let tool = SwapQuote::new(&upstream_ctx("jupiter", &jup.base_url, None));
    for bad in [
        json!({"inputMint": "SOL", "amount": "1"}),
        json!({"inputMint": "SOL", "outputMint": "SOL", "amount": "1"}),
        json!({"inputMint": "SOL", "outputMint": SOL, "amount": "1"}),
        json!({"inputMint": "SOL", "outputMint": "USDC", "amount": "1.5"}),
        json!({"inputMint": "SOL", "outputMint": "USDC", "amount": "0"}),
        json!({"inputMint": "SOL", "outputMint": "USDC", "amount": -1}),
        json!({"inputMint": "SOL", "outputMint": "USDC"}),
        json!({"inputMint": "SOL", "outputMint": "USDC", "amount": "1", "slippageBps": 10_001}),
        json!({"inputMint": "SOL", "outputMint": "nope", "amount": "1"}),
    ] {
        assert!(is_bad_arguments(&tool.call(&args(bad.clone())).await), "{bad}");
    }
    assert!(recorder.requests().is_empty());
}

// ---------------------------------------------------------------------------------------
// trending_tokens (coingecko)

#[tokio::test]
async fn trending_tokens_returns_compact_coins_and_sends_the_demo_key() {
    let (gecko, recorder) = coingecko::start(Some("cg-key")).await;
    let base = format!("{}/api/v3", gecko.base_url);
    let tool = TrendingTokens::new(&upstream_ctx("coingecko", &base, Some("cg-key")));
    let out = tool.call(&args(json!({}))).await.expect("trending");
    let coins = out["coins"].as_array().expect("coins");
    assert_eq!(coins.len(), 10);
    assert_eq!(
        coins[0],
        json!({"id": "coin-1", "name": "Coin 1", "symbol": "C1", "marketCapRank": 101, "trendingRank": 1,
               "priceUsd": 0.5, "change24hPct": -7.5, "marketCapUsd": 10_000_000.0, "volume24hUsd": 1_500.0})
    );
    assert_eq!(coins[9]["id"], "coin-10");
    assert_eq!(recorder.requests(), vec![coingecko::Seen { demo_key: Some("cg-key".into()), pro_key: None }]);

    let out = tool.call(&args(json!({"limit": 3}))).await.expect("limited");
    assert_eq!(out["coins"].as_array().map(Vec::len), Some(3));
    let out = tool.call(&args(json!({"limit": 15}))).await.expect("all");
    assert_eq!(out["coins"][14]["trendingRank"], 15);
}

#[tokio::test]
async fn trending_tokens_handles_missing_configuration_failures_and_bad_limits() {
    let (gecko, recorder) = coingecko::start(Some("cg-key")).await;
    let base = format!("{}/api/v3", gecko.base_url);
    let none = args(json!({}));
    let keyless = TrendingTokens::new(&upstream_ctx("coingecko", &base, None));
    assert_eq!(upstream_message(keyless.call(&none).await), "coingecko refused the API key (HTTP 401)");
    assert_eq!(
        TrendingTokens::new(&no_upstreams()).call(&none).await,
        Err(ToolError::NotConfigured("trending_tokens"))
    );

    let tool = TrendingTokens::new(&upstream_ctx("coingecko", &base, Some("cg-key")));
    for bad in [json!({"limit": 16}), json!({"limit": 0}), json!({"limit": "lots"}), json!({"limit": -2})] {
        assert!(is_bad_arguments(&tool.call(&args(bad.clone())).await), "{bad}");
    }
    let before = recorder.requests().len();
    recorder.fail_with(Some(coingecko::Failure::Status(503)));
    let message = upstream_message(tool.call(&none).await);
    assert_eq!(message, "coingecko answered HTTP 503");
    assert!(!message.contains("coingecko-internal-detail"));
    recorder.fail_with(Some(coingecko::Failure::Garbage));
    assert_eq!(upstream_message(tool.call(&none).await), "coingecko answered with invalid JSON");
    assert_eq!(recorder.requests().len(), before + 2);

    let (public, _) = coingecko::start(None).await;
    let public_base = format!("{}/api/v3", public.base_url);
    let out =
        TrendingTokens::new(&upstream_ctx("coingecko", &public_base, None)).call(&none).await.expect("public API");
    assert_eq!(out["coins"][0]["id"], "coin-1");
}

// ---------------------------------------------------------------------------------------
// solana_balance (solanaRpc)

#[tokio::test]
async fn solana_balance_sums_tokens_by_mint_and_skips_empty_accounts() {
    let (rpc, recorder) = solana_rpc::start().await;
    let tool = SolanaBalance::new(&upstream_ctx("solanaRpc", &rpc.base_url, None));
    let out = tool.call(&args(json!({"address": solana_rpc::WALLET}))).await.expect("balance");
    assert_eq!(
        out,
        json!({
            "address": solana_rpc::WALLET,
            "lamports": 2_500_000_000u64,
            "sol": 2.5,
            "tokens": [
                {"mint": USDC, "symbol": "USDC", "amount": 1_500_000, "decimals": 6, "uiAmount": 1.5},
                {"mint": JUP, "symbol": "JUP", "amount": 12_345_678, "decimals": 6, "uiAmount": 12.345678},
                {"mint": solana_rpc::PYUSD, "amount": 3_250_000, "decimals": 6, "uiAmount": 3.25},
            ],
            "slot": solana_rpc::SLOT
        })
    );
    let mut seen = recorder.requests();
    seen.sort_by_key(|s| s.params.to_string());
    assert_eq!(seen.len(), 3);
    let balance = seen.iter().find(|s| s.method == "getBalance").expect("getBalance was called");
    assert_eq!(balance.params, json!([solana_rpc::WALLET, {"commitment": "confirmed"}]));
    for program in [solana_rpc::TOKEN_PROGRAM, solana_rpc::TOKEN_2022_PROGRAM] {
        let expected =
            json!([solana_rpc::WALLET, {"programId": program}, {"encoding": "jsonParsed", "commitment": "confirmed"}]);
        assert!(
            seen.iter().any(|s| s.method == "getTokenAccountsByOwner" && s.params == expected),
            "getTokenAccountsByOwner for {program}"
        );
    }

    let empty = "11111111111111111111111111111111";
    let out = tool.call(&args(json!({"address": empty}))).await.expect("empty wallet");
    assert_eq!(out["lamports"], 0);
    assert_eq!(out["sol"], 0.0);
    assert_eq!(out["tokens"], json!([]));
}

#[tokio::test]
async fn solana_balance_turns_rpc_errors_into_upstream_errors() {
    let (rpc, recorder) = solana_rpc::start().await;
    let tool = SolanaBalance::new(&upstream_ctx("solanaRpc", &rpc.base_url, None));
    let wallet = args(json!({"address": solana_rpc::WALLET}));
    recorder.fail_with(Some(solana_rpc::Failure::Rpc(-32005)));
    let message = upstream_message(tool.call(&wallet).await);
    assert!(message.starts_with("solana RPC error -32005 on "), "{message}");
    assert!(!message.contains(solana_rpc::FAILURE_DETAIL));
    recorder.fail_with(Some(solana_rpc::Failure::Status(502)));
    let message = upstream_message(tool.call(&wallet).await);
    assert_eq!(message, "solana RPC answered HTTP 502");
    recorder.fail_with(Some(solana_rpc::Failure::Garbage));
    assert_eq!(upstream_message(tool.call(&wallet).await), "solana RPC answered with invalid JSON");
    assert_eq!(
        SolanaBalance::new(&no_upstreams()).call(&wallet).await,
        Err(ToolError::NotConfigured("solana_balance"))
    );
}

#[tokio::test]
async fn solana_balance_substitutes_the_credential_into_the_url() {
    let (rpc, recorder) = solana_rpc::start().await;
    // The stand-in serves `/`; the key lands in the query string and the call still works.
    let base = format!("{}/?api-key={{apiKey}}", rpc.base_url);
    let tool = SolanaBalance::new(&upstream_ctx("solanaRpc", &base, Some("rpc-key")));
    let out = tool.call(&args(json!({"address": solana_rpc::WALLET}))).await.expect("balance");
    assert_eq!(out["lamports"], 2_500_000_000u64);
    assert_eq!(recorder.requests().len(), 3);
}

#[tokio::test]
async fn solana_balance_refuses_bad_addresses_before_calling() {
    let (rpc, recorder) = solana_rpc::start().await;
    let tool = SolanaBalance::new(&upstream_ctx("solanaRpc", &rpc.base_url, None));
    for bad in [
        json!({}),
        json!({"address": ""}),
        json!({"address": 42}),
        json!({"address": "not-an-address"}),
        json!({"address": "0OIl0OIl0OIl0OIl0OIl0OIl0OIl0OIl"}),
        json!({"address": "1111111111111111111111111111111"}),
        json!({"address": "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz"}),
    ] {
        assert!(is_bad_arguments(&tool.call(&args(bad.clone())).await), "{bad}");
    }
    assert!(recorder.requests().is_empty());
}
