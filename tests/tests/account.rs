//! Accounts through the real relay binary: the prepaid balance credited with the operator
//! command, and wallet sign-in issuing keys that are listed, rotated and revoked. Bad sign-ins
//! and the models list are checked in process (relay/tests/handlers.rs).

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
    e2e::run(
        Command::new(binary("relay"))
            .arg("--config")
            .arg(stack.dir.path().join("relay.json"))
            .args(["admin", "credit"])
            .args(args)
            .env_remove("DATABASE_URL"),
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
        (vec!["--key-id", "key_0000000000000000", "--currency", "usdc", "--amount", "5"], "unknown key id"),
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

async fn post(stack: &Stack, path: &str, body: Value, key: Option<&str>) -> (u16, Value) {
    e2e::http::post(&format!("{}{path}", stack.relay_url), &body, key).await
}

async fn call(stack: &Stack, method: reqwest::Method, path: &str, key: &str) -> (u16, Value) {
    let r = reqwest::Client::new()
        .request(method, format!("{}{path}", stack.relay_url))
        .bearer_auth(key)
        .send()
        .await
        .unwrap();
    (r.status().as_u16(), r.json().await.unwrap_or(Value::Null))
}

/// A wallet signs the challenge: a real ed25519 signature over the exact message. `scopes`
/// are asked for in the challenge and named again at verification (none: the default).
async fn sign_in_with(stack: &Stack, wallet_key: &ed25519_dalek::SigningKey, scopes: Option<&[&str]>) -> (u16, Value) {
    use ed25519_dalek::Signer;
    let wallet = shared::address::Address(wallet_key.verifying_key().to_bytes()).to_string();
    let mut ask = serde_json::json!({"wallet": wallet});
    if let Some(scopes) = scopes {
        ask["scopes"] = serde_json::json!(scopes);
    }
    let (s, ch) = post(stack, "/api/v1/auth/challenge", ask, None).await;
    assert_eq!(s, 200, "{ch}");
    let message = ch["message"].as_str().unwrap();
    assert!(message.contains(&wallet) && message.contains(ch["nonce"].as_str().unwrap()));
    let signature = shared::ledger::format_id(&wallet_key.sign(message.as_bytes()).to_bytes());
    let mut answer = serde_json::json!({"wallet": wallet, "nonce": ch["nonce"], "signature": signature});
    if let Some(scopes) = scopes {
        answer["scopes"] = serde_json::json!(scopes);
    }
    post(stack, "/api/v1/auth/verify", answer, None).await
}

async fn sign_in(stack: &Stack, wallet_key: &ed25519_dalek::SigningKey) -> (u16, Value) {
    sign_in_with(stack, wallet_key, None).await
}

#[tokio::test(flavor = "multi_thread")]
async fn wallet_sign_in_issues_keys_that_can_be_listed_rotated_and_revoked() {
    use rand_core::OsRng;
    let stack = Stack::start_without_quotes();
    let wallet_key = ed25519_dalek::SigningKey::generate(&mut OsRng);
    // This key manages the wallet's keys: it asked for the `keys` scope.
    let (s, issued) = sign_in_with(&stack, &wallet_key, Some(&["chat", "account", "keys"])).await;
    assert_eq!(s, 201, "{issued}");
    assert_eq!(issued["scopes"], "chat account keys");
    let key = issued["apiKey"].as_str().unwrap().to_string();
    let key_id = issued["keyId"].as_str().unwrap().to_string();
    assert!(key.starts_with("sk_svc_") && key.len() > 40);

    // The key works: its balance, and private routes (here refused only for the missing envelope).
    let (s, bal) = balance(&stack, Some(&key)).await;
    assert_eq!((s, bal["keyId"].as_str()), (200, Some(key_id.as_str())));
    let (s, body) = post(&stack, "/tee/process", serde_json::json!({}), Some(&key)).await;
    assert_eq!((s, body["error"].as_str()), (400, Some("bad_request")));

    // Only its hash is stored.
    let db = std::fs::read(stack.relay_data_dir().join("relay.sqlite3")).unwrap();
    let wal = std::fs::read(stack.relay_data_dir().join("relay.sqlite3-wal")).unwrap_or_default();
    for bytes in [&db, &wal] {
        assert!(!String::from_utf8_lossy(bytes).contains(&key), "the key itself reached the database");
    }

    // Rotation keeps the id and the balance; the old secret stops working.
    let (code, _, err) = admin(&stack, &["--key-id", &key_id, "--currency", "usdc", "--amount", "42"]);
    assert_eq!(code, 0, "{err}");
    let (s, rotated) = call(&stack, reqwest::Method::POST, &format!("/api/v1/keys/{key_id}/rotate"), &key).await;
    assert_eq!(s, 200, "{rotated}");
    let new_key = rotated["apiKey"].as_str().unwrap().to_string();
    assert_ne!(new_key, key);
    assert_eq!(balance(&stack, Some(&key)).await.0, 401);
    let (_, bal) = balance(&stack, Some(&new_key)).await;
    assert_eq!((bal["keyId"].as_str(), bal["balances"][0]["amount"].as_str()), (Some(key_id.as_str()), Some("42")));

    // A second key for the same wallet (default scopes), then the list, then revocation.
    let (_, second) = sign_in(&stack, &wallet_key).await;
    assert_eq!(second["scopes"], "chat account swap");
    let second_id = second["keyId"].as_str().unwrap().to_string();
    // Without `keys` it cannot manage keys, not even its own wallet's.
    let second_key = second["apiKey"].as_str().unwrap();
    let (s, body) = call(&stack, reqwest::Method::POST, &format!("/api/v1/keys/{key_id}/rotate"), second_key).await;
    assert_eq!((s, body["error"].as_str()), (403, Some("forbidden")), "{body}");
    let (s, listed) = call(&stack, reqwest::Method::GET, "/api/v1/keys", &new_key).await;
    assert_eq!(s, 200);
    let ids: Vec<&str> = listed["keys"].as_array().unwrap().iter().map(|k| k["keyId"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), 2);
    assert!(ids.contains(&key_id.as_str()) && ids.contains(&second_id.as_str()));
    assert!(!listed.to_string().contains("sk_svc_"), "listing must not show secrets");
    let (s, _) = call(&stack, reqwest::Method::DELETE, &format!("/api/v1/keys/{second_id}"), &new_key).await;
    assert_eq!(s, 200);
    assert_eq!(balance(&stack, Some(second["apiKey"].as_str().unwrap())).await.0, 401);
    let (s, body) = call(&stack, reqwest::Method::DELETE, &format!("/api/v1/keys/{second_id}"), &new_key).await;
    assert_eq!((s, body["error"].as_str()), (404, Some("not_found")));

    // Another wallet cannot touch these keys.
    let other = ed25519_dalek::SigningKey::generate(&mut OsRng);
    let (_, other_issued) = sign_in_with(&stack, &other, Some(&["keys"])).await;
    let other_key = other_issued["apiKey"].as_str().unwrap();
    let (s, _) = call(&stack, reqwest::Method::DELETE, &format!("/api/v1/keys/{key_id}"), other_key).await;
    assert_eq!(s, 404);
    // Operator keys from configuration have no wallet: 403 on key management.
    let (s, body) = call(&stack, reqwest::Method::GET, "/api/v1/keys", &stack.api_key).await;
    assert_eq!((s, body["error"].as_str()), (403, Some("forbidden")));
}

/// The challenge is a Sign-In-With-Solana message naming this service's domain and URI, so a
/// wallet shows a phishing site that relays it someone else's domain; the scopes are in the
/// signed statement, so other scopes than the wallet signed for are refused.
#[tokio::test(flavor = "multi_thread")]
async fn the_challenge_is_a_siws_message_and_its_scopes_are_signed() {
    use ed25519_dalek::Signer;
    use rand_core::OsRng;
    let stack = Stack::start_without_quotes();
    let wallet_key = ed25519_dalek::SigningKey::generate(&mut OsRng);
    let wallet = shared::address::Address(wallet_key.verifying_key().to_bytes()).to_string();
    let ask = serde_json::json!({"wallet": wallet, "scopes": ["chat"]});
    let (_, ch) = post(&stack, "/api/v1/auth/challenge", ask, None).await;
    let message = ch["message"].as_str().unwrap();
    let lines: Vec<&str> = message.lines().collect();
    let host = stack.relay_url.strip_prefix("http://").unwrap();
    assert_eq!(lines[0], format!("{host} wants you to sign in with your Solana account:"));
    assert_eq!(lines[1], wallet);
    assert_eq!(lines[3], "Issue an API key for the private inference service with the scopes: chat.");
    assert_eq!(lines[5], format!("URI: {}", stack.relay_url));
    assert_eq!(&lines[6..9], ["Version: 1", "Chain ID: mainnet", &format!("Nonce: {}", ch["nonce"].as_str().unwrap())]);
    assert!(lines[9].starts_with("Issued At: 20") && lines[10].starts_with("Expiration Time: 20"), "{message}");
    // Verified with more scopes than signed: the message differs, so the signature fails.
    let signature = shared::ledger::format_id(&wallet_key.sign(message.as_bytes()).to_bytes());
    let answer = serde_json::json!({"wallet": wallet, "nonce": ch["nonce"], "signature": signature,
                                    "scopes": ["chat", "keys"]});
    let (s, body) = post(&stack, "/api/v1/auth/verify", answer, None).await;
    assert_eq!((s, body["error"].as_str()), (401, Some("unauthorized")), "{body}");
    // The scopes signed for: a chat-only key.
    let (s, issued) = sign_in_with(&stack, &wallet_key, Some(&["chat"])).await;
    assert_eq!((s, issued["scopes"].as_str()), (201, Some("chat")));
    let (s, _) = balance(&stack, issued["apiKey"].as_str()).await;
    assert_eq!(s, 403, "a chat-only key cannot read the account");
    // Unknown or empty scopes: 400 before any challenge.
    for scopes in [serde_json::json!(["admin"]), serde_json::json!([])] {
        let (s, body) =
            post(&stack, "/api/v1/auth/challenge", serde_json::json!({"wallet": wallet, "scopes": scopes}), None).await;
        assert_eq!((s, body["error"].as_str()), (400, Some("invalid_field")), "{body}");
    }
}
