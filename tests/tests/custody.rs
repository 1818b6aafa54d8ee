//! Custody end to end (DESIGN §10, docs/custody.md), real processes: a dev enclave starts
//! unprovisioned; `svc provision` (with a secrets file the real `age` CLI encrypted) verifies it
//! and releases the bundle, after which encrypted `/agent` calls the web-search stand-in with
//! the Brave key the bundle carried; every way a bundle can be wrong is refused with its code;
//! sealed objects survive an enclave restart through the `svc keyholder` daemon, and a tampered
//! blob does not open; KEK rotation opens old blobs and re-seals them.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use e2e::keyholder::{age_encrypt, dev_measurements_path, has_age, provisioner_file, spawn as keyholder};
use e2e::{Stack, StackOptions};
use ed25519_dalek::SigningKey;
use rand_core::OsRng;
use serde_json::{Value, json};
use shared::envelope::{self, Purpose};
use shared::provision::{Bundle, Secret};
use standins::openai::{self, Turn};

const BRAVE_TOKEN: &str = "bundle-brave-token";

/// `svc` against the stack, trusting its dev root and `measurements`.
fn svc(stack: &Stack, measurements: &Path, args: &[&str]) -> std::process::Output {
    Command::new(e2e::binary("svc"))
        .args(["--relay", &stack.relay_url, "--measurements"])
        .arg(measurements)
        .arg("--dev-root")
        .arg(stack.dev_root_pem_path())
        .args(args)
        .output()
        .unwrap()
}

async fn attestation(stack: &Stack) -> Value {
    reqwest::get(format!("{}/tee/attestation", stack.relay_url)).await.unwrap().json().await.unwrap()
}

fn secrets_json(version: u64, kek: [u8; 32], previous: &[[u8; 32]]) -> Value {
    json!({
        "version": version,
        "kek": shared::b64::encode(kek),
        "previousKeks": previous.iter().map(shared::b64::encode).collect::<Vec<_>>(),
        "credentials": {"brave": BRAVE_TOKEN},
    })
}

struct Fixture {
    stack: Stack,
    brave: standins::brave::Recorder,
    _servers: Vec<standins::Running>,
}

/// A stack whose enclave is NOT provisioned at start, whose model calls `web_search` first.
async fn fixture() -> Fixture {
    let search = || Turn::call("web_search", json!({"query": "custody"}));
    let turns = vec![search(), Turn::text("done"), search(), Turn::text("done"), search(), Turn::text("done")];
    let (model_server, _) = openai::start(turns).await;
    let (brave_server, brave) = standins::brave::start(BRAVE_TOKEN).await;
    let options = StackOptions {
        model_base_url: Some(format!("{}/v1", model_server.base_url)),
        model_max_tokens: 32,
        tools: json!({"upstreams": {"brave": {"baseUrl": brave_server.base_url}}}),
        provision: false,
        ..StackOptions::default()
    };
    let stack = tokio::task::spawn_blocking(move || Stack::start_with(options)).await.unwrap();
    Fixture { stack, brave, _servers: vec![model_server, brave_server] }
}

fn guest(stack: &Stack) -> client::Client {
    client::Client::new(&stack.relay_url, None).with_attestation(stack.attest_options())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn svc_provision_releases_the_bundle_and_tools_get_its_credentials() {
    if !has_age() {
        eprintln!("the `age` CLI is not installed: custody test not run (tools/test.sh installs it)");
        return;
    }
    let f = fixture().await;
    let dir = f.stack.dir.path();
    // Not provisioned; the witness it heeds (its measured configuration's) is named.
    assert_eq!(
        attestation(&f.stack).await["provisioning"],
        json!({"provisioned": false, "witnessKeys": [e2e::provisioner_public()]})
    );

    // Unprovisioned: the tool that needs a credential says so, and the stand-in sees nothing.
    let out = guest(&f.stack).agent_private("search please", None).await.unwrap();
    let result = out.tool_calls[0].result.to_string();
    assert!(result.contains("not_provisioned"), "{result}");
    assert!(f.brave.requests().is_empty());

    // `svc provision` with a secrets file the `age` CLI encrypted.
    let (secrets, identity) = age_encrypt(dir, "secrets", &secrets_json(1, [1; 32], &[]));
    let key = provisioner_file(dir, &e2e::provisioner());
    let args = ["provision", "--secrets", secrets.to_str().unwrap(), "--provisioner-key", key.to_str().unwrap()];
    let out = Command::new(e2e::binary("svc"))
        .args(["--relay", &f.stack.relay_url, "--measurements"])
        .arg(dev_measurements_path())
        .arg("--dev-root")
        .arg(f.stack.dev_root_pem_path())
        .args(args)
        .args(["--identity", identity.to_str().unwrap()])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("bundle v1"), "{stdout}");
    let att = attestation(&f.stack).await;
    assert_eq!(att["provisioning"]["provisioned"], true);
    assert_eq!(att["provisioning"]["bundleVersion"], 1);
    assert_eq!(att["provisioning"]["provisionerKey"], e2e::provisioner_public());
    let shown = String::from_utf8_lossy(&svc(&f.stack, &dev_measurements_path(), &["attest"]).stdout).to_string();
    assert!(shown.contains("provisioned: yes (bundle v1"), "{shown}");

    // Now the Brave key of the bundle reaches the stand-in, which checks it.
    let out = guest(&f.stack).agent_private("search please", None).await.unwrap();
    assert!(out.tool_calls[0].result["results"].is_array(), "{:?}", out.tool_calls[0].result);
    let seen = f.brave.requests();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].token.as_deref(), Some(BRAVE_TOKEN));

    // The secret appears in no log and no row.
    for log in [f.stack.relay.log_text(), f.stack.enclave.log_text()] {
        assert!(!log.contains(BRAVE_TOKEN));
    }
}

