//! x402 pay-per-call end to end: the real relay and enclave binaries, the real small model, a
//! facilitator stand-in that really checks the Solana payment transaction, and the real npm
//! client (`@x402/fetch` + `@x402/svm`, `tests/x402-peer/pay.mjs`) building and signing its
//! payments against a stand-in Solana RPC. The prompt is sealed to the enclave here and the
//! reply opened here, as `client/src/chat.rs` does.
//!
//! Needs `npm ci --prefix tests/x402-peer` (tools/test.sh runs it).

use std::path::PathBuf;

use e2e::sealed::{chat_body, open, seal};
use e2e::{Stack, StackOptions};
use ed25519_dalek::SigningKey;
use rand_core::OsRng;
use serde_json::{Value, json};
use shared::address::Address;
use standins::facilitator::{ExactPayment, Facilitator};

const PATH: &str = "/api/v1/x402/chat/completions";
/// The merchant wallet (payTo).
const PAY_TO: &str = "2wKupLR9q6wXYppw8Gr2NvWxKBUqm4PPJKkQfoxHDBg4";
const USDC: &str = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
const MAINNET: &str = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp";
/// The paying wallet's secret key (the npm client signs with it).
const PAYER_SEED: [u8; 32] = [0x42; 32];
const DESCRIPTION: &str = "Private AI inference: one end-to-end encrypted call";

struct Fixture {
    stack: Stack,
    facilitator: Facilitator,
    facilitator_url: String,
    rpc_url: String,
    _servers: Vec<standins::Running>,
}

impl Fixture {
    fn url(&self) -> String {
        format!("{}{PATH}", self.stack.relay_url)
    }
    fn settles(&self) -> usize {
        self.facilitator.requests_to("/settle").len()
    }
    fn verifies(&self) -> usize {
        self.facilitator.requests_to("/verify").len()
    }
}

async fn fixture() -> Fixture {
    let (facilitator_server, facilitator) = standins::facilitator::start().await;
    let (rpc_server, _rpc) = standins::solana_rpc::start().await;
    let facilitator_url = facilitator_server.base_url.clone();
    let options = StackOptions {
        relay: json!({"x402": {"facilitatorUrl": facilitator_url, "payTo": PAY_TO}}),
        ..StackOptions::default()
    };
    let stack = tokio::task::spawn_blocking(move || Stack::start_with(options)).await.unwrap();
    Fixture {
        stack,
        facilitator,
        facilitator_url,
        rpc_url: rpc_server.base_url.clone(),
        _servers: vec![facilitator_server, rpc_server],
    }
}

fn payer() -> SigningKey {
    SigningKey::from_bytes(&PAYER_SEED)
}

fn payer_address() -> String {
    Address(payer().verifying_key().to_bytes()).to_string()
}

