//! `/agents/v1` inputs and payments: every route names its missing fields and refuses
//! malformed ones with the contract's codes, the router's failures map to 502 with a code, a
//! relay without swaps says so, and quotes are paid per call with a key or with x402.

use e2e::swaps::SwapWorld;
use e2e::{Stack, StackOptions};
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
async fn every_route_names_missing_fields_and_refuses_malformed_ones() {
    let w = SwapWorld::start(json!({})).await;
    let base = w.stack.relay_url.clone();
    let key = Some(e2e::API_KEY);
    let (usdc, token) = (w.usdc.to_string(), w.token.to_string());
    let quote = |q: &str| format!("{base}/agents/v1/quote?{q}");

    // Quote.
    expect(call("GET", &quote(""), key, None).await, 400, "missing_required_fields", &["fromMint", "toMint", "amount"]);
    let only_from = call("GET", &quote(&format!("fromMint={usdc}")), key, None).await;
    expect(only_from.clone(), 400, "missing_required_fields", &["toMint", "amount"]);
    assert!(!only_from.1["message"].as_str().unwrap().contains("fromMint"));
    let q = |from: &str, to: &str, amount: &str| quote(&format!("fromMint={from}&toMint={to}&amount={amount}"));
    expect(call("GET", &q("not-base58!", &token, "1000000"), key, None).await, 400, "invalid_mint", &["fromMint"]);
    let unknown = Address([9; 32]).to_string();
    expect(call("GET", &q(&usdc, &unknown, "1000000"), key, None).await, 400, "invalid_mint", &["toMint"]);
    expect(call("GET", &q(&usdc, &usdc, "1000000"), key, None).await, 400, "invalid_mint", &["differ"]);
    for bad in ["0", "1.5", "-3", "01", "abc", "18446744073709551616"] {
        expect(call("GET", &q(&usdc, &token, bad), key, None).await, 400, "invalid_amount", &["amount"]);
    }
    expect(call("GET", &q(&usdc, &token, "99999"), key, None).await, 400, "amount_out_of_bounds", &["100000", "USDC"]);
    expect(call("GET", &q(&usdc, &token, "1000000001"), key, None).await, 400, "amount_out_of_bounds", &["1000000000"]);
    let slippage = format!("{}&slippageBps=10001", q(&usdc, &token, "1000000"));
    expect(call("GET", &slippage, key, None).await, 400, "invalid_field", &["slippageBps"]);
    // No key and no x402 on this relay: 401.
    expect(call("GET", &q(&usdc, &token, "1000000"), None, None).await, 401, "unauthorized", &[]);
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

    // Anonymity set.
    let set = |q: &str| format!("{base}/agents/v1/anonymity-set?{q}");
    expect(call("GET", &set(""), None, None).await, 400, "missing_required_fields", &["mint"]);
    expect(call("GET", &set("mint=xyz"), None, None).await, 400, "invalid_mint", &["mint"]);
    expect(
        call("GET", &set(&format!("mint={usdc}&windowHours=0")), None, None).await,
        400,
        "invalid_field",
        &["windowHours"],
    );
    expect(call("GET", &set(&format!("mint={usdc}&amount=x")), None, None).await, 400, "invalid_amount", &["amount"]);
    let (status, empty) = call("GET", &set(&format!("mint={usdc}&windowHours=1")), None, None).await;
    assert_eq!(status, 200, "{empty}");
    let counts: Vec<(String, i64)> = empty["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| (b["amount"].as_str().unwrap().to_string(), b["count"].as_i64().unwrap()))
        .collect();
    assert_eq!(counts, [("1000000".to_string(), 0), ("10000000".to_string(), 0), ("100000000".to_string(), 0)]);

    // One-shot start.
    let oneshot = format!("{base}/agents/v1/swaps/oneshot");
    expect(
        call("POST", &oneshot, key, Some(json!({}))).await,
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
        b
    };
    expect(
        call("POST", &oneshot, key, Some(with("payerPubkey", json!("0xabc")))).await,
        400,
        "invalid_field",
        &["payerPubkey"],
    );
    expect(
        call("POST", &oneshot, key, Some(with("destinationPubkey", json!(payer)))).await,
        400,
        "invalid_field",
        &["fresh destination"],
    );
    expect(call("POST", &oneshot, key, Some(with("amount", json!("ten")))).await, 400, "invalid_amount", &["amount"]);
    expect(call("POST", &oneshot, key, Some(with("amount", json!([1])))).await, 400, "invalid_field", &["amount"]);
    expect(
        call("POST", &oneshot, key, Some(with("slippageBps", json!(-1)))).await,
        400,
        "invalid_field",
        &["slippageBps"],
    );
    let raw = reqwest::Client::new().post(&oneshot).bearer_auth(e2e::API_KEY).body("not json").send().await.unwrap();
    assert_eq!(raw.status().as_u16(), 400);
    assert_eq!(raw.json::<Value>().await.unwrap()["error"], "bad_request");

    // Execute, sessions, attestations.
    let (status, started) = call("POST", &oneshot, key, Some(good.clone())).await;
    assert_eq!(status, 200, "{started}");
    let id = started["sessionId"].as_str().unwrap();
    let execute = format!("{base}/agents/v1/swaps/oneshot/{id}/execute");
    expect(call("POST", &execute, None, Some(json!({}))).await, 400, "missing_required_fields", &["fundingTxSig"]);
    expect(
        call("POST", &execute, None, Some(json!({"fundingTxSig": "xyz"}))).await,
        400,
        "invalid_field",
        &["fundingTxSig"],
    );
    let sig = bs58::encode([1u8; 64]).into_string();
    let nobody = "00000000-0000-4000-8000-000000000000";
    expect(
        call(
            "POST",
            &format!("{base}/agents/v1/swaps/oneshot/{nobody}/execute"),
            None,
            Some(json!({"fundingTxSig": sig})),
        )
        .await,
        404,
        "not_found",
        &["session"],
    );
    expect(
        call(
            "POST",
            &format!("{base}/agents/v1/swaps/oneshot/not-a-uuid/execute"),
            None,
            Some(json!({"fundingTxSig": sig})),
        )
        .await,
        404,
        "not_found",
        &[],
    );
    expect(
        call("GET", &format!("{base}/agents/v1/sessions/{nobody}"), None, None).await,
        404,
        "not_found",
        &["session"],
    );
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

#[tokio::test]
async fn a_relay_without_swaps_says_so() {
    let options = StackOptions { model_base_url: Some("http://127.0.0.1:9/v1".into()), ..StackOptions::default() };
    let stack = tokio::task::spawn_blocking(move || Stack::start_with(options)).await.unwrap();
    let base = &stack.relay_url;
    let usdc = Address([2; 32]).to_string();
    let url = format!("{base}/agents/v1/quote?fromMint={usdc}&toMint={usdc}&amount=1");
    expect(call("GET", &url, Some(e2e::API_KEY), None).await, 501, "swaps_not_configured", &[]);
    // Missing fields are still named first.
    expect(
        call("GET", &format!("{base}/agents/v1/quote"), None, None).await,
        400,
        "missing_required_fields",
        &["fromMint"],
    );
    let session = format!("{base}/agents/v1/sessions/00000000-0000-4000-8000-000000000000");
    expect(call("GET", &session, None, None).await, 501, "swaps_not_configured", &[]);
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
