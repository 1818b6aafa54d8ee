//! GPU nodes prove themselves before they see a prompt (issue 28, docs/gpu.md), end to end: the
//! real enclave and relay processes, the real model server behind stand-in GPU nodes
//! (`e2e::gpu_node`), and a canary in every prompt. One enclave serves three models, each on a
//! node of its own: an honest one, and two hostile ones that must get no plaintext. Every other
//! way a node's evidence can be wrong is refused in `shared/tests/gpu_node.rs`.

use std::process::Command;

use client::chat::ChatOptions;
use e2e::gpu_agent::GpuNodeAgent;
use e2e::gpu_node::{Behaviour, GpuNodeStandin, H100_DRIVER_RIM, H100_VBIOS_RIM, enclave_entry};
use e2e::{Stack, StackOptions};
use rand_core::{OsRng, RngCore};
use serde_json::{Value, json};
use shared::envelope::{self, PromptPlaintext};
use shared::time::unix_now;

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

/// Posts a prompt sealed by hand to `/tee/process` for `model`.
async fn post_sealed(stack: &Stack, model: &str, prompt: &str) -> (u16, Value) {
    let key = stack.client().public_key().await.unwrap();
    let key: [u8; 32] = shared::b64::decode_array(&key.public_key).unwrap();
    let pt = serde_json::to_vec(&PromptPlaintext::from_prompt(prompt, unix_now())).unwrap();
    let sealed = envelope::seal(&key, &pt, &mut OsRng).unwrap().0;
    let body = json!({"encryptedPrompt": sealed.to_json_string(), "model": model});
    e2e::http::post(&format!("{}/tee/process", stack.relay_url), &body, Some(&stack.api_key)).await
}

