//! A client that disconnects mid-call costs nothing and leaves nothing held: on every private
//! route, with the model slow enough to hang up on, the charge comes back, no usage row stays
//! `pending` and no x402 reservation stays `reserved`. The receipt is still stored (the enclave
//! did the work), but nobody is charged for an answer nobody read.

use std::time::Duration;

use e2e::{Stack, StackOptions};
use ed25519_dalek::SigningKey;
use rand_core::OsRng;
use serde_json::{Value, json};
use shared::address::Address;
use shared::envelope::{self, PromptPlaintext};
use standins::facilitator::ExactPayment;
use standins::openai::{self, Turn};

const PAY_TO: &str = "2wKupLR9q6wXYppw8Gr2NvWxKBUqm4PPJKkQfoxHDBg4";
const CREDIT: i64 = 100_000;
/// How long the model takes; the client gives up well before.
const MODEL_DELAY: Duration = Duration::from_secs(3);
const CLIENT_PATIENCE: Duration = Duration::from_millis(700);

struct Fixture {
    stack: Stack,
    model: openai::Seen,
    facilitator: standins::facilitator::Facilitator,
    _servers: Vec<standins::Running>,
}

async fn fixture() -> Fixture {
    let (model_server, model) = openai::start(vec![Turn::Slow(MODEL_DELAY, Box::new(Turn::text("late")))]).await;
    let (facilitator_server, facilitator) = standins::facilitator::start().await;
    let relay = json!({
        "teeProcessPricePerCall": 1000,
        "agentPricePerCall": 1000,
        "x402": {"facilitatorUrl": facilitator_server.base_url, "payTo": PAY_TO},
    });
    let options = StackOptions {
        model_base_url: Some(format!("{}/v1", model_server.base_url)),
        relay,
        ..StackOptions::default()
    };
    let stack = tokio::task::spawn_blocking(move || Stack::start_with(options)).await.unwrap();
    stack.credit_usdc(&relay::accounts::key_id(&stack.api_key), CREDIT);
    Fixture { stack, model, facilitator, _servers: vec![model_server, facilitator_server] }
}

async fn sealed(stack: &Stack) -> String {
    let key: Value = reqwest::get(format!("{}/tee/public-key", stack.relay_url)).await.unwrap().json().await.unwrap();
    let key: [u8; 32] = shared::b64::decode_array(key["publicKey"].as_str().unwrap()).unwrap();
    let now = shared::time::unix_now();
    let plaintext = serde_json::to_vec(&PromptPlaintext::from_prompt("hang up on me", now)).unwrap();
    envelope::seal(&key, &plaintext, &mut OsRng).unwrap().0.to_json_string()
}

/// Sends, then hangs up before the model answers.
async fn hang_up(request: reqwest::RequestBuilder) {
    let result = request.timeout(CLIENT_PATIENCE).send().await;
    assert!(result.as_ref().is_err_and(|e| e.is_timeout()), "the call should still be running: {result:?}");
}

async fn db(stack: &Stack) -> sqlx::AnyPool {
    let url = format!("sqlite://{}?mode=ro", stack.relay_data_dir().join("relay.sqlite3").display());
    sqlx::any::install_default_drivers();
    sqlx::AnyPool::connect(&url).await.unwrap()
}

