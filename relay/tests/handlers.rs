//! The relay's routes in process (issue 29): each request goes through the whole router, the
//! layer every request passes included, with `tower::ServiceExt::oneshot`, on a real SQLite
//! store. No enclave, chain or router is behind it (addresses nothing listens on), so these are
//! the checks made before any of them is asked: the caller's key, every missing and malformed
//! field with its contract code, the JSON shape of every refusal. The end-to-end suite keeps
//! the flows, the real peers and the crash tests.

use crate::common;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::connect_info::MockConnectInfo;
use axum::http::{Request, header};
use relay::config::RelayConfig;
use relay::enclaves::EnclavePool;
use relay::state::{App, AppState};
use serde_json::{Value, json};
use shared::address::Address;
use tower::ServiceExt;

const KEY: &str = "sk_svc_in_process_test_key";
/// Nothing listens here: a call that reaches it would fail, and no test below makes one.
const NOWHERE: &str = "http://127.0.0.1:9";

const USDC: Address = Address([3; 32]);
const TOKEN: Address = Address([4; 32]);

struct Relay {
    router: Router,
    db: common::Db,
}

/// A relay with `config` over the defaults, the test key configured; with `swaps`, the swap
/// side configured with two mints (a 6-decimal stablecoin and a 9-decimal token).
async fn relay(swaps: bool, config: Value) -> Relay {
    relay_on(common::sqlite().await, swaps, config).await
}

async fn relay_on(db: common::Db, swaps: bool, config: Value) -> Relay {
    let mut whole = json!({"apiKeys": [KEY], "rateLimits": {"perAddressPerMinute": 0, "perKeyPerMinute": 0}});
    if swaps {
        whole["agents"] = json!({
            "rpcUrl": NOWHERE, "routerUrl": NOWHERE,
            "mints": {
                USDC.to_string(): {"symbol": "USDC", "decimals": 6, "buckets": [1_000_000, 10_000_000, 100_000_000],
                                   "minAmount": 100_000, "maxAmount": 1_000_000_000},
                TOKEN.to_string(): {"symbol": "TKN", "decimals": 9, "buckets": [1_000_000_000],
                                    "minAmount": 1_000_000, "maxAmount": 1_000_000_000_000u64},
            },
        });
    }
    if let (Some(base), Some(extra)) = (whole.as_object_mut(), config.as_object()) {
        base.extend(extra.clone());
    }
    let config: RelayConfig = serde_json::from_value(whole).unwrap();
    let enclaves = Arc::new(EnclavePool::new(&[NOWHERE.to_string()], Duration::from_secs(1), None, 4));
    let key = ed25519_dalek::SigningKey::from_bytes(&[7; 32]);
    let state = App::new(AppState::new(&config, db.store.clone(), key, enclaves).unwrap());
    let router = relay::router::router(state).layer(MockConnectInfo(SocketAddr::from(([127, 0, 0, 1], 40_000))));
    Relay { router, db }
}

