//! Prepaid balance through the real relay binary: read it, credit it with the operator
//! command, read it again; bad input and missing keys get clear errors.

use std::process::Command;

use e2e::{Stack, binary};
use serde_json::Value;

async fn balance(stack: &Stack, key: Option<&str>) -> (u16, Value) {
    let mut req = reqwest::Client::new().get(format!("{}/api/v1/balance", stack.relay_url));
    if let Some(k) = key {
        req = req.bearer_auth(k);
    }
    let r = req.send().await.unwrap();
    (r.status().as_u16(), r.json().await.unwrap_or(Value::Null))
}

fn admin(stack: &Stack, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(binary("relay"))
        .arg("--config")
        .arg(stack.dir.path().join("relay.json"))
        .args(["admin", "credit"])
        .args(args)
        .env_remove("DATABASE_URL")
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn operator_credit_shows_in_the_balance() {
    let stack = Stack::start_without_quotes();
    let (s, body) = balance(&stack, Some(&stack.api_key)).await;
    assert_eq!(s, 200, "{body}");
    let key_id = body["keyId"].as_str().unwrap().to_string();
    assert!(key_id.starts_with("key_") && !key_id.contains(&stack.api_key));
    assert_eq!(
        body["balances"],
        serde_json::json!([{"currency": "usdc", "amount": "0"}, {"currency": "svc", "amount": "0"}])
    );

    let (code, out, err) =
        admin(&stack, &["--key-id", &key_id, "--currency", "usdc", "--amount", "1500000", "--reference", "test"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("usdc balance is now 1500000"), "{out}");
    let (code, _, _) = admin(&stack, &["--key-id", &key_id, "--currency", "usdc", "--amount", "250000"]);
    assert_eq!(code, 0);
    let (_, body) = balance(&stack, Some(&stack.api_key)).await;
    assert_eq!(body["balances"][0], serde_json::json!({"currency": "usdc", "amount": "1750000"}));

    // Bad input changes nothing and says why.
    for (args, says) in [
        (vec!["--key-id", key_id.as_str(), "--currency", "eur", "--amount", "5"], "unknown currency"),
        (vec!["--key-id", key_id.as_str(), "--currency", "usdc", "--amount", "-5"], "positive"),
        (vec!["--key-id", key_id.as_str(), "--currency", "usdc", "--amount", "1.5"], "integer"),
        (vec!["--key-id", key_id.as_str(), "--currency", "usdc"], "usage"),
    ] {
        let (code, _, err) = admin(&stack, &args);
        assert_ne!(code, 0);
        assert!(err.contains(says), "{args:?}: {err}");
    }
    let (_, body) = balance(&stack, Some(&stack.api_key)).await;
    assert_eq!(body["balances"][0]["amount"], "1750000");

    let (s, body) = balance(&stack, None).await;
    assert_eq!((s, body["error"].as_str()), (401, Some("unauthorized")));
    let (s, _) = balance(&stack, Some("sk_svc_unknown")).await;
    assert_eq!(s, 401);
}
