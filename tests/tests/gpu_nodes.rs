//! GPU nodes prove themselves before they see a prompt (issue 28, docs/gpu.md), end to end: the
//! real enclave and relay processes, the real model server behind stand-in GPU nodes
//! (`e2e::gpu_node`), and a canary in every prompt. One enclave serves three models, each on a
//! node of its own: an honest one, and two hostile ones that must get no plaintext. Every other
//! way a node's evidence can be wrong is refused in `shared/tests/gpu_node.rs`.

use std::process::Command;

use client::chat::ChatOptions;
use e2e::gpu_node::{Behaviour, GpuNodeStandin, H100_DRIVER_RIM, H100_VBIOS_RIM};
use e2e::{Stack, StackOptions};
use rand_core::{OsRng, RngCore};
use serde_json::{Value, json};
use shared::envelope::{self, PromptPlaintext};

/// The golden values of the H100 sample's firmware, made by the real tool from NVIDIA's RIMs.
fn gpu_policy() -> Value {
    let out = Command::new(e2e::binary("svc"))
        .args(["gpu-reference", "--driver-rim", H100_DRIVER_RIM, "--vbios-rim", H100_VBIOS_RIM])
        .args(["--board", "1010-0200-882", "--pins"])
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/../measurements/gpu-rim-pins.json"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    json!({"firmware": [serde_json::from_slice::<Value>(&out.stdout).unwrap()]})
}

fn canary() -> String {
    let mut bytes = [0u8; 8];
    OsRng.fill_bytes(&mut bytes);
    format!("CANARY-{}", hex::encode(bytes))
}

fn now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs()
}

/// Posts a prompt sealed by hand to `/tee/process` for `model`.
async fn post_sealed(stack: &Stack, model: &str, prompt: &str) -> (u16, Value) {
    let key = stack.client().public_key().await.unwrap();
    let key: [u8; 32] = shared::b64::decode_array(&key.public_key).unwrap();
    let pt = serde_json::to_vec(&PromptPlaintext::from_prompt(prompt, now())).unwrap();
    let sealed = envelope::seal(&key, &pt, &mut OsRng).unwrap().0;
    let r = reqwest::Client::new()
        .post(format!("{}/tee/process", stack.relay_url))
        .bearer_auth(&stack.api_key)
        .json(&json!({"encryptedPrompt": sealed.to_json_string(), "model": model}))
        .send()
        .await
        .unwrap();
    (r.status().as_u16(), r.json().await.unwrap())
}

#[tokio::test(flavor = "multi_thread")]
async fn only_a_node_whose_quote_and_gpus_verify_sees_the_prompt() {
    let upstream = e2e::llm_base_url();
    let honest = GpuNodeStandin::start(Behaviour::Honest, 1, &upstream).await;
    let replayed = GpuNodeStandin::start(Behaviour::ReplayedGpuEvidence, 1, &upstream).await;
    let devtools = GpuNodeStandin::start(Behaviour::Devtools, 1, &upstream).await;
    let policy = gpu_policy();
    let served = [("gpt-oss:20b", &honest), ("qwen3.8:27b", &replayed), ("gemma4:31b", &devtools)];
    let models: serde_json::Map<String, Value> = served
        .iter()
        .map(|(model, node)| {
            let entry = json!({"endpoint": node.base_url, "upstreamModel": "smollm2-135m", "maxTokens": 16,
                               "tlsPinSha256": hex::encode(node.pin)});
            (model.to_string(), entry)
        })
        .collect();
    let nodes: Vec<Value> = served.iter().map(|(_, node)| node.enclave_entry(&policy)).collect();
    let stack = tokio::task::spawn_blocking(move || {
        Stack::start_with(StackOptions {
            enclave: json!({"models": models, "gpuNodes": nodes}),
            ..StackOptions::default()
        })
    })
    .await
    .unwrap();

    // The honest node: attested once, then it serves; the client checks the receipt as usual.
    let secret = canary();
    let options = ChatOptions { model: Some("gpt-oss:20b".into()), max_tokens: Some(8), ..ChatOptions::default() };
    let out = stack.client().chat(&format!("Repeat: {secret}"), &options).await.unwrap();
    assert_eq!(out.model, "gpt-oss:20b");
    assert!(honest.received_contains(&secret), "the attested node got the prompt");
    assert_eq!(honest.attestations(), 1);
    stack.client().chat("And again?", &options).await.unwrap();
    assert_eq!(honest.attestations(), 1, "the verdict is reused while fresh");

    // Each hostile node: asked to attest, refused, and never sent a byte of the prompt.
    for (model, node, reason) in [
        ("qwen3.8:27b", &replayed, "GPU 0: the report answers another nonce"),
        ("gemma4:31b", &devtools, "GPU 0: measurement 4 is not a golden value"),
    ] {
        let secret = canary();
        let (status, body) = post_sealed(&stack, model, &format!("Repeat: {secret}")).await;
        assert_eq!((status, body["error"].as_str()), (502, Some("gpu_not_attested")), "{model}: {body}");
        let message = body["message"].as_str().unwrap();
        assert!(message.contains(reason), "{model}: {message}");
        assert!(node.attestations() >= 1, "{model}: the node was asked to attest");
        assert_eq!(node.received_len(), 0, "{model}: the refused node got no request at all");
        assert!(!node.received_contains(&secret));
        // A refusal is not cached as a pass: the node is asked again next time.
        let before = node.attestations();
        let (status, _) = post_sealed(&stack, model, "again").await;
        assert_eq!(status, 502);
        assert_eq!(node.attestations(), before + 1, "{model}");
    }
}