/// Runs `tests/x402-peer/pay.mjs` (the real npm client) and returns its JSON report.
async fn pay(f: &Fixture, body: &Value, version: u8, extra: &[&str]) -> Value {
    let peer = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/x402-peer"));
    assert!(
        peer.join("node_modules/@x402/fetch").exists(),
        "the npm client is not installed: run `npm ci --prefix tests/x402-peer` (tools/test.sh does)"
    );
    let body_file = f.stack.dir.path().join(format!("body-{}.json", rand_core::RngCore::next_u64(&mut OsRng)));
    std::fs::write(&body_file, body.to_string()).unwrap();
    let output = tokio::process::Command::new("node")
        .arg(peer.join("pay.mjs"))
        .args(["--url", &f.url(), "--rpc", &f.rpc_url, "--key", &hex::encode(PAYER_SEED)])
        .arg("--body-file")
        .arg(&body_file)
        .args(["--x402-version", &version.to_string()])
        .args(extra)
        .output()
        .await
        .expect("node runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "pay.mjs failed: {stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_str(&stdout).unwrap_or_else(|_| panic!("pay.mjs printed no JSON: {stdout}"))
}

fn decode_header(value: &str) -> Value {
    serde_json::from_slice(&shared::b64::decode(value).unwrap()).unwrap()
}

async fn post(f: &Fixture, body: &Value, headers: &[(&str, &str)]) -> (u16, reqwest::header::HeaderMap, Value) {
    let mut request = reqwest::Client::new().post(f.url()).json(body);
    for (k, v) in headers {
        request = request.header(*k, *v);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let body = response.json().await.unwrap_or(Value::Null);
    (status, headers, body)
}

async fn payment_rows(stack: &Stack) -> Vec<(String, Option<String>, Option<String>)> {
    let url = format!("sqlite://{}?mode=ro", stack.relay_data_dir().join("relay.sqlite3").display());
    sqlx::any::install_default_drivers();
    let pool = sqlx::AnyPool::connect(&url).await.unwrap();
    sqlx::query_as("SELECT status, payer, tx_signature FROM x402_payments ORDER BY created_at, rowid")
        .fetch_all(&pool)
        .await
        .unwrap()
}

/// The v1 requirements the relay must offer.
fn offered_v1(f: &Fixture) -> Value {
    json!({
        "scheme": "exact", "network": "solana", "maxAmountRequired": "5000", "asset": USDC, "payTo": PAY_TO,
        "resource": f.url(), "description": DESCRIPTION, "mimeType": "application/json",
        "maxTimeoutSeconds": 60, "extra": {"feePayer": f.facilitator.fee_payer()},
    })
}

fn offered_v2(f: &Fixture) -> Value {
    json!({
        "scheme": "exact", "network": MAINNET, "amount": "5000", "asset": USDC, "payTo": PAY_TO,
        "maxTimeoutSeconds": 60, "extra": {"feePayer": f.facilitator.fee_payer()},
    })
}

/// A v1 `X-PAYMENT` header built here (not by the npm client) for `amount`.
fn handmade_payment(f: &Fixture, amount: u64, memo: &[u8]) -> String {
    let mut payment =
        ExactPayment::new(f.facilitator.fee_payer_bytes(), payer(), Address::parse(PAY_TO).unwrap().0, amount);
    payment.memo = memo.to_vec();
    let tx = shared::b64::encode(payment.build());
    let payload = json!({"x402Version": 1, "scheme": "exact", "network": "solana", "payload": {"transaction": tx}});
    shared::b64::encode(payload.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn challenge_manifest_and_refusals_before_payment() {
    let f = fixture().await;
    let sealed = seal(&f.stack, "hello").await;

    // No payment: 402 with the v1 body and the v2 header, both naming the same terms.
    let (status, headers, body) = post(&f, &chat_body(&sealed, "gpt-oss:20b"), &[]).await;
    assert_eq!(status, 402, "{body}");
    assert_eq!(body["x402Version"], 1);
    assert_eq!(body["error"], "payment_required");
    assert_eq!(body["accepts"], json!([offered_v1(&f)]));
    let v2 = decode_header(headers["payment-required"].to_str().unwrap());
    assert_eq!(
        v2,
        json!({"x402Version": 2, "error": "payment_required",
               "resource": {"url": f.url(), "description": DESCRIPTION, "mimeType": "application/json"},
               "accepts": [offered_v2(&f)], "extensions": {}})
    );
    assert_eq!(headers["access-control-expose-headers"], "PAYMENT-REQUIRED");
    assert_eq!(f.facilitator.requests_to("/supported").len(), 1, "the fee payer is asked once and cached");

    // Missing or bad fields: 400 before any payment is asked for or looked at.
    let (status, _, body) = post(&f, &json!({}), &[]).await;
    assert_eq!(status, 400);
    assert_eq!(
        body,
        json!({"error": "missing_required_fields", "message": "missing: encryptedPrompt, model, maxTokens"})
    );
    let header = handmade_payment(&f, 5000, b"00112233445566778899aabbccddeeff");
    let partial = json!({"encryptedPrompt": sealed.envelope.to_json_string(), "model": "gpt-oss:20b"});
    let (status, _, body) = post(&f, &partial, &[("X-PAYMENT", &header)]).await;
    assert_eq!((status, body["error"].as_str()), (400, Some("missing_required_fields")));
    assert_eq!(body["message"], "missing: maxTokens");
    let bad = json!({"encryptedPrompt": "not an envelope", "model": "gpt-oss:20b", "maxTokens": 8});
    let (status, _, body) = post(&f, &bad, &[]).await;
    assert_eq!((status, body["error"].as_str()), (400, Some("invalid_envelope")));
    assert_eq!(f.verifies(), 0);

    // A payment header that is not a payment: 400 with the terms.
    let (status, _, body) = post(&f, &chat_body(&sealed, "gpt-oss:20b"), &[("X-PAYMENT", "bm90IGpzb24=")]).await;
    assert_eq!(status, 400);
    assert_eq!(body["error"], "invalid_payload");
    assert_eq!(body["accepts"], json!([offered_v1(&f)]));

    // A payment of the wrong amount, built here: the facilitator's /verify refuses it.
    let short = handmade_payment(&f, 4000, b"00112233445566778899aabbccddeeff");
    let (status, _, body) = post(&f, &chat_body(&sealed, "gpt-oss:20b"), &[("X-PAYMENT", &short)]).await;
    assert_eq!(status, 402, "{body}");
    assert_eq!(body["error"], "invalid_exact_svm_payload_amount_mismatch");
    assert_eq!(f.verifies(), 1);
    assert_eq!(f.settles(), 0);
    assert!(payment_rows(&f.stack).await.is_empty(), "a refused payment leaves no reservation");

    // The facilitator fails: 502, nothing kept.
    f.facilitator.fail_with(Some(500));
    let good = handmade_payment(&f, 5000, b"ffeeddccbbaa99887766554433221100");
    let (status, _, body) = post(&f, &chat_body(&sealed, "gpt-oss:20b"), &[("X-PAYMENT", &good)]).await;
    assert_eq!((status, body["error"].as_str()), (502, Some("facilitator_error")));
    assert!(!body.to_string().contains(standins::facilitator::FAILURE_DETAIL));
    assert!(payment_rows(&f.stack).await.is_empty());
    f.facilitator.fail_with(None);

    // The manifest lists the priced route with its terms and the configured facilitator.
    let manifest: Value =
        reqwest::get(format!("{}/.well-known/x402", f.stack.relay_url)).await.unwrap().json().await.unwrap();
    assert_eq!(manifest["version"], 1);
    let base = &f.stack.relay_url;
    let priced = json!([
        f.url(),
        format!("{base}/agent"),
        format!("{base}/agents/v1/quote"),
        format!("{base}/agents/v1/swaps/oneshot")
    ]);
    assert_eq!(manifest["resources"], priced);
    assert_eq!(manifest["x402"]["enabled"], true);
    assert_eq!(manifest["x402"]["facilitator"], f.facilitator_url.as_str());
    assert_eq!(manifest["x402"]["payTo"], PAY_TO);
    assert_eq!(manifest["x402"]["asset"], USDC);
    assert_eq!(manifest["x402"]["network"], "solana");
    assert_eq!(manifest["x402"]["caip2"], MAINNET);
    assert_eq!(manifest["x402"]["paymentHeaders"], json!({"v1": "X-PAYMENT", "v2": "PAYMENT-SIGNATURE"}));
    let route = &manifest["routes"][0];
    assert_eq!(route["resource"], f.url().as_str());
    assert_eq!(route["method"], "POST");
    assert_eq!(route["price"], "5000");
    assert_eq!(route["priceInUnits"], 0.005);
    assert_eq!(route["asset"], USDC);
    assert_eq!(route["payTo"], PAY_TO);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn npm_client_pays_with_v2_and_v1_and_replays_are_refused() {
    let f = fixture().await;
    for (version, n) in [(2u8, 1usize), (1, 2)] {
        let sealed = seal(&f.stack, "Say hello.").await;
        let out = pay(&f, &chat_body(&sealed, "gpt-oss:20b"), version, &[]).await;

        // The client read our 402 with the SDK's own schemas.
        assert_eq!(out["challenge"]["status"], 402);
        assert_eq!(out["challenge"]["schemaValid"], json!({"v1": true, "v2": true}), "{out}");
        let (header_name, settlement_name, network) = match version {
            2 => ("PAYMENT-SIGNATURE", "PAYMENT-RESPONSE", MAINNET),
            _ => ("X-PAYMENT", "X-PAYMENT-RESPONSE", "solana"),
        };
        assert_eq!(out["paymentHeader"]["name"], header_name);

        // Paid: 200 with the contract's fields; the reply opens with our key.
        assert_eq!(out["status"], 200, "{out}");
        let body = &out["body"];
        let reply = open(&sealed, body);
        assert_eq!(reply.model, "gpt-oss:20b");
        let usage = &body["usage"];
        assert!(usage["prompt_tokens"].as_u64().unwrap() > 0);
        assert_eq!(
            usage["total_tokens"].as_u64().unwrap(),
            usage["prompt_tokens"].as_u64().unwrap() + usage["completion_tokens"].as_u64().unwrap()
        );
        assert_eq!(body["cost"], 0.005);
        assert_eq!(body["onchainAttestation"]["encryptedPromptHash"], reply.receipt.encrypted_prompt_hash.as_str());

        // Settled once, and the header says so.
        assert_eq!(f.settles(), n, "exactly one settlement per payment");
        let settled = f.facilitator.settlements();
        let last = settled.last().unwrap();
        assert_eq!(
            (last.amount, last.payer.as_str(), last.network.as_str()),
            (5000, payer_address().as_str(), network)
        );
        assert_eq!(out["settlement"]["name"], settlement_name);
        assert_eq!(
            out["settlement"]["decoded"],
            json!({"success": true, "transaction": last.transaction, "network": network, "payer": payer_address()})
        );
        assert_eq!(out["exposeHeaders"], settlement_name);

        // The same payment header again: refused, named, never verified or settled again.
        let replay = &out["replay"];
        assert_eq!(replay["status"], 402, "{out}");
        assert_eq!(replay["body"]["error"], "duplicate_settlement");
        assert_eq!(replay["paymentRequired"]["error"], "duplicate_settlement");
        assert!(replay["body"].get("encryptedResponse").is_none());
        assert_eq!(f.verifies(), n);
        assert_eq!(f.settles(), n);

        // The payment is stored as settled; the log holds no payment payload.
        let rows = payment_rows(&f.stack).await;
        assert_eq!(rows.len(), n);
        assert_eq!(rows[n - 1], ("settled".into(), Some(payer_address()), Some(last.transaction.clone())));
        let header_value = out["paymentHeader"]["value"].as_str().unwrap();
        let log = f.stack.relay.log_text();
        assert!(!log.contains(&header_value[..48]), "the relay log holds the payment header");
        assert!(!log.contains(&sealed.envelope.to_json_string()[..48]));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn wrong_amount_or_pay_to_is_refused() {
    let f = fixture().await;
    // v1 has no echo of the requirements: the facilitator finds the transaction wrong.
    for (tamper, reason) in [
        ("amount", "invalid_exact_svm_payload_amount_mismatch"),
        ("payTo", "invalid_exact_svm_payload_recipient_mismatch"),
    ] {
        let sealed = seal(&f.stack, "hello").await;
        let out = pay(&f, &chat_body(&sealed, "gpt-oss:20b"), 1, &["--tamper", tamper, "--no-replay"]).await;
        assert_eq!(out["status"], 402, "{out}");
        assert_eq!(out["body"]["error"], reason);
        assert_eq!(out["body"]["accepts"], json!([offered_v1(&f)]), "the refusal repeats the real terms");
    }
    assert_eq!(f.verifies(), 2);
    // v2 echoes the accepted requirements: the relay refuses terms it did not offer itself.
    let sealed = seal(&f.stack, "hello").await;
    let out = pay(&f, &chat_body(&sealed, "gpt-oss:20b"), 2, &["--tamper", "amount", "--no-replay"]).await;
    assert_eq!(out["status"], 402, "{out}");
    assert_eq!(out["body"]["error"], "invalid_payment_requirements");
    assert_eq!(f.verifies(), 2, "never sent to the facilitator");
    assert_eq!(f.settles(), 0);
    assert!(payment_rows(&f.stack).await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn failed_work_releases_and_refused_settlement_delivers_nothing() {
    let f = fixture().await;
    // The enclave has no endpoint for this model: 501, no settlement, the reservation freed.
    let sealed = seal(&f.stack, "hello").await;
    let out = pay(&f, &chat_body(&sealed, "gemma4:31b"), 2, &["--no-replay"]).await;
    assert_eq!(out["status"], 501, "{out}");
    assert_eq!(out["body"]["error"], "gpu_not_configured");
    assert!(out["settlement"].is_null());
    assert_eq!(f.settles(), 0);
    assert!(payment_rows(&f.stack).await.is_empty());

    // The same payment, retried with a call that works, is accepted and settled once.
    let header = out["paymentHeader"]["value"].as_str().unwrap().to_string();
    let sealed = seal(&f.stack, "hello").await;
    let (status, headers, body) = post(&f, &chat_body(&sealed, "gpt-oss:20b"), &[("PAYMENT-SIGNATURE", &header)]).await;
    assert_eq!(status, 200, "{body}");
    open(&sealed, &body);
    let settlement = decode_header(headers["payment-response"].to_str().unwrap());
    assert_eq!(settlement["success"], true);
    assert_eq!(f.settles(), 1);

    // Settlement refused after the work: 402 with the reason and a failed settlement header,
    // no reply; the payment stays used.
    f.facilitator.refuse_settlement(Some("insufficient_funds"));
    let sealed = seal(&f.stack, "hello").await;
    let out = pay(&f, &chat_body(&sealed, "gpt-oss:20b"), 1, &[]).await;
    assert_eq!(out["status"], 402, "{out}");
    assert_eq!(out["body"]["error"], "insufficient_funds");
    assert!(out["body"].get("encryptedResponse").is_none());
    assert_eq!(out["settlement"]["name"], "X-PAYMENT-RESPONSE");
    assert_eq!(out["settlement"]["decoded"]["success"], false);
    assert_eq!(out["settlement"]["decoded"]["errorReason"], "insufficient_funds");
    assert_eq!(out["replay"]["status"], 402);
    assert_eq!(out["replay"]["body"]["error"], "duplicate_settlement");
    let rows = payment_rows(&f.stack).await;
    let statuses: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(statuses, ["settled", "failed"]);
    assert_eq!(f.facilitator.settlements().len(), 1);
}

/// `/agent` accepts x402 as well as a key (contract §4.1): a guest who sends a payment pays
/// with it instead of spending a free message; a replay is refused like anywhere else.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn agent_accepts_an_x402_payment_instead_of_a_free_message() {
    let f = fixture().await;
    let header = handmade_payment(&f, 5000, b"agent-call-0001-memo");
    let agent = format!("{}/agent", f.stack.relay_url);
    let call = || async {
        let response = reqwest::Client::new()
            .post(&agent)
            .header("X-PAYMENT", &header)
            .json(&json!({"prompt": "Say hello.", "useTools": false}))
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        (status, headers, response.json::<Value>().await.unwrap())
    };
    let (status, headers, body) = call().await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["success"], true);
    assert_eq!(body["billing"], json!({"method": "x402", "charged": "5000", "currency": "usdc", "balanceAfter": null}));
    assert_eq!(body["freeMessagesRemaining"], 5, "the payment, not a free message, paid");
    let settlement = decode_header(headers["x-payment-response"].to_str().unwrap());
    assert_eq!(settlement["success"], true);
    assert_eq!(settlement["payer"], payer_address());
    assert_eq!(f.settles(), 1);
    let (status, _, replay) = call().await;
    assert_eq!((status, replay["error"].as_str()), (402, Some("duplicate_settlement")), "{replay}");
    assert_eq!(f.settles(), 1);
    // The manifest lists /agent among the priced routes.
    let manifest: Value =
        reqwest::get(format!("{}/.well-known/x402", f.stack.relay_url)).await.unwrap().json().await.unwrap();
    assert!(manifest["resources"].as_array().unwrap().iter().any(|r| r.as_str() == Some(agent.as_str())), "{manifest}");
}