impl Relay {
    /// Status, content type and JSON body (`Null` when the body is not JSON).
    async fn send(&self, method: &str, path: &str, key: Option<&str>, body: Option<&str>) -> (u16, String, Value) {
        let mut request = Request::builder().method(method).uri(path);
        if let Some(key) = key {
            request = request.header(header::AUTHORIZATION, format!("Bearer {key}"));
        }
        if body.is_some() {
            request = request.header(header::CONTENT_TYPE, "application/json");
        }
        let request = request.body(body.map_or_else(Body::empty, |b| Body::from(b.to_string()))).unwrap();
        let response = self.router.clone().oneshot(request).await.unwrap();
        let status = response.status().as_u16();
        let content_type =
            response.headers().get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or_default().to_string();
        let bytes = axum::body::to_bytes(response.into_body(), 1 << 20).await.unwrap();
        (status, content_type, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
    }

    async fn call(&self, method: &str, path: &str, key: Option<&str>, body: Option<&str>) -> (u16, Value) {
        let (status, _, body) = self.send(method, path, key, body).await;
        (status, body)
    }

    /// A wallet row of the test key, as a created one is stored (its key sealed elsewhere).
    async fn wallet(&self, id: &str, address: Address) {
        let wallet = relay::wallets::records::Wallet {
            id: id.into(),
            key_id: relay::accounts::key_id(KEY),
            address,
            object_id: "0".repeat(32),
            owner_pubkey: None,
            network: "localnet".into(),
            webhook_url: "https://agent.example/hook".into(),
            webhook_secret: "whsec_test".into(),
            created_at: 1,
        };
        let created =
            relay::wallets::records::Operation { kind: "created", event_type: "wallet.created", data: json!({}) };
        relay::wallets::records::insert(&self.db.store, &wallet, created, 1).await.unwrap();
    }
}

/// The status and code, and every one of `names` in the message.
fn expect(got: (u16, Value), status: u16, code: &str, names: &[&str]) {
    let (s, body) = got;
    assert_eq!((s, body["error"].as_str()), (status, Some(code)), "{body}");
    let message = body["message"].as_str().unwrap_or_default();
    for n in names {
        assert!(message.contains(n), "`{message}` should name {n}");
    }
}

#[tokio::test]
async fn every_refusal_is_json_with_its_code() {
    let r = relay(false, json!({})).await;
    for (method, path, status, code) in [
        ("GET", "/no/such/route", 404, "not_found"),
        ("DELETE", "/api/v1/balance", 405, "method_not_allowed"),
        ("GET", "/api/v1/balance", 401, "unauthorized"),
        ("GET", "/api/v1/models", 401, "unauthorized"),
        ("GET", "/api/v1/usage", 401, "unauthorized"),
        ("GET", "/api/v1/keys", 401, "unauthorized"),
        ("POST", "/api/v1/chat/completions", 401, "unauthorized"),
    ] {
        let (s, content_type, body) = r.send(method, path, None, None).await;
        assert!(content_type.starts_with("application/json"), "{method} {path}: {content_type}");
        assert_eq!((s, body["error"].as_str()), (status, Some(code)), "{method} {path}: {body}");
        assert!(body["message"].as_str().is_some_and(|m| !m.is_empty()), "{body}");
    }
    expect(r.call("GET", "/api/v1/balance", Some("sk_svc_unknown"), None).await, 401, "unauthorized", &[]);
    // The key's account: its (empty) balance, and the usage page's bounds.
    let (status, balance) = r.call("GET", "/api/v1/balance", Some(KEY), None).await;
    assert_eq!((status, balance["keyId"].as_str()), (200, Some(relay::accounts::key_id(KEY).as_str())), "{balance}");
    for limit in ["0", "201", "x"] {
        let path = format!("/api/v1/usage?limit={limit}");
        expect(r.call("GET", &path, Some(KEY), None).await, 400, "bad_request", &["limit"]);
    }
    // A body past the route's cap is a JSON 413.
    let big = format!(r#"{{"prompt": "{}"}}"#, "x".repeat(3 << 20));
    let (status, content_type, body) = r.send("POST", "/agent", None, Some(&big)).await;
    assert_eq!((status, body["error"].as_str()), (413, Some("payload_too_large")), "{body}");
    assert!(content_type.starts_with("application/json"));
    r.db.finish().await;
}

#[tokio::test]
async fn the_agent_body_names_each_fault() {
    let r = relay(false, json!({})).await;
    for (body, code) in [
        ("{}", "missing_prompt"),
        (r#"{"prompt": "  "}"#, "missing_prompt"),
        (r#"{"prompt": 5}"#, "invalid_field"),
        (r#"{"prompt": "x", "useTools": "yes"}"#, "invalid_field"),
        (r#"{"prompt": "x", "chatId": "a b"}"#, "invalid_field"),
        (r#"{"prompt": "x", "reasoning": "chain"}"#, "unknown_reasoning"),
        (r#"{"prompt": "x", "braidOptions": {"forceGrdId": "nope"}}"#, "invalid_braid_options"),
        (r#"{"prompt": "x", "encryptedPrompt": "{}"}"#, "invalid_field"),
        (r#"{"encryptedPrompt": "{}", "chatId": "c1"}"#, "invalid_field"),
        ("not json", "invalid_field"),
    ] {
        let (status, answer) = r.call("POST", "/agent", None, Some(body)).await;
        assert_eq!((status, answer["error"].as_str()), (400, Some(code)), "{body}: {answer}");
        // `/agent` answers carry `success: false` and what is left of the free messages.
        assert_eq!(answer["success"], false, "{answer}");
    }
    r.db.finish().await;
}

#[tokio::test]
async fn every_swap_route_names_missing_fields_and_refuses_malformed_ones() {
    let r = relay(true, json!({})).await;
    let key = Some(KEY);
    let (usdc, token) = (USDC.to_string(), TOKEN.to_string());

    // Quote.
    let quote = |q: &str| format!("/agents/v1/quote?{q}");
    expect(
        r.call("GET", &quote(""), key, None).await,
        400,
        "missing_required_fields",
        &["fromMint", "toMint", "amount"],
    );
    let only_from = r.call("GET", &quote(&format!("fromMint={usdc}")), key, None).await;
    assert!(!only_from.1["message"].as_str().unwrap().contains("fromMint"), "{}", only_from.1);
    expect(only_from, 400, "missing_required_fields", &["toMint", "amount"]);
    let q = |from: &str, to: &str, amount: &str| quote(&format!("fromMint={from}&toMint={to}&amount={amount}"));
    expect(r.call("GET", &q("not-base58!", &token, "1000000"), key, None).await, 400, "invalid_mint", &["fromMint"]);
    let unknown = Address([9; 32]).to_string();
    expect(r.call("GET", &q(&usdc, &unknown, "1000000"), key, None).await, 400, "invalid_mint", &["toMint"]);
    expect(r.call("GET", &q(&usdc, &usdc, "1000000"), key, None).await, 400, "invalid_mint", &["differ"]);
    for bad in ["0", "1.5", "-3", "01", "abc", "18446744073709551616"] {
        expect(r.call("GET", &q(&usdc, &token, bad), key, None).await, 400, "invalid_amount", &["amount"]);
    }
    expect(
        r.call("GET", &q(&usdc, &token, "99999"), key, None).await,
        400,
        "amount_out_of_bounds",
        &["100000", "USDC"],
    );
    expect(
        r.call("GET", &q(&usdc, &token, "1000000001"), key, None).await,
        400,
        "amount_out_of_bounds",
        &["1000000000"],
    );
    let slippage = format!("{}&slippageBps=10001", q(&usdc, &token, "1000000"));
    expect(r.call("GET", &slippage, key, None).await, 400, "invalid_field", &["slippageBps"]);
    // No key and no x402 on this relay.
    expect(r.call("GET", &q(&usdc, &token, "1000000"), None, None).await, 401, "unauthorized", &[]);

    // Anonymity set: its checks, and the buckets of a mint nobody swapped yet.
    let set = |q: &str| format!("/agents/v1/anonymity-set?{q}");
    expect(r.call("GET", &set(""), None, None).await, 400, "missing_required_fields", &["mint"]);
    expect(r.call("GET", &set("mint=xyz"), None, None).await, 400, "invalid_mint", &["mint"]);
    expect(
        r.call("GET", &set(&format!("mint={usdc}&windowHours=0")), None, None).await,
        400,
        "invalid_field",
        &["windowHours"],
    );
    expect(r.call("GET", &set(&format!("mint={usdc}&amount=x")), None, None).await, 400, "invalid_amount", &["amount"]);
    let (status, empty) = r.call("GET", &set(&format!("mint={usdc}&windowHours=1")), None, None).await;
    assert_eq!(status, 200, "{empty}");
    let counts: Vec<(&str, i64)> = empty["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| (b["amount"].as_str().unwrap(), b["count"].as_i64().unwrap()))
        .collect();
    assert_eq!(counts, [("1000000", 0), ("10000000", 0), ("100000000", 0)]);

    // One-shot start: every missing field at once, then each malformed one.
    let oneshot = "/agents/v1/swaps/oneshot";
    expect(
        r.call("POST", oneshot, key, Some("{}")).await,
        400,
        "missing_required_fields",
        &["payerPubkey", "fromMint", "toMint", "amount", "destinationPubkey"],
    );
    let payer = Address([1; 32]).to_string();
    let good = json!({"payerPubkey": payer, "fromMint": usdc, "toMint": token, "amount": "10000000",
                      "destinationPubkey": Address([2; 32]).to_string(), "slippageBps": 50});
    let with = |k: &str, v: Value| {
        let mut b = good.clone();
        b[k] = v;
        b.to_string()
    };
    for (field, value, code, named) in [
        ("payerPubkey", json!("0xabc"), "invalid_field", "payerPubkey"),
        ("destinationPubkey", json!(payer), "invalid_field", "fresh destination"),
        ("amount", json!("ten"), "invalid_amount", "amount"),
        ("amount", json!([1]), "invalid_field", "amount"),
        ("amount", json!("1"), "amount_out_of_bounds", "amount"),
        ("slippageBps", json!(-1), "invalid_field", "slippageBps"),
        ("toMint", json!(unknown), "invalid_mint", "toMint"),
    ] {
        let body = with(field, value);
        expect(r.call("POST", oneshot, key, Some(&body)).await, 400, code, &[named]);
    }
    expect(r.call("POST", oneshot, key, Some("not json")).await, 400, "bad_request", &[]);

    // Execute, sessions, attestations of sessions that do not exist.
    let nobody = "00000000-0000-4000-8000-000000000000";
    let execute = format!("/agents/v1/swaps/oneshot/{nobody}/execute");
    expect(r.call("POST", &execute, None, Some("{}")).await, 400, "missing_required_fields", &["fundingTxSig"]);
    expect(
        r.call("POST", &execute, None, Some(r#"{"fundingTxSig": "xyz"}"#)).await,
        400,
        "invalid_field",
        &["fundingTxSig"],
    );
    let sig = json!({"fundingTxSig": bs58::encode([1u8; 64]).into_string()}).to_string();
    expect(r.call("POST", &execute, None, Some(&sig)).await, 404, "not_found", &["session"]);
    let malformed = "/agents/v1/swaps/oneshot/not-a-uuid/execute";
    expect(r.call("POST", malformed, None, Some(&sig)).await, 404, "not_found", &[]);
    expect(r.call("GET", &format!("/agents/v1/sessions/{nobody}"), None, None).await, 404, "not_found", &["session"]);
    r.db.finish().await;
}

#[tokio::test]
async fn a_relay_without_swaps_says_so_after_naming_missing_fields() {
    let r = relay(false, json!({})).await;
    let q = format!("/agents/v1/quote?fromMint={USDC}&toMint={TOKEN}&amount=1");
    expect(r.call("GET", &q, Some(KEY), None).await, 501, "swaps_not_configured", &[]);
    expect(r.call("GET", "/agents/v1/quote", None, None).await, 400, "missing_required_fields", &["fromMint"]);
    let session = "/agents/v1/sessions/00000000-0000-4000-8000-000000000000";
    expect(r.call("GET", session, None, None).await, 501, "swaps_not_configured", &[]);
    let create = r#"{"webhookUrl": "https://agent.example/hook"}"#;
    expect(r.call("POST", "/agents/v1/wallets", Some(KEY), Some(create)).await, 501, "swaps_not_configured", &[]);
    r.db.finish().await;
}

#[tokio::test]
async fn bad_input_on_the_wallet_routes_has_its_code() {
    wallet_routes(common::sqlite().await, common::sqlite().await).await;
}

#[tokio::test]
async fn bad_input_on_the_wallet_routes_has_its_code_on_postgres() {
    let (Some(one), Some(two)) = (common::postgres("handlers wallets").await, common::postgres("handlers other").await)
    else {
        return;
    };
    wallet_routes(one, two).await;
}

/// The wallet routes' refusals, on `db`; `other_db` holds a second relay's store.
async fn wallet_routes(db: common::Db, other_db: common::Db) {
    let r = relay_on(db, true, json!({})).await;
    let key = Some(KEY);
    // Create: the body, then where its webhooks may go.
    for (body, code) in [
        ("{}", "missing_required_fields"),
        ("not json", "bad_request"),
        (r#"{"webhookUrl": 5}"#, "invalid_field"),
        (r#"{"webhookUrl": "ftp://agent.example/hook"}"#, "invalid_field"),
        (r#"{"webhookUrl": "not a url"}"#, "invalid_field"),
        (r#"{"webhookUrl": "http://10.0.0.1/hook"}"#, "invalid_field"),
        (r#"{"webhookUrl": "http://169.254.169.254/latest"}"#, "invalid_field"),
        (r#"{"webhookUrl": "http://[::1]:8080/"}"#, "invalid_field"),
        (r#"{"webhookUrl": "http://127.0.0.1:1/hook"}"#, "invalid_field"),
        (r#"{"webhookUrl": "https://agent.example/hook", "ownerPubkey": "not-base58!"}"#, "invalid_field"),
    ] {
        expect(r.call("POST", "/agents/v1/wallets", key, Some(body)).await, 400, code, &[]);
    }
    expect(r.call("POST", "/agents/v1/wallets", None, Some("{}")).await, 401, "unauthorized", &[]);

    // A wallet of this key (stored as a created one is), and one of another key.
    let id = "0f8e4a2c-1b3d-4e5f-8a9b-0c1d2e3f4a5b";
    let address = Address([5; 32]);
    r.wallet(id, address).await;
    let payer = Address([6; 32]).to_string();
    let (usdc, fund) = (USDC.to_string(), format!("/agents/v1/wallets/{id}/fund-intent"));
    let missing = r.call("POST", &fund, key, Some("{}")).await;
    expect(missing, 400, "missing_required_fields", &["mint, amount, payerPubkey"]);
    for (body, code) in [
        (json!({"mint": "bad!", "amount": "1", "payerPubkey": payer}), "invalid_mint"),
        (json!({"mint": payer, "amount": "1", "payerPubkey": payer}), "invalid_mint"),
        (json!({"mint": usdc, "amount": "0", "payerPubkey": payer}), "invalid_amount"),
        (json!({"mint": usdc, "amount": "-5", "payerPubkey": payer}), "invalid_amount"),
        (json!({"mint": usdc, "amount": "1", "payerPubkey": "x"}), "invalid_field"),
        (json!({"mint": usdc, "amount": "1", "payerPubkey": address.to_string()}), "invalid_field"),
    ] {
        expect(r.call("POST", &fund, key, Some(&body.to_string())).await, 400, code, &[]);
    }
    // The money routes read their bodies with the same codes.
    let dest = Address([8; 32]).to_string();
    for (op, body, code) in [
        ("encrypt", json!({"mint": usdc}), "missing_required_fields"),
        ("encrypt", json!({"mint": usdc, "amount": "01"}), "invalid_amount"),
        ("withdraw", json!({"mint": usdc, "amount": "5"}), "missing_required_fields"),
        ("withdraw", json!({"mint": usdc, "amount": "5", "destinationPubkey": "x"}), "invalid_field"),
        ("shield", json!({"mint": usdc, "amount": "5", "destinationPubkey": dest}), "invalid_amount"),
        (
            "shield",
            json!({"mint": usdc, "amount": "1000000", "destinationPubkey": address.to_string()}),
            "invalid_field",
        ),
        (
            "swap",
            json!({"fromMint": usdc, "toMint": usdc, "amount": "1000000", "destinationPubkey": dest}),
            "invalid_mint",
        ),
        (
            "swap",
            json!({"fromMint": usdc, "toMint": TOKEN.to_string(), "amount": "1000000",
                        "destinationPubkey": address.to_string()}),
            "invalid_field",
        ),
    ] {
        let path = format!("/agents/v1/wallets/{id}/{op}");
        expect(r.call("POST", &path, key, Some(&body.to_string())).await, 400, code, &[]);
    }
    for q in [
        "balance",
        "balance?mints=",
        "balance?mints=bad!",
        "audit?limit=0",
        "audit?limit=201",
        "audit?offset=-1",
        "audit?limit=x",
        "webhooks?limit=0",
    ] {
        let (status, answer) = r.call("GET", &format!("/agents/v1/wallets/{id}/{q}"), key, None).await;
        assert_eq!(status, 400, "{q}: {answer}");
    }
    let many = vec![usdc.clone(); 21].join(",");
    expect(
        r.call("GET", &format!("/agents/v1/wallets/{id}/balance?mints={many}"), key, None).await,
        400,
        "invalid_field",
        &[],
    );
    // A wallet id that cannot exist, or no such wallet: 404; another key's wallet: 403.
    expect(r.call("GET", "/agents/v1/wallets/../audit", key, None).await, 404, "not_found", &[]);
    let nobody = "00000000-0000-4000-8000-000000000000";
    expect(r.call("GET", &format!("/agents/v1/wallets/{nobody}/audit"), key, None).await, 404, "not_found", &[]);
    let other = relay_on(other_db, true, json!({"apiKeys": [KEY, "sk_svc_another_key"]})).await;
    other.wallet(id, address).await;
    let (status, answer) =
        other.call("GET", &format!("/agents/v1/wallets/{id}/audit"), Some("sk_svc_another_key"), None).await;
    assert_eq!((status, answer["error"].as_str()), (403, Some("forbidden")), "{answer}");
    let (status, audit) = other.call("GET", &format!("/agents/v1/wallets/{id}/audit"), key, None).await;
    assert_eq!((status, audit["entries"][0]["kind"].as_str()), (200, Some("created")), "{audit}");
    r.db.finish().await;
    other.db.finish().await;
}

async fn challenge(r: &Relay, wallet: &str) -> Value {
    r.call("POST", "/api/v1/auth/challenge", None, Some(&json!({"wallet": wallet}).to_string())).await.1
}

async fn verify(r: &Relay, body: Value) -> (u16, Value) {
    r.call("POST", "/api/v1/auth/verify", None, Some(&body.to_string())).await
}

/// A signature over `message` as the sign-in route reads it (base58).
fn signed(key: &ed25519_dalek::SigningKey, message: &str) -> String {
    use ed25519_dalek::Signer;
    shared::ledger::format_id(&key.sign(message.as_bytes()).to_bytes())
}

#[tokio::test]
async fn bad_sign_ins_are_refused_and_a_challenge_is_spent_once() {
    let r = relay(false, json!({})).await;
    let wallet_key = ed25519_dalek::SigningKey::from_bytes(&[11; 32]);
    let wallet = Address(wallet_key.verifying_key().to_bytes()).to_string();
    let ch = challenge(&r, &wallet).await;
    let (nonce, message) = (ch["nonce"].clone(), ch["message"].as_str().unwrap().to_string());
    // Signed by another key, or over another text: 401, and the challenge is spent.
    let other = ed25519_dalek::SigningKey::from_bytes(&[12; 32]);
    let by_other = json!({"wallet": wallet, "nonce": nonce, "signature": signed(&other, &message)});
    expect(verify(&r, by_other).await, 401, "unauthorized", &[]);
    let good_late = json!({"wallet": wallet, "nonce": nonce, "signature": signed(&wallet_key, &message)});
    expect(verify(&r, good_late).await, 401, "unauthorized", &[]);
    let over_other = json!({"wallet": wallet, "nonce": nonce, "signature": signed(&wallet_key, "another text")});
    expect(verify(&r, over_other).await, 401, "unauthorized", &[]);
    // A fresh challenge signed right: a key, once.
    let ch = challenge(&r, &wallet).await;
    let good = json!({"wallet": wallet, "nonce": ch["nonce"], "signature": signed(&wallet_key, ch["message"].as_str().unwrap())});
    let (status, issued) = verify(&r, good.clone()).await;
    assert_eq!(status, 201, "{issued}");
    assert!(issued["apiKey"].as_str().is_some_and(|k| k.starts_with("sk_svc_")), "{issued}");
    expect(verify(&r, good).await, 401, "unauthorized", &[]);
    // Malformed challenges and answers.
    let off_curve =
        shared::address::receipt_address(&shared::keys::PromptHash([1; 32]), &shared::address::default_program_id());
    for body in [json!({"wallet": "not-base58!"}), json!({"wallet": off_curve.to_string()}), json!({})] {
        expect(r.call("POST", "/api/v1/auth/challenge", None, Some(&body.to_string())).await, 400, "bad_request", &[]);
    }
    let short = json!({"wallet": wallet, "nonce": "x", "signature": "short"});
    expect(verify(&r, short).await, 400, "bad_request", &[]);
    r.db.finish().await;
}

#[tokio::test]
async fn the_models_list_matches_the_contract() {
    let r = relay(false, json!({})).await;
    let (status, body) = r.call("GET", "/api/v1/models", Some(KEY), None).await;
    assert_eq!(status, 200, "{body}");
    let data = body["data"].as_array().unwrap();
    let ids: Vec<&str> = data.iter().map(|m| m["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["svc-gpu:gpt-oss:20b", "svc-gpu:gemma4:31b"]);
    assert_eq!((data[0]["contextLength"].as_u64(), data[0]["status"].as_str()), (Some(8192), Some("Live")));
    assert_eq!((data[1]["contextLength"].as_u64(), data[1]["status"].as_str()), (Some(262_144), Some("Soon")));
    assert_eq!(data[0]["pricePerMillionTokens"], json!({"amount": "200000", "currency": "usdc"}));
    r.db.finish().await;
}