/// Waits for the model call `n` to have been answered and the relay to have settled it.
async fn settled(f: &Fixture, n: usize) -> (Vec<String>, Vec<String>, i64, i64) {
    let pool = db(&f.stack).await;
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let usage: Vec<(String,)> =
            sqlx::query_as("SELECT status FROM usage_records ORDER BY created_at, id").fetch_all(&pool).await.unwrap();
        let payments: Vec<(String,)> =
            sqlx::query_as("SELECT status FROM x402_payments").fetch_all(&pool).await.unwrap();
        let receipts: (i64,) = sqlx::query_as("SELECT COUNT(*) FROM receipts").fetch_one(&pool).await.unwrap();
        let balance: Option<(i64,)> =
            sqlx::query_as("SELECT amount FROM balances WHERE currency = 'usdc'").fetch_optional(&pool).await.unwrap();
        let usage: Vec<String> = usage.into_iter().map(|r| r.0).collect();
        let payments: Vec<String> = payments.into_iter().map(|r| r.0).collect();
        let done = receipts.0 as usize >= n
            && !usage.iter().any(|s| s == "pending")
            && !payments.iter().any(|s| s == "reserved");
        if done {
            return (usage, payments, receipts.0, balance.map_or(0, |b| b.0));
        }
        assert!(std::time::Instant::now() < deadline, "not settled: usage {usage:?}, payments {payments:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn free_used(stack: &Stack) -> i64 {
    let row: Option<(i64,)> =
        sqlx::query_as("SELECT used FROM free_trial").fetch_optional(&db(stack).await).await.unwrap();
    row.map_or(0, |r| r.0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn hanging_up_on_any_private_route_costs_nothing_and_holds_nothing() {
    let f = fixture().await;
    let http = reqwest::Client::new();
    let url = |p: &str| format!("{}{p}", f.stack.relay_url);
    let key = f.stack.api_key.clone();

    // /tee/process, paid per call by the key.
    hang_up(http.post(url("/tee/process")).bearer_auth(&key).json(&json!({"encryptedPrompt": sealed(&f.stack).await})))
        .await;
    let (usage, _, receipts, balance) = settled(&f, 1).await;
    assert_eq!((usage, receipts, balance), (vec!["refunded".to_string()], 1, CREDIT));

    // Chat completions, paid per token (the whole context is reserved first).
    let body = json!({"model": "gpt-oss:20b", "encryptedPrompt": sealed(&f.stack).await});
    hang_up(http.post(url("/api/v1/chat/completions")).bearer_auth(&key).json(&body)).await;
    let (usage, _, receipts, balance) = settled(&f, 2).await;
    assert_eq!(
        (usage.as_slice(), receipts, balance),
        (["refunded", "refunded"].map(String::from).as_slice(), 2, CREDIT)
    );

    // Encrypted /agent, paid by the key, then by a guest's free message.
    let body = json!({"prompt": "", "encryptedPrompt": sealed(&f.stack).await});
    hang_up(http.post(url("/agent")).bearer_auth(&key).json(&body)).await;
    let (usage, _, _, balance) = settled(&f, 3).await;
    assert_eq!((usage.iter().filter(|s| *s == "refunded").count(), balance), (3, CREDIT));
    let body = json!({"prompt": "", "encryptedPrompt": sealed(&f.stack).await});
    hang_up(http.post(url("/agent")).json(&body)).await;
    settled(&f, 4).await;
    assert_eq!(free_used(&f.stack).await, 0, "the guest's free message came back");

    // The x402 route: the payment is verified and reserved, then released, never settled.
    let payer = SigningKey::from_bytes(&[0x42; 32]);
    let payment = ExactPayment::new(f.facilitator.fee_payer_bytes(), payer, Address::parse(PAY_TO).unwrap().0, 5000);
    let tx = shared::b64::encode(payment.build());
    let header = json!({"x402Version": 1, "scheme": "exact", "network": "solana", "payload": {"transaction": tx}});
    let body = json!({"encryptedPrompt": sealed(&f.stack).await, "model": "gpt-oss:20b", "maxTokens": 8});
    hang_up(
        http.post(url("/api/v1/x402/chat/completions"))
            .header("X-PAYMENT", shared::b64::encode(header.to_string()))
            .json(&body),
    )
    .await;
    let (_, payments, receipts, _) = settled(&f, 5).await;
    assert_eq!((payments.len(), receipts), (0, 5), "the reservation was released: {payments:?}");
    assert_eq!(f.facilitator.requests_to("/verify").len(), 1);
    assert_eq!(f.facilitator.requests_to("/settle").len(), 0, "nothing settled for an answer nobody read");
    assert_eq!(f.model.count(), 5, "every call reached the model");
}