/// Seals `bundle` signed by `signer` to the enclave key `tee`, as a key holder would.
fn sealed_bundle(bundle: &Bundle, signer: &SigningKey, tee: &[u8; 32]) -> String {
    let signed = shared::provision::sign(bundle, signer);
    let bytes = serde_json::to_vec(&signed).unwrap();
    envelope::seal_for(Purpose::Provision, tee, &bytes, &mut OsRng).unwrap().0.to_json_string()
}

async fn post_bundle(stack: &Stack, encrypted_bundle: &str) -> (u16, Value) {
    let body = json!({"encryptedBundle": encrypted_bundle});
    e2e::http::post(&format!("{}/tee/provision", stack.relay_url), &body, None).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_wrong_bundle_is_refused_with_its_code_and_the_enclave_keeps_serving() {
    let f = fixture().await;
    let key: Value = reqwest::get(format!("{}/tee/public-key", f.stack.relay_url)).await.unwrap().json().await.unwrap();
    let tee: [u8; 32] = shared::b64::decode_array(key["publicKey"].as_str().unwrap()).unwrap();
    let key_id = hex::encode(shared::sha256(&tee));
    let bundle = |version: u64, enclave_key_id: &str| Bundle {
        version,
        enclave_key_id: enclave_key_id.into(),
        issued_at: 1_800_000_000,
        kek: Secret::new(shared::b64::encode([3u8; 32])),
        previous_keks: Vec::new(),
        credentials: Default::default(),
        heads: Default::default(),
    };
    let ours = e2e::provisioner();
    let cases: Vec<(&str, String, u16, &str)> = vec![
        (
            "another provisioner",
            sealed_bundle(&bundle(1, &key_id), &SigningKey::from_bytes(&[0x71; 32]), &tee),
            403,
            "unknown_provisioner",
        ),
        ("for another enclave", sealed_bundle(&bundle(1, &"ab".repeat(32)), &ours, &tee), 400, "wrong_enclave_key"),
        ("malformed", "{\"publicKey\": 1}".into(), 400, "invalid_envelope"),
    ];
    for (name, body, status, code) in cases {
        let (got, answer) = post_bundle(&f.stack, &body).await;
        assert_eq!((got, answer["error"].as_str()), (status, Some(code)), "{name}: {answer}");
    }
    // A relay that alters the ciphertext.
    let good = sealed_bundle(&bundle(2, &key_id), &ours, &tee);
    let mut altered: Value = serde_json::from_str(&good).unwrap();
    let mut ct = shared::b64::decode(altered["ciphertext"].as_str().unwrap()).unwrap();
    ct[10] ^= 1;
    altered["ciphertext"] = json!(shared::b64::encode(ct));
    let (status, answer) = post_bundle(&f.stack, &altered.to_string()).await;
    assert_eq!((status, answer["error"].as_str()), (400, Some("decrypt_failed")), "{answer}");
    // A prompt envelope is not a bundle: its purpose label differs.
    let signed = serde_json::to_vec(&shared::provision::sign(&bundle(2, &key_id), &ours)).unwrap();
    let as_prompt = envelope::seal(&tee, &signed, &mut OsRng).unwrap().0.to_json_string();
    let (status, answer) = post_bundle(&f.stack, &as_prompt).await;
    assert_eq!((status, answer["error"].as_str()), (400, Some("decrypt_failed")), "{answer}");
    assert_eq!(attestation(&f.stack).await["provisioning"]["provisioned"], false, "nothing was installed");

    // The good one, then the same again (replayed), then an older version.
    let (status, answer) = post_bundle(&f.stack, &good).await;
    assert_eq!((status, answer["bundleVersion"].as_u64()), (200, Some(2)), "{answer}");
    let (status, answer) = post_bundle(&f.stack, &good).await;
    assert_eq!((status, answer["error"].as_str()), (409, Some("stale_bundle")), "{answer}");
    let older = sealed_bundle(&bundle(1, &key_id), &ours, &tee);
    let (status, answer) = post_bundle(&f.stack, &older).await;
    assert_eq!((status, answer["error"].as_str()), (409, Some("stale_bundle")), "{answer}");
    assert_eq!(attestation(&f.stack).await["provisioning"]["bundleVersion"], 2);
    // Still serving.
    assert!(guest(&f.stack).agent_private("still there?", None).await.is_ok());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn svc_provision_sends_nothing_to_an_enclave_that_fails_verification() {
    if !has_age() {
        eprintln!("the `age` CLI is not installed: custody test not run (tools/test.sh installs it)");
        return;
    }
    let f = fixture().await;
    let dir = f.stack.dir.path();
    let (secrets, identity) = age_encrypt(dir, "secrets", &secrets_json(1, [1; 32], &[]));
    let key = provisioner_file(dir, &e2e::provisioner());
    // Wrong measurements: an image nobody published.
    let wrong = dir.join("wrong-measurements.json");
    let mut m: Value = serde_json::from_str(&std::fs::read_to_string(dev_measurements_path()).unwrap()).unwrap();
    m["images"][0]["rtmr2"] = json!("00".repeat(48));
    std::fs::write(&wrong, m.to_string()).unwrap();
    let args = [
        "provision",
        "--secrets",
        secrets.to_str().unwrap(),
        "--provisioner-key",
        key.to_str().unwrap(),
        "--identity",
        identity.to_str().unwrap(),
    ];
    let out = svc(&f.stack, &wrong, &args);
    assert_eq!(out.status.code(), Some(10), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("rtmr2_mismatch"));
    // An untrusted root: Intel's instead of the dev root.
    let out = Command::new(e2e::binary("svc"))
        .args(["--relay", &f.stack.relay_url, "--measurements"])
        .arg(dev_measurements_path())
        .args(args)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(10), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("untrusted_root"));
    // Nothing reached the relay's provisioning route, and nothing was installed.
    assert!(!f.stack.relay.log_text().contains("/tee/provision"));
    assert_eq!(attestation(&f.stack).await["provisioning"]["provisioned"], false);
}

/// `relay admin objects …` against the stack's relay configuration; the JSON it prints.
fn admin_objects(stack: &Stack, args: &[&str]) -> Result<Value, String> {
    let out = Command::new(e2e::binary("relay"))
        .arg("--config")
        .arg(stack.dir.path().join("relay.json"))
        .arg("admin")
        .arg("objects")
        .args(args)
        .env_remove("DATABASE_URL")
        .output()
        .unwrap();
    match out.status.success() {
        true => Ok(serde_json::from_str(String::from_utf8_lossy(&out.stdout).trim()).unwrap()),
        false => Err(String::from_utf8_lossy(&out.stderr).to_string()),
    }
}

async fn wait_provisioned(stack: &Stack, version: u64) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let att = attestation(stack).await;
        if att["provisioning"]["bundleVersion"] == version {
            return;
        }
        assert!(Instant::now() < deadline, "the key holder did not provision v{version}: {att}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sealed_objects_outlive_a_restart_through_the_key_holder_and_rotate() {
    if !has_age() {
        eprintln!("the `age` CLI is not installed: custody test not run (tools/test.sh installs it)");
        return;
    }
    let mut f = fixture().await;
    let dir = f.stack.dir.path().to_path_buf();
    let (secrets, identity) = age_encrypt(&dir, "secrets-v1", &secrets_json(1, [1; 32], &[]));
    let key = provisioner_file(&dir, &e2e::provisioner());

    // Unprovisioned, the enclave cannot make objects.
    let refused = admin_objects(&f.stack, &["new", "--kind", "signing-key"]).unwrap_err();
    assert!(refused.contains("not_provisioned"), "{refused}");

    let mut holder = keyholder(&f.stack, &secrets, &identity, &key, "keyholder-v1.log");
    wait_provisioned(&f.stack, 1).await;
    let objects: Vec<Value> =
        (0..3).map(|_| admin_objects(&f.stack, &["new", "--kind", "signing-key"]).unwrap()).collect();
    for o in &objects {
        assert_eq!(o["kind"], "signing-key");
        assert!(o["publicKey"].as_str().is_some_and(|k| k.len() >= 32));
    }

    // Restart: new keys; the key holder notices and provisions the new boot by itself.
    tokio::task::block_in_place(|| f.stack.restart_enclave());
    wait_provisioned(&f.stack, 1).await;
    for o in &objects {
        let opened = admin_objects(&f.stack, &["open", "--id", o["id"].as_str().unwrap()]).unwrap();
        assert_eq!(opened["publicKey"], o["publicKey"], "the same key opened after the restart");
        assert!(opened.get("rewrapped").is_none());
    }
    assert!(holder.log_text().matches("released the secrets bundle").count() >= 2, "{}", holder.log_text());
    holder.stop();

    // KEK rotation: v2 carries a new KEK and the old one; old blobs open and are re-sealed,
    // lazily on open and for the rest in one pass.
    let (secrets2, identity2) = age_encrypt(&dir, "secrets-v2", &secrets_json(2, [2; 32], &[[1; 32]]));
    let mut holder2 = keyholder(&f.stack, &secrets2, &identity2, &key, "keyholder-v2.log");
    wait_provisioned(&f.stack, 2).await;
    let lazily = admin_objects(&f.stack, &["open", "--id", objects[0]["id"].as_str().unwrap()]).unwrap();
    assert!(lazily["rewrapped"].is_string(), "opened under the old KEK, re-sealed: {lazily}");
    let again = admin_objects(&f.stack, &["open", "--id", objects[0]["id"].as_str().unwrap()]).unwrap();
    assert!(again.get("rewrapped").is_none(), "the stored blob was replaced: {again}");
    let fresh = admin_objects(&f.stack, &["new", "--kind", "signing-key"]).unwrap();
    let pass = admin_objects(&f.stack, &["rewrap"]).unwrap();
    assert_eq!(pass, json!({"objects": 4, "rewrapped": 2}), "the two not yet re-sealed");
    holder2.stop();
    // v3 drops the old KEK: every object still opens.
    let (secrets3, identity3) = age_encrypt(&dir, "secrets-v3", &secrets_json(3, [2; 32], &[]));
    let mut holder3 = keyholder(&f.stack, &secrets3, &identity3, &key, "keyholder-v3.log");
    wait_provisioned(&f.stack, 3).await;
    for o in objects.iter().chain([&fresh]) {
        let opened = admin_objects(&f.stack, &["open", "--id", o["id"].as_str().unwrap()]).unwrap();
        assert_eq!(opened["publicKey"], o["publicKey"]);
    }
    holder3.stop();

    // A blob the relay altered does not open.
    let db = format!("sqlite://{}?mode=rw", f.stack.relay_data_dir().join("relay.sqlite3").display());
    sqlx::any::install_default_drivers();
    let pool = sqlx::AnyPool::connect(&db).await.unwrap();
    let blob_of = |id: &str| {
        let pool = pool.clone();
        let id = id.to_string();
        async move {
            let (blob,): (String,) = sqlx::query_as("SELECT blob FROM sealed_objects WHERE id = $1")
                .bind(id)
                .fetch_one(&pool)
                .await
                .unwrap();
            blob
        }
    };
    let set_blob = |id: &str, blob: String| {
        let pool = pool.clone();
        let id = id.to_string();
        async move {
            sqlx::query("UPDATE sealed_objects SET blob = $1 WHERE id = $2")
                .bind(blob)
                .bind(id)
                .execute(&pool)
                .await
                .unwrap();
        }
    };
    let id = |i: usize| objects[i]["id"].as_str().unwrap().to_string();
    let mut bytes = shared::b64::decode(&blob_of(&id(0)).await).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    set_blob(&id(0), shared::b64::encode(&bytes)).await;
    let refused = admin_objects(&f.stack, &["open", "--id", &id(0)]).unwrap_err();
    assert!(refused.contains("sealed_object_invalid"), "{refused}");
    // One moved to another object's row opens as that other object, which the relay catches.
    set_blob(&id(2), blob_of(&id(1)).await).await;
    let refused = admin_objects(&f.stack, &["open", "--id", &id(2)]).unwrap_err();
    assert!(refused.contains("another object"), "{refused}");
}
