//! Several enclaves behind one relay (DESIGN §10): each is listed with its attestation, each is
//! provisioned on its own, requests reach the enclave whose key their envelope names, and when
//! one restarts under load, clients recover through the key-refetch path with no reply opened
//! wrongly and no receipt that fails its checks.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use e2e::{Stack, StackOptions};
use serde_json::Value;
use standins::openai::{self, Turn};

async fn two_enclaves() -> (Stack, standins::Running) {
    let (model_server, _) = openai::start(vec![Turn::text("from some enclave")]).await;
    let options = StackOptions {
        model_base_url: Some(format!("{}/v1", model_server.base_url)),
        extra_enclaves: 1,
        // Clients here call in a tight loop from one address.
        relay: serde_json::json!({"rateLimits": {"perAddressPerMinute": 0, "perKeyPerMinute": 0}}),
        ..StackOptions::default()
    };
    let stack = tokio::task::spawn_blocking(move || Stack::start_with(options)).await.unwrap();
    (stack, model_server)
}

fn key_id_hex(port: u16) -> String {
    hex::encode(e2e::enclave_key_id(port))
}

/// Requests served per enclave, from each enclave's own log.
fn served(stack: &Stack) -> Vec<usize> {
    std::iter::once(stack.enclave.log_text())
        .chain(stack.others.iter().map(|(p, _)| p.log_text()))
        .map(|log| log.matches("route=\"process\"").count() + log.matches("route=process").count())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn both_enclaves_are_listed_provisioned_and_reached_by_key_id() {
    let (stack, _model) = two_enclaves().await;
    let keys: Value = reqwest::get(format!("{}/tee/keys", stack.relay_url)).await.unwrap().json().await.unwrap();
    let listed = keys["enclaves"].as_array().unwrap();
    assert_eq!(listed.len(), 2);
    let ids: Vec<String> = stack.enclave_ports().into_iter().map(key_id_hex).collect();
    for (entry, id) in listed.iter().zip(&ids) {
        assert_eq!(entry["keyId"], id.as_str());
        assert_eq!(entry["healthy"], true);
        assert_eq!(entry["attestation"]["teePublicKeySha256"], id.as_str());
        assert_eq!(entry["attestation"]["provisioning"]["provisioned"], true, "each provisioned on its own");
    }
    assert_ne!(ids[0], ids[1]);

    // The attestation of a chosen key, and a key no enclave holds.
    for id in &ids {
        let att: Value = reqwest::get(format!("{}/tee/attestation?keyId={id}", stack.relay_url))
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(&att["teePublicKeySha256"], id);
    }
    let response =
        reqwest::get(format!("{}/tee/attestation?keyId={}", stack.relay_url, "ab".repeat(32))).await.unwrap();
    assert_eq!(response.status(), 400);

    // Many clients: each attests some enclave and seals to its key; every reply opens and every
    // receipt names the key the client sealed to (the client checks both); both enclaves serve.
    let mut tasks = Vec::new();
    for _ in 0..12 {
        let client = stack.client();
        tasks.push(tokio::spawn(async move { client.chat("hi", &Default::default()).await.map(|_| ()) }));
    }
    for t in tasks {
        if let Err(e) = t.await.unwrap() {
            panic!(
                "{e}\nrelay log:\n{}",
                stack
                    .relay
                    .log_text()
                    .lines()
                    .filter(|l| l.contains("ERROR") || l.contains("WARN"))
                    .collect::<Vec<_>>()
                    .join("\n")
            );
        }
    }
    let counts = served(&stack);
    assert_eq!(counts.iter().sum::<usize>(), 12, "{counts:?}");
    assert!(counts.iter().all(|c| *c > 0), "requests reach both enclaves: {counts:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_restart_under_load_is_recovered_by_refetching_the_key() {
    let (mut stack, _model) = two_enclaves().await;
    let stop = Arc::new(AtomicBool::new(false));
    let ok = Arc::new(AtomicUsize::new(0));
    let retryable = Arc::new(AtomicUsize::new(0));
    let mut workers = Vec::new();
    for _ in 0..4 {
        let client = stack.client();
        let (stop, ok, retryable) = (stop.clone(), ok.clone(), retryable.clone());
        workers.push(tokio::spawn(async move {
            let mut wrong = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                match client.chat("under load", &Default::default()).await {
                    Ok(_) => {
                        ok.fetch_add(1, Ordering::Relaxed);
                    }
                    // The enclave went away or took a new key: the contract's recovery path
                    // (the client already dropped its cached key and retried once).
                    Err(e) if e.means_stale_key() || matches!(e, client::ClientError::NotAttested(_)) => {
                        retryable.fetch_add(1, Ordering::Relaxed);
                    }
                    Err(e) => wrong.push(e.to_string()),
                }
            }
            wrong
        }));
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    let before = ok.load(Ordering::Relaxed);
    let old_id = key_id_hex(stack.others[0].1);
    tokio::task::block_in_place(|| stack.restart_other(0));
    assert_ne!(key_id_hex(stack.others[0].1), old_id, "a reboot makes a new key");
    // After the restart both enclaves serve again.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let after_restart = ok.load(Ordering::Relaxed);
    tokio::time::sleep(Duration::from_secs(2)).await;
    stop.store(true, Ordering::Relaxed);
    let mut wrong = Vec::new();
    for w in workers {
        wrong.extend(w.await.unwrap());
    }
    assert!(wrong.is_empty(), "only the recovery path may fail, never a check: {wrong:?}");
    assert!(before > 0 && ok.load(Ordering::Relaxed) > after_restart, "clients recovered and went on");
    // A request sealed to the old key is refused with the refetch signal, not forwarded.
    let stale = serde_json::json!({"publicKey": shared::b64::encode([1u8; 32]), "nonce": shared::b64::encode([2u8; 16]),
        "ciphertext": shared::b64::encode([3u8; 32]), "algorithm": "hpke-x25519-sha256-chacha20poly1305", "version": 1,
        "keyId": old_id});
    let response = reqwest::Client::new()
        .post(format!("{}/tee/process", stack.relay_url))
        .bearer_auth(&stack.api_key)
        .json(&serde_json::json!({"encryptedPrompt": stale.to_string()}))
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let body: Value = response.json().await.unwrap();
    assert_eq!((status, body["error"].as_str()), (400, Some("decrypt_failed")), "{body}");
    eprintln!(
        "ok before {before}, during/after {}, retryable {}",
        ok.load(Ordering::Relaxed),
        retryable.load(Ordering::Relaxed)
    );
}
