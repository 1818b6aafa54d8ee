use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};
use shared::address::Address;
use shared::solana::programs::TOKEN_PROGRAM;

use crate::{Chain, ChainError, RpcChain};

type Handler = Arc<dyn Fn(&Value) -> Response + Send + Sync>;

/// Serves `handler` as a JSON-RPC endpoint; returns its URL.
async fn stand_in(handler: impl Fn(&Value) -> Response + Send + Sync + 'static) -> String {
    let handler: Handler = Arc::new(handler);
    let app = axum::Router::new().route("/", post(move |Json(req): Json<Value>| async move { handler(&req) }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}

fn result(req: &Value, result: Value) -> Response {
    Json(json!({"jsonrpc": "2.0", "id": req["id"], "result": result})).into_response()
}

#[cfg(feature = "send")]
fn error(req: &Value, code: i64, message: &str, data: Value) -> Response {
    Json(json!({"jsonrpc": "2.0", "id": req["id"], "error": {"code": code, "message": message, "data": data}}))
        .into_response()
}

fn client(url: &str) -> RpcChain {
    RpcChain::new(url, Duration::from_secs(5)).unwrap()
}

#[tokio::test]
async fn reads_typed_answers() {
    let mut token_account = vec![0u8; 165];
    token_account[64..72].copy_from_slice(&1_234_567u64.to_le_bytes());
    let data = shared::b64::encode(&token_account);
    let url = stand_in(move |req| match req["method"].as_str().unwrap() {
        "getLatestBlockhash" => {
            assert_eq!(req["params"][0]["commitment"], "confirmed");
            result(req, json!({"context": {"slot": 1}, "value": {"blockhash": "SURFNETxSAFEHASHxxxxxxxxxxxxxxxxxxxxxxxxxx1", "lastValidBlockHeight": 151}}))
        }
        "getAccountInfo" if req["params"][0] == "11111111111111111111111111111111" => {
            result(req, json!({"context": {"slot": 1}, "value": null}))
        }
        "getAccountInfo" => result(
            req,
            json!({"context": {"slot": 1}, "value": {"lamports": 2039280, "owner": TOKEN_PROGRAM.to_string(),
                   "data": [data, "base64"], "executable": false, "rentEpoch": 0, "space": 165}}),
        ),
        "getTransaction" => result(req, Value::Null),
        "getBlockHeight" => result(req, json!(42)),
        "getSlot" => {
            assert_eq!(req["params"][0]["commitment"], "confirmed");
            result(req, json!(77))
        }
        other => panic!("unexpected {other}"),
    })
    .await;
    let chain = client(&url);
    let latest = chain.latest_blockhash().await.unwrap();
    assert_eq!(latest.last_valid_block_height, 151);
    assert_eq!(Address(latest.blockhash).to_string(), "SURFNETxSAFEHASHxxxxxxxxxxxxxxxxxxxxxxxxxx1");
    assert_eq!(chain.account(&Address([0; 32])).await.unwrap(), None);
    assert_eq!(chain.token_balance(&Address([0; 32])).await.unwrap(), None);
    assert_eq!(chain.token_balance(&Address([1; 32])).await.unwrap(), Some(1_234_567));
    assert_eq!(chain.transaction("x").await.unwrap(), None);
    assert_eq!(chain.block_height().await.unwrap(), 42);
    assert_eq!(chain.slot().await.unwrap(), 77);
}

#[cfg(feature = "send")]
#[tokio::test]
async fn sorts_send_errors_and_never_echoes_the_request() {
    let url = stand_in(|req| {
        let tx = req["params"][0].as_str().unwrap();
        assert_eq!(req["params"][1], json!({"encoding": "base64", "skipPreflight": false, "preflightCommitment": "confirmed"}));
        match tx {
            "AQID" => error(req, -32002, "Transaction verification failed for transaction Internal error: \"Transaction error: This transaction has already been processed\"", Value::Null),
            "BAUG" => error(req, -32002, "Transaction simulation failed: Blockhash not found", json!({"err": "BlockhashNotFound"})),
            _ => error(req, -32002, "Transaction simulation failed: This program may not be used for executing instructions", json!({"err": "InvalidProgramForExecution"})),
        }
    })
    .await;
    let chain = client(&url);
    assert_eq!(chain.send_transaction(&[1, 2, 3]).await, Err(ChainError::AlreadyProcessed));
    assert_eq!(chain.send_transaction(&[4, 5, 6]).await, Err(ChainError::BlockhashNotFound));
    let other = chain.send_transaction(&[7, 8, 9]).await.unwrap_err();
    assert!(matches!(other, ChainError::Rpc { code: -32002, .. }));
    assert!(!other.to_string().contains("BwgJ"), "the request's base64 must not appear: {other}");
}

#[tokio::test]
async fn malformed_answers() {
    let url = stand_in(|req| match req["method"].as_str().unwrap() {
        "getBalance" => Json(json!({"jsonrpc": "2.0", "id": 999_999, "result": {"value": 1}})).into_response(),
        "getBlockHeight" => result(req, json!("tall")),
        "getSlot" => result(req, json!(1)),
        "getMinimumBalanceForRentExemption" => Json(json!({"jsonrpc": "2.0", "id": req["id"]})).into_response(),
        "getTransaction" => result(req, json!({"slot": 1, "transaction": ["AAAA", "base64"], "meta": null})),
        _ => (StatusCode::INTERNAL_SERVER_ERROR, "upstream exploded").into_response(),
    })
    .await;
    let chain = client(&url);
    let malformed = |r: Result<_, ChainError>| matches!(r, Err(ChainError::Malformed { .. }));
    assert!(malformed(chain.balance(&Address([1; 32])).await.map(|_| ())));
    assert!(malformed(chain.block_height().await.map(|_| ())));
    assert!(malformed(chain.minimum_balance_for_rent_exemption(0).await.map(|_| ())));
    assert!(malformed(chain.transaction("x").await.map(|_| ())));
    assert_eq!(
        chain.account(&Address([1; 32])).await,
        Err(ChainError::Unreachable("HTTP 500 Internal Server Error".into()))
    );
}

#[tokio::test]
async fn unreachable_hides_the_url() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let chain = client(&format!("http://127.0.0.1:{port}/?api-key=secret-key"));
    let e = chain.block_height().await.unwrap_err();
    assert!(matches!(e, ChainError::Unreachable(_)), "{e:?}");
    assert!(!e.to_string().contains("secret-key"), "{e}");
    assert!(matches!(RpcChain::new("not a url", Duration::from_secs(1)), Err(ChainError::Invalid(_))));
}
