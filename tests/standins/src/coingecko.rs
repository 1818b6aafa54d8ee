//! Stand-in for CoinGecko's `GET /api/v3/search/trending`.
//!
//! `start(demo_key)` serves on loopback and returns `(Running, Recorder)`; the `coingecko`
//! upstream's base URL is `format!("{}/api/v3", running.base_url)`, as with the real host.
//! With `Some(key)` the request must carry `x-cg-demo-api-key: key` (401 with CoinGecko's
//! `{"status":{"error_code":..}}` body otherwise); with `None` the key is optional, as on the
//! public API. The answer has the real shape: 15 `coins[].item` (ids `coin-1`..`coin-15`,
//! `score` 0..14, `data.price` a number, `data.market_cap` a `"$1,234"` string), plus `nfts`
//! and `categories`. `Recorder::requests` lists every request's key headers;
//! `Recorder::fail_with` makes later requests fail.

use axum::Json;
use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Value, json};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    pub demo_key: Option<String>,
    pub pro_key: Option<String>,
}

pub use crate::Failure;

/// What the stand-in was asked, and how it should fail.
pub type Recorder = crate::Recorder<Seen>;

/// The body of a forced failure; tests check it never reaches the model.
pub const FAILURE_BODY: &str = r#"{"status":{"error_code":500,"error_message":"coingecko-internal-detail-c0de"}}"#;

#[derive(Clone)]
struct App {
    demo_key: Option<String>,
    recorder: Recorder,
}

pub async fn start(demo_key: Option<&str>) -> (crate::Running, Recorder) {
    let recorder = Recorder::default();
    let app = App { demo_key: demo_key.map(str::to_string), recorder: recorder.clone() };
    let router = Router::new().route("/api/v3/search/trending", get(trending)).with_state(app);
    (crate::serve(router).await, recorder)
}

fn header(headers: &HeaderMap, name: &str) -> Option<String> {
    headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_string)
}

async fn trending(State(app): State<App>, headers: HeaderMap) -> Response {
    let seen = Seen { demo_key: header(&headers, "x-cg-demo-api-key"), pro_key: header(&headers, "x-cg-pro-api-key") };
    app.recorder.push(seen.clone());
    if let Some(expected) = &app.demo_key
        && seen.demo_key.as_deref() != Some(expected.as_str())
    {
        let body = json!({"status": {"error_code": 10002, "error_message": "API Key Missing or invalid"}});
        return (StatusCode::UNAUTHORIZED, Json(body)).into_response();
    }
    if let Some(failure) = app.recorder.forced_failure(FAILURE_BODY) {
        return failure;
    }
    let coins: Vec<Value> = (1..=15u64)
        .map(|i| {
            json!({"item": {
                "id": format!("coin-{i}"),
                "coin_id": 1000 + i,
                "name": format!("Coin {i}"),
                "symbol": format!("C{i}"),
                "market_cap_rank": 100 + i,
                "thumb": "https://coin-images.coingecko.com/thumb.png",
                "small": "https://coin-images.coingecko.com/small.png",
                "large": "https://coin-images.coingecko.com/large.png",
                "slug": format!("coin-{i}"),
                "price_btc": 0.0000012 * i as f64,
                "score": i - 1,
                "data": {
                    "price": 0.5 * i as f64,
                    "price_btc": format!("{:.10}", 0.0000012 * i as f64),
                    "price_change_percentage_24h": {"usd": 2.5 * i as f64 - 10.0, "eur": 2.4 * i as f64},
                    "market_cap": format!("${},000,000", 10 * i),
                    "market_cap_btc": "1234.5",
                    "total_volume": format!("${},500", i),
                    "total_volume_btc": "12.3",
                    "sparkline": "https://www.coingecko.com/coins/1/sparkline.svg",
                    "content": null
                }
            }})
        })
        .collect();
    Json(json!({
        "coins": coins,
        "nfts": [{"id": "nft-1", "name": "Some NFT", "symbol": "NFT", "thumb": "x", "nft_contract_id": 1,
                  "native_currency_symbol": "eth", "floor_price_in_native_currency": 1.2,
                  "floor_price_24h_percentage_change": 3.4}],
        "categories": [{"id": 1, "name": "Meme", "market_cap_1h_change": 0.5, "slug": "meme", "coins_count": 300}]
    }))
    .into_response()
}
