//! What the relay does with each kind of answer from an enclave, in process (issue 29): the
//! relay's router on a real SQLite store, and in front of it a fake enclave on a loopback port
//! whose every answer the test sets. The fake plays a faulty or hostile enclave, which a real
//! one cannot be made to be. A paid `/tee/process` call is charged before it is forwarded;
//! whatever the enclave answers short of a good reply with a receipt that verifies, the call is
//! given back to the base unit, nothing is committed, and the client sees the contract's code.

use crate::common;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::extract::connect_info::MockConnectInfo;
use axum::http::{Request, StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::{get, post};
use relay::config::RelayConfig;
use relay::enclaves::EnclavePool;
use relay::state::{App, AppState};
use serde_json::{Value, json};
use shared::envelope::Envelope;
use tower::ServiceExt;

const KEY: &str = "sk_svc_enclave_answers_key";
/// The fake enclave's X25519 public key (nothing is ever decrypted with it).
const ENCLAVE_KEY: [u8; 32] = [9; 32];
const PRICE: i64 = 1_000;
const FUNDS: i64 = 10 * PRICE;

/// What the fake answers `POST /process` with, and how often it was asked.
#[derive(Default)]
struct Script {
    answer: Mutex<(u16, String)>,
    asked: Mutex<u32>,
}

async fn fake_enclave(script: Arc<Script>) -> (SocketAddr, tokio::task::JoinHandle<()>) {
    let public_key = json!({
        "publicKey": shared::b64::encode(ENCLAVE_KEY),
        "publicKeySha256": hex::encode(shared::sha256(&ENCLAVE_KEY)),
        "algorithm": "x25519-hkdf-sha256-chacha20poly1305",
        "teeType": "dev",
    });
    let routes = Router::new()
        .route("/public-key", get(move || async move { axum::Json(public_key) }))
        .route(
            "/process",
            post(|State(script): State<Arc<Script>>| async move {
                *script.asked.lock().unwrap() += 1;
                let (status, body) = script.answer.lock().unwrap().clone();
                (StatusCode::from_u16(status).unwrap(), [(header::CONTENT_TYPE, "application/json")], body)
                    .into_response()
            }),
        )
        .with_state(script);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, routes).await;
    });
    (addr, task)
}

struct World {
    router: Router,
    db: common::Db,
    script: Arc<Script>,
    _enclave: Option<tokio::task::JoinHandle<()>>,
}

/// The relay in front of the fake enclave.
async fn world() -> World {
    let script = Arc::new(Script::default());
    let (addr, enclave) = fake_enclave(script.clone()).await;
    relay_before(&format!("http://{addr}"), script, Some(enclave)).await
}

async fn relay_before(enclave_url: &str, script: Arc<Script>, enclave: Option<tokio::task::JoinHandle<()>>) -> World {
    let config: RelayConfig = serde_json::from_value(json!({
        "apiKeys": [KEY],
        "rateLimits": {"perAddressPerMinute": 0, "perKeyPerMinute": 0},
        "teeProcessPricePerCall": PRICE,
    }))
    .unwrap();
    let db = common::sqlite().await;
    let enclaves = Arc::new(EnclavePool::new(&[enclave_url.to_string()], Duration::from_secs(5), None, 4));
    enclaves.refresh().await;
    let key = ed25519_dalek::SigningKey::from_bytes(&[7; 32]);
    let state = App::new(AppState::new(&config, db.store.clone(), key, enclaves).unwrap());
    let key_id = relay::accounts::key_id(KEY);
    relay::billing::balances::credit(&db.store, &key_id, "usdc", FUNDS, "admin", "test", 1).await.unwrap();
    let router = relay::router::router(state).layer(MockConnectInfo(SocketAddr::from(([127, 0, 0, 1], 40_000))));
    World { router, db, script, _enclave: enclave }
}

impl World {
    fn answer(&self, status: u16, body: Value) {
        *self.script.answer.lock().unwrap() = (status, body.to_string());
    }