#[tokio::test(flavor = "multi_thread")]
async fn only_a_node_whose_quote_and_gpus_verify_sees_the_prompt() {
    let upstream = e2e::llm_base_url();
    // An eight-GPU board, and two one-GPU nodes; on the devtools node its only GPU is off.
    let honest = GpuNodeStandin::start(Behaviour::Honest, 8, &upstream).await;
    let replayed = GpuNodeStandin::start(Behaviour::ReplayedGpuEvidence, 1, &upstream).await;
    let devtools = GpuNodeStandin::start(Behaviour::Devtools, 1, &upstream).await;
    let policy = gpu_policy();
    let served = [("gpt-oss:20b", &honest, 8), ("qwen3.8:27b", &replayed, 1), ("gemma4:31b", &devtools, 1)];
    let models: serde_json::Map<String, Value> = served
        .iter()
        .map(|(model, node, _)| {
            let entry = json!({"endpoint": node.base_url, "upstreamModel": "smollm2-135m", "maxTokens": 16,
                               "tlsPinSha256": hex::encode(node.pin)});
            (model.to_string(), entry)
        })
        .collect();
    let nodes: Vec<Value> = served.iter().map(|(_, node, gpus)| node.enclave_entry(*gpus, &policy)).collect();
    let stack = tokio::task::spawn_blocking(move || {
        Stack::start_with(StackOptions {
            // Short enough for the test to see a node attest again after each.
            enclave: json!({"models": models, "gpuNodes": nodes, "gpuReattestSecs": 6, "modelTimeoutSecs": 10}),
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
    // The reply names the node beside the receipt, signed by the receipt's enclave key (the
    // client checked it; check it again here, and that it names this node's eight GPUs).
    let served_by = out.served_by.expect("a statement of the node that served it");
    assert_eq!(served_by.node, hex::encode(honest.pin));
    assert_eq!(served_by.gpu_fwids.len(), 8);
    assert_eq!(served_by.verify(&out.receipt), Ok(()));
    let again = stack.client().chat("And again?", &options).await.unwrap();
    assert_eq!(honest.attestations(), 1, "the verdict is reused while fresh");
    assert_eq!(again.served_by.map(|s| s.gpu_evidence_sha256), Some(served_by.gpu_evidence_sha256));

    // The attestation document shows the verdict of the node that attested, none for the others.
    let (report, _) = stack.client().attest().await.unwrap();
    let status = |model: &str| report.gpu_nodes.iter().find(|n| n.models == [model]).unwrap().clone();
    let verdict = status("gpt-oss:20b").verdict.expect("the honest node's verdict");
    assert_eq!((verdict.tls_spki_sha256, verdict.gpus.len()), (hex::encode(honest.pin), 8));
    assert!(
        verdict.trust_root.starts_with("dev:") && verdict.device_root.starts_with("dev:"),
        "development roots, said"
    );
    assert!(verdict.gpus.iter().all(|g| g.driver == "550.90.07" && g.measurements_matched == 33));
    assert_eq!(status("qwen3.8:27b").verdict, None);
    // `svc attest` shows the same, in words.
    let out = Command::new(e2e::binary("svc"))
        .args(["--relay", &stack.relay_url, "--api-key", &stack.api_key, "--measurements"])
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/../measurements/dev.json"))
        .arg("--dev-root")
        .arg(stack.dev_root_pem_path())
        .arg("attest")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    let line = format!("gpu node {} (gpt-oss:20b; 8 GPU(s) required): attested at", hex::encode(honest.pin));
    assert!(text.contains(&line), "{text}");
    assert!(
        text.contains("GPU 7: driver 550.90.07, VBIOS 96.00.9F.00.01, board 1010-0200-882, 33 measurements"),
        "{text}"
    );
    assert!(text.contains("(qwen3.8:27b; 1 GPU(s) required): not attested yet"), "{text}");

    // A node that hangs mid-call is attested again before its next prompt, and so is every
    // node once its verdict is `gpuReattestSecs` old.
    honest.stall(true);
    let hung = stack.client().chat("Hello?", &options).await.unwrap_err().to_string();
    assert!(hung.contains("model_error"), "{hung}");
    honest.stall(false);
    let before = honest.attestations();
    stack.client().chat("Hello again?", &options).await.unwrap();
    assert_eq!(honest.attestations(), before + 1, "attested again after the failed call");
    tokio::time::sleep(std::time::Duration::from_millis(6_500)).await;
    stack.client().chat("Still there?", &options).await.unwrap();
    assert_eq!(honest.attestations(), before + 2, "attested again once the verdict was old");

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

/// The real agent, not the stand-in: the enclave attests `svc-gpu-node` (development GPUs and
/// quotes, NVIDIA's OCSP responder stood in for) on the key the agent printed, then sends it
/// the prompt, and the reply names it.
#[tokio::test(flavor = "multi_thread")]
async fn the_node_agent_is_attested_then_serves() {
    let agent = GpuNodeAgent::start(2, &e2e::llm_base_url()).await;
    let models = json!({"gpt-oss:20b": {"endpoint": agent.base_url, "upstreamModel": "smollm2-135m",
                                        "maxTokens": 16, "tlsPinSha256": hex::encode(agent.pin)}});
    let nodes = vec![enclave_entry(&agent.pin, 2, &gpu_policy())];
    let stack = tokio::task::spawn_blocking(move || {
        Stack::start_with(StackOptions {
            enclave: json!({"models": models, "gpuNodes": nodes, "modelTimeoutSecs": 20}),
            ..StackOptions::default()
        })
    })
    .await
    .unwrap();

    let options = ChatOptions { model: Some("gpt-oss:20b".into()), max_tokens: Some(8), ..ChatOptions::default() };
    let out = stack.client().chat("Name a colour.", &options).await.unwrap();
    let served_by = out.served_by.expect("a statement of the node that served it");
    assert_eq!(served_by.node, hex::encode(agent.pin));
    assert_eq!(served_by.gpu_fwids.len(), 2);
    assert_eq!(served_by.verify(&out.receipt), Ok(()));
    // It stapled: each GPU's BROM, and once the ICA both share.
    assert_eq!(agent.ocsp.requests().len(), 3);

    let (report, _) = stack.client().attest().await.unwrap();
    let verdict = report.gpu_nodes[0].verdict.clone().expect("the agent's verdict");
    assert_eq!((verdict.tls_spki_sha256.as_str(), verdict.gpus.len()), (hex::encode(agent.pin).as_str(), 2));
    assert!(verdict.gpus.iter().all(|g| g.driver == "550.90.07" && g.measurements_matched == 33), "{verdict:?}");
}
