//! `/agents/v1` over the real router and enclave: quotes, a session opened, the router's
//! failures mapped to 502 with a code, and quotes paid per call with a key or with x402. Every
//! missing and malformed input is checked in process (relay/tests/handlers.rs).

use e2e::swaps::SwapWorld;
use serde_json::{Value, json};
use shared::address::Address;
use standins::facilitator::ExactPayment;

async fn call(method: &str, url: &str, key: Option<&str>, body: Option<Value>) -> (u16, Value) {
    let http = reqwest::Client::new();
    let mut request = match method {
        "GET" => http.get(url),
        _ => http.post(url),
    };
    if let Some(k) = key {
        request = request.bearer_auth(k);
    }
    if let Some(b) = body {
        request = request.json(&b);
    }
    let response = request.send().await.unwrap();
    (response.status().as_u16(), response.json().await.unwrap_or(Value::Null))
}

fn expect(got: (u16, Value), status: u16, code: &str, names: &[&str]) {
    let (s, body) = got;
    assert_eq!((s, body["error"].as_str()), (status, Some(code)), "{body}");
    let message = body["message"].as_str().unwrap();
    for n in names {
        assert!(message.contains(n), "`{message}` should name {n}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn quotes_and_sessions_over_the_router_and_its_failures() {
    // Every missing and malformed field of these routes, and a relay without swaps, are checked
    // in process (relay/tests/handlers.rs); here, what needs the router and the enclave.
    let w = SwapWorld::start(json!({})).await;
    let base = w.stack.relay_url.clone();
    let key = Some(e2e::API_KEY);
    let (usdc, token) = (w.usdc.to_string(), w.token.to_string());
    let q = |from: &str, to: &str, amount: &str| {
        format!("{base}/agents/v1/quote?fromMint={from}&toMint={to}&amount={amount}")
    };
    // A quote that works, and one off the buckets.
    let (status, ok) = call("GET", &q(&usdc, &token, "12345678"), key, None).await;
    assert_eq!(status, 200, "{ok}");
    assert_eq!(
        (ok["bucketed"].as_bool(), ok["nearestBucket"].as_str(), ok["bucketLabel"].as_str()),
        (Some(false), Some("10000000"), Some("10 USDC"))
    );
    assert!(ok["privacyNotes"].as_str().unwrap().contains("not a standard denomination"));
    assert_eq!(ok["slippageBps"], 50, "the configured default");
    // The router down, or answering garbage: 502 with a code.
    w.router.fail_with(Some(standins::Failure::Status(503)));
    expect(call("GET", &q(&usdc, &token, "1000000"), key, None).await, 502, "router_error", &[]);
    w.router.fail_with(Some(standins::Failure::Garbage));
    expect(call("GET", &q(&usdc, &token, "1000000"), key, None).await, 502, "router_error", &[]);
    w.router.fail_with(None);

    // A session the enclave opened: awaiting its funding, no attestation yet.
    let good = json!({"payerPubkey": Address([1; 32]).to_string(), "fromMint": usdc, "toMint": token,
                      "amount": "10000000", "destinationPubkey": Address([2; 32]).to_string(), "slippageBps": 50});
    let (status, started) = call("POST", &format!("{base}/agents/v1/swaps/oneshot"), key, Some(good)).await;
    assert_eq!(status, 200, "{started}");
    let id = started["sessionId"].as_str().unwrap();
    expect(
        call("GET", &format!("{base}/agents/v1/attestations/{id}"), None, None).await,
        404,
        "not_found",
        &["not settled"],
    );
    let (status, session) = call("GET", &format!("{base}/agents/v1/sessions/{id}"), None, None).await;
    assert_eq!(status, 200);
    assert_eq!(
        (session["state"].as_str(), session["fundingTxSig"].as_str(), session["actualOut"].as_str()),
        (Some("awaiting_funding"), Some(""), Some(""))
    );
    assert_eq!(session["expiresAt"], started["expiresAt"]);
}

/// The merchant wallet of the x402 configuration.
const PAY_TO: &str = "2wKupLR9q6wXYppw8Gr2NvWxKBUqm4PPJKkQfoxHDBg4";

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn quotes_are_paid_per_call_with_a_key_or_with_x402() {
    let (facilitator_server, facilitator) = standins::facilitator::start().await;
    let relay = json!({"x402": {"facilitatorUrl": facilitator_server.base_url, "payTo": PAY_TO}});
    let w = SwapWorld::start_with(json!({"quotePricePerCall": 1000}), relay).await;
    let (usdc, token) = (w.usdc.to_string(), w.token.to_string());
    let url = format!("{}/agents/v1/quote?fromMint={usdc}&toMint={token}&amount=1000000", w.stack.relay_url);

    // A key pays from its balance: refused while empty, then charged 1000 a call.
    let key = e2e::API_KEY;
    expect(call("GET", &url, Some(key), None).await, 402, "insufficient_balance", &[]);
    w.stack.credit_usdc(&relay::accounts::key_id(key), 2_500);
    for _ in 0..2 {
        assert_eq!(call("GET", &url, Some(key), None).await.0, 200);
    }
    expect(call("GET", &url, Some(key), None).await, 402, "insufficient_balance", &[]);
    let (_, balance) = call("GET", &format!("{}/api/v1/balance", w.stack.relay_url), Some(key), None).await;
    let usdc_balance = balance["balances"].as_array().unwrap().iter().find(|b| b["currency"] == "usdc").unwrap();
    assert_eq!(usdc_balance["amount"], "500", "{balance}");

    // Without a key: the x402 challenge for this resource, then a payment that settles.
    let (status, challenge) = call("GET", &url, None, None).await;
    assert_eq!(status, 402, "{challenge}");
    let offered = &challenge["accepts"][0];
    let resource = url.split('?').next().unwrap();
    assert_eq!(
        (offered["resource"].as_str(), offered["payTo"].as_str()),
        (Some(resource), Some(PAY_TO)),
        "{challenge}"
    );
    let payer = ed25519_dalek::SigningKey::from_bytes(&[0x42; 32]);
    let payment = ExactPayment::new(facilitator.fee_payer_bytes(), payer, Address::parse(PAY_TO).unwrap().0, 5000);
    let payload = json!({"x402Version": 1, "scheme": "exact", "network": "solana",
                         "payload": {"transaction": shared::b64::encode(payment.build())}});
    let response = reqwest::Client::new()
        .get(&url)
        .header("X-PAYMENT", shared::b64::encode(payload.to_string()))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 200);
    assert!(response.headers().contains_key("x-payment-response"));
    let quote: Value = response.json().await.unwrap();
    assert_eq!(quote["amount"], "1000000");
    assert_eq!(facilitator.requests_to("/settle").len(), 1);
    // The manifest lists the quote and the session start among the priced routes.
    let (_, manifest) = call("GET", &format!("{}/.well-known/x402", w.stack.relay_url), None, None).await;
    let resources: Vec<&str> = manifest["resources"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    let start = format!("{}/agents/v1/swaps/oneshot", w.stack.relay_url);
    assert!(resources.contains(&resource) && resources.contains(&start.as_str()), "{manifest}");
}