    /// One paid `/tee/process` call with an envelope sealed (in form) to the fake's key.
    async fn process(&self) -> (u16, Value) {
        let envelope = Envelope {
            enc: [1; 32],
            nonce: [2; 16],
            ciphertext: vec![3; 64],
            key_id: Some(shared::sha256(&ENCLAVE_KEY)),
        };
        let body = json!({"encryptedPrompt": envelope.to_json_string()}).to_string();
        let request = Request::builder()
            .method("POST")
            .uri("/tee/process")
            .header(header::AUTHORIZATION, format!("Bearer {KEY}"))
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(body))
            .unwrap();
        let response = self.router.clone().oneshot(request).await.unwrap();
        let status = response.status().as_u16();
        let bytes = axum::body::to_bytes(response.into_body(), 1 << 20).await.unwrap();
        (status, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
    }

    async fn balance(&self) -> i64 {
        let key_id = relay::accounts::key_id(KEY);
        let balances = relay::billing::balances::balances(&self.db.store, &key_id).await.unwrap();
        balances.iter().find(|(c, _)| c == "usdc").map_or(0, |(_, amount)| *amount)
    }

    /// Every usage row's status, and how many receipts were committed.
    async fn books(&self) -> (Vec<String>, i64) {
        use sqlx::Row;
        let pool = self.db.store.pool();
        let rows = sqlx::query("SELECT status FROM usage_records ORDER BY created_at").fetch_all(pool).await.unwrap();
        let statuses = rows.iter().map(|r| r.get::<String, _>("status")).collect();
        let receipts: i64 = sqlx::query("SELECT COUNT(*) AS n FROM receipts").fetch_one(pool).await.unwrap().get("n");
        (statuses, receipts)
    }
}

/// Each refusal: the client's status and code, the enclave asked once, the call given back.
#[tokio::test]
async fn every_refusal_of_the_enclave_gives_the_call_back() {
    let w = world().await;
    let cases: [(u16, Value, u16, &str); 5] = [
        // A code of the enclave's own passes through, with its status.
        (409, json!({"error": "replay_detected", "message": "this envelope was already used"}), 409, "replay_detected"),
        (502, json!({"error": "gpu_not_attested", "message": "GPU 0: measurement 3"}), 502, "gpu_not_attested"),
        // A code the enclave may not send (the relay's own, or unknown) is `enclave_error`.
        (402, json!({"error": "insufficient_balance", "message": "pay more"}), 402, "enclave_error"),
        (418, json!({"error": "made_up", "message": "?"}), 418, "enclave_error"),
        // A body that is not a refusal at all.
        (500, json!(["not", "an", "object"]), 502, "enclave_error"),
    ];
    for (n, (status, body, expect_status, expect_code)) in cases.into_iter().enumerate() {
        w.answer(status, body);
        let (got, answer) = w.process().await;
        assert_eq!((got, answer["error"].as_str()), (expect_status, Some(expect_code)), "case {n}: {answer}");
        assert_eq!(answer["success"], false, "case {n}: /tee/process refusals carry `success: false`: {answer}");
        assert_eq!(*w.script.asked.lock().unwrap(), n as u32 + 1);
        assert_eq!(w.balance().await, FUNDS, "case {n}: the call was given back");
    }
    let (statuses, receipts) = w.books().await;
    assert_eq!(statuses, vec!["refunded"; 5]);
    assert_eq!(receipts, 0);
}

/// A 200 whose receipt is not the enclave's (or not for this ciphertext) commits nothing and
/// costs nothing.
#[tokio::test]
async fn a_reply_without_a_receipt_that_verifies_commits_nothing() {
    let w = world().await;
    w.answer(200, json!({"success": true, "encryptedResponse": "AAAA", "receipt": {"signature": "forged"}}));
    let (status, answer) = w.process().await;
    assert_eq!((status, answer["error"].as_str()), (502, Some("enclave_error")), "{answer}");
    assert_eq!(w.balance().await, FUNDS);
    assert_eq!(w.books().await, (vec!["refunded".to_string()], 0));
}

/// An enclave that does not answer (nothing listens where it should be): `tee_unreachable`,
/// and the call given back.
#[tokio::test]
async fn an_enclave_that_does_not_answer_costs_nothing() {
    let w = relay_before("http://127.0.0.1:9", Arc::default(), None).await;
    let (status, answer) = w.process().await;
    assert_eq!((status, answer["error"].as_str()), (502, Some("tee_unreachable")), "{answer}");
    assert_eq!(w.balance().await, FUNDS);
    assert_eq!(w.books().await, (vec!["refunded".to_string()], 0));
}
