//! Attestation end to end: dev quotes through the real DCAP path, the trust root, the
//! unattested case, freshness, and `svc attest` online and offline with its exit codes.

use std::process::Command;

use client::ClientError;
use client::attest::AttestOptions;
use client::chat::ChatOptions;
use e2e::http::get;
use e2e::{Stack, StackOptions, binary, dev_measurements};
use serde_json::Value;
use shared::attest::{TrustRoot, Verdict};

fn options() -> ChatOptions {
    ChatOptions { max_tokens: Some(8), ..ChatOptions::default() }
}

fn svc(stack: &Stack, args: &[&str]) -> (i32, String, String) {
    e2e::run(
        Command::new(binary("svc"))
            .arg("--relay")
            .arg(&stack.relay_url)
            .arg("--api-key")
            .arg(&stack.api_key)
            .arg("--measurements")
            .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/../measurements/dev.json"))
            .args(args),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn dev_enclave_is_accepted_only_with_the_dev_root() {
    let stack = Stack::start();
    let (report, key) = stack.client().attest().await.unwrap();
    assert!(report.accepted(), "{report:#?}");
    assert_eq!(report.quote_provider, "dev");
    let binding = report.binding_quote.as_ref().unwrap();
    assert!(binding.check("nonce_signature").unwrap().ok);
    assert!(binding.trust_root.starts_with("dev:"));
    assert!(key.unwrap().binding_quote_hash.is_some());

    // Intel's root: the same enclave is refused, and chat sends nothing.
    let intel = stack.bare_client().with_attestation(AttestOptions::new(TrustRoot::Intel, dev_measurements()));
    let (report, key) = intel.attest().await.unwrap();
    assert_eq!((report.verdict, report.reason.as_deref()), (Verdict::Reject, Some("untrusted_root")));
    assert!(key.is_none());
    match intel.chat("must not be sent", &options()).await {
        Err(ClientError::NotAttested(r)) => assert_eq!(r.reason.as_deref(), Some("untrusted_root")),
        other => panic!("expected NotAttested, got {other:?}"),
    }
    // No policy at all: refused before any request.
    assert!(matches!(stack.bare_client().chat("x", &options()).await, Err(ClientError::NoPolicy)));
    assert!(!stack.relay.log_text().contains("/tee/process"), "a refused client must not send the prompt");

    // Other measurements: rejected for the register that differs.
    let mut m = dev_measurements();
    m.images[0].rtmr2[0] ^= 1;
    let wrong = stack.bare_client().with_attestation(AttestOptions::new(TrustRoot::Dev(stack.dev_root_der()), m));
    let (report, _) = wrong.attest().await.unwrap();
    assert_eq!(report.reason.as_deref(), Some("rtmr2_mismatch"));
}

#[tokio::test(flavor = "multi_thread")]
async fn chat_verifies_first_and_the_receipt_names_the_verified_quote() {
    let stack = Stack::start();
    let out = stack.client().chat("Say hello.", &options()).await.unwrap();
    let (s, att) = get(&format!("{}/tee/attestation", stack.relay_url)).await;
    assert_eq!(s, 200);
    let quote = shared::b64::decode(att["bindingTdxQuote"]["quote"].as_str().unwrap()).unwrap();
    assert_eq!(out.receipt.tdx_quote_hash, hex::encode(shared::sha256(&quote)));
}

#[tokio::test(flavor = "multi_thread")]
async fn unattested_enclave_is_refused_unless_allowed_and_then_flagged() {
    let stack = Stack::start_without_quotes();
    match stack.client().chat("x", &options()).await {
        Err(ClientError::NotAttested(r)) => {
            assert_eq!(r.reason.as_deref(), Some("tdx_quote_unavailable"))
        }
        other => panic!("expected NotAttested, got {other:?}"),
    }
    let mut allow = stack.attest_options();
    allow.allow_unattested = true;
    let out = stack.bare_client().with_attestation(allow).chat("Say hi.", &options()).await.unwrap();
    assert!(out.unattested && !out.quote_present);
    assert_eq!(out.receipt.tdx_quote_hash, "");

    // The CLI says so on every call.
    let (code, _, err) = svc(&stack, &["--allow-unattested", "chat", "--max-tokens", "4", "hi"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("NO TDX quote"), "{err}");
    let (code, _, err) = svc(&stack, &["chat", "--max-tokens", "4", "hi"]);
    assert_eq!(code, 1);
    assert!(err.contains("tdx_quote_unavailable"), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn nonce_is_checked_and_signed() {
    let stack = Stack::start();
    for bad in ["abc", "zz", &"0".repeat(63), &"0".repeat(65)] {
        let (s, body) = get(&format!("{}/tee/attestation?nonce={bad}", stack.relay_url)).await;
        assert_eq!((s, body["error"].as_str()), (400, Some("bad_request")), "{bad}");
    }
    let nonce = "ab".repeat(32);
    let (s, att) = get(&format!("{}/tee/attestation?nonce={nonce}", stack.relay_url)).await;
    assert_eq!(s, 200);
    assert_eq!(att["nonce"], nonce.as_str());
    // Verify by hand: ed25519 by enclavePublicKey over the domain-separated message.
    let tee: [u8; 32] = shared::b64::decode_array(att["teePublicKey"].as_str().unwrap()).unwrap();
    let enclave: [u8; 32] = shared::b64::decode_array(att["enclavePublicKey"].as_str().unwrap()).unwrap();
    let sig: [u8; 64] = shared::b64::decode_array(att["nonceSignature"].as_str().unwrap()).unwrap();
    let key = ed25519_dalek::VerifyingKey::from_bytes(&enclave).unwrap();
    let msg = shared::freshness::nonce_message(&[0xab; 32], &tee);
    assert!(key.verify_strict(&msg, &ed25519_dalek::Signature::from_bytes(&sig)).is_ok());
    let other = shared::freshness::nonce_message(&[0xac; 32], &tee);
    assert!(key.verify_strict(&other, &ed25519_dalek::Signature::from_bytes(&sig)).is_err());
}

#[test]
fn svc_attest_online_exit_codes_and_document() {
    let stack = Stack::start();
    let root = stack.dev_root_pem_path();
    let (code, out, err) = svc(&stack, &["--dev-root", root.to_str().unwrap(), "attest", "--json"]);
    assert_eq!(code, 0, "{err}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["verdict"], "accept");
    let names: Vec<&str> =
        doc["bindingQuote"]["checks"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap()).collect();
    for n in [
        "dcap",
        "tcb_status",
        "debug_off",
        "mrtd",
        "rtmr1",
        "rtmr2",
        "rtmr0",
        "mr_config_id",
        "report_data",
        "nonce_signature",
    ] {
        assert!(names.contains(&n), "{n} missing from {names:?}");
    }
    let (code, out, _) = svc(&stack, &["attest"]);
    assert_eq!(code, 10);
    assert!(out.contains("REJECT (untrusted_root)"), "{out}");
}

/// Real TDX quotes carry no collateral (configfs-tsm gives none). Without `collateral.pccsUrl` a
/// client has nothing to check them with; with it, the relay attaches what the PCS serves (here
/// the stand-in with the dev PKI's), asks once per platform, and changes nothing else in the
/// enclave's document.
#[tokio::test(flavor = "multi_thread")]
async fn the_relay_attaches_collateral_to_quotes_that_carry_none() {
    let seed: [u8; 32] = hex::decode(e2e::DEV_SEED).unwrap().try_into().unwrap();
    let dev_collateral = dev_quote::DevPki::from_seed(&seed).collateral(&dev_quote::CollateralOptions::default());
    let dev_collateral = String::from_utf8(dev_collateral).unwrap();
    let (pcs, asked) = standins::pcs::start(&dev_collateral).await;
    let without_collateral = serde_json::json!({"devQuotes": {"collateral": false}});
    let stack = Stack::start_with(StackOptions {
        enclave: without_collateral.clone(),
        relay: serde_json::json!({"collateral": {"pccsUrl": pcs.base_url}}),
        ..StackOptions::default()
    });
    let root = stack.dev_root_pem_path();
    let http = reqwest::Client::new();
    let get = |url: String| {
        let http = http.clone();
        async move { http.get(url).send().await.unwrap().json::<Value>().await.unwrap() }
    };
    let nonce = "ab".repeat(32);
    let direct = get(format!("http://127.0.0.1:{}/attestation?nonce={nonce}", stack.enclave_port)).await;
    let served = get(format!("{}/tee/attestation?nonce={nonce}", stack.relay_url)).await;

    let expected = shared::attest::Collateral::from_json(&dev_collateral).unwrap().to_json();
    let (mut stripped, mut direct) = (served.clone(), direct);
    for quote in ["tdxQuote", "bindingTdxQuote"] {
        assert!(direct[quote]["quote"].is_string() && direct[quote]["collateral"].is_null(), "{direct}");
        assert_eq!(served[quote]["collateral"].as_str(), Some(expected.as_str()), "{quote}");
        for doc in [&mut stripped, &mut direct] {
            doc[quote].as_object_mut().unwrap().remove("collateral");
        }
    }
    assert_eq!(stripped, direct, "only the collateral was added");
    // Both quotes are from one platform: one fetch, and it named only the FMSPC and the CA.
    let requests = asked.requests();
    assert_eq!(requests.len(), 4, "{requests:?}");
    assert!(requests.iter().any(|r| r.starts_with("/tdx/certification/v4/tcb?fmspc=")), "{requests:?}");

    // svc, which carries no PCCS of its own here, verifies with what the relay attached.
    let (code, out, err) = svc(&stack, &["--dev-root", root.to_str().unwrap(), "attest", "--json"]);
    assert_eq!(code, 0, "{out}{err}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["verdict"], "accept");
    assert_eq!(asked.requests().len(), 4, "served from the relay's memory until nextUpdate");
    drop(stack);

    // The same enclave's quotes behind a relay without a PCCS: nothing to verify them with (nor
    // for the key holder, so this one is not provisioned).
    let bare =
        Stack::start_with(StackOptions { enclave: without_collateral, provision: false, ..StackOptions::default() });
    let root = bare.dev_root_pem_path();
    let (code, out, _) = svc(&bare, &["--dev-root", root.to_str().unwrap(), "attest"]);
    assert_eq!(code, 20, "{out}");
    assert!(out.contains("no_collateral"), "{out}");
}

const SAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/test-vectors/dcap-qvl-samples");

/// `svc attest --quote --collateral --now --measurements` on the real samples.
#[test]
fn svc_attest_offline_reproduces_sample_verdicts() {
    let dir = tempfile::tempdir().unwrap();
    let run = |quote: &str, collateral: &str, now: &str, measurements: &std::path::Path| {
        let out = Command::new(binary("svc"))
            .args(["attest", "--json", "--quote", &format!("{SAMPLES}/{quote}")])
            .args(["--collateral", &format!("{SAMPLES}/{collateral}"), "--now", now])
            .arg("--measurements")
            .arg(measurements)
            .output()
            .unwrap();
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        (out.status.code().unwrap(), doc)
    };
    let m = |quote: &str| {
        let bytes = std::fs::read(format!("{SAMPLES}/{quote}")).unwrap();
        let q = dcap_quote(&bytes);
        let path = dir.path().join(format!("{quote}.json"));
        std::fs::write(&path, q).unwrap();
        path
    };
    let (code, doc) = run("tdx_quote", "tdx_quote_collateral.json", "1750377600", &m("tdx_quote"));
    assert_eq!(
        (code, doc["verdict"].as_str(), doc["tcbStatus"].as_str()),
        (0, Some("accept"), Some("UpToDate")),
        "{doc}"
    );
    let (code, doc) = run("tdx_quote_td15ex", "tdx_quote_td15ex_collateral.json", "1791504000", &m("tdx_quote_td15ex"));
    assert_eq!((code, doc["verdict"].as_str()), (0, Some("accept")), "{doc}");
    let (code, doc) =
        run("tdx_quote_outdated", "tdx_quote_outdated_collateral.json", "1771459200", &m("tdx_quote_outdated"));
    assert_eq!((code, doc["reason"].as_str()), (10, Some("tcb_level_unmatched")), "{doc}");
    let dev = std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../measurements/dev.json"));
    let (code, doc) = run("sgx_quote", "sgx_quote_collateral.json", "1750377600", &dev);
    assert_eq!((code, doc["reason"].as_str()), (10, Some("not_tdx")), "{doc}");
    // Right quote, wrong reference values.
    let (code, doc) = run("tdx_quote", "tdx_quote_collateral.json", "1750377600", &dev);
    assert_eq!((code, doc["reason"].as_str()), (10, Some("mrtd_unknown")), "{doc}");
    // Malformed input: a collateral file that is not JSON, a quote that is not one.
    let (code, _) = run("tdx_quote", "README.md", "1750377600", &dev);
    assert_eq!(code, 30);
    let (code, _) = run("README.md", "tdx_quote_collateral.json", "1750377600", &dev);
    assert_eq!(code, 30);
    let (code, _) = run("tdx_quote", "tdx_quote_collateral.json", "1750377600", &dir.path().join("absent.json"));
    assert_eq!(code, 30);
}

/// Measurements JSON equal to a quote's own registers.
fn dcap_quote(bytes: &[u8]) -> String {
    let q = dcap_qvl::quote::Quote::parse(bytes).unwrap();
    let td = q.report.as_td10().unwrap();
    let pin = |v: &[u8; 48]| {
        if *v == [0; 48] { Value::Null } else { Value::String(hex::encode(v)) }
    };
    serde_json::json!({
        "schemaVersion": 1,
        "images": [{"name": "sample", "mrtd": hex::encode(td.mr_td), "rtmr1": hex::encode(td.rt_mr1), "rtmr2": hex::encode(td.rt_mr2)}],
        "rtmr0": [{"platform": "sample", "value": hex::encode(td.rt_mr0)}],
        "mrConfigId": pin(&td.mr_config_id), "mrOwner": pin(&td.mr_owner), "mrOwnerConfig": pin(&td.mr_owner_config)
    })
    .to_string()
}

/// Collateral rollback: the relay carries collateral with its quotes, which could be older
/// TCB info that has not expired yet (a platform rated `UpToDate` before a TCB recovery). The
/// client's own collateral wins, and a TCB evaluation below the configured minimum is refused.
#[tokio::test(flavor = "multi_thread")]
async fn the_clients_own_collateral_wins_and_old_evaluations_are_refused() {
    let stack = Stack::start();
    let seed: [u8; 32] = hex::decode(e2e::DEV_SEED).unwrap().try_into().unwrap();
    let pki = dev_quote::DevPki::from_seed(&seed);
    let own = |status| {
        let options = dev_quote::CollateralOptions { tcb_status: status, ..Default::default() };
        String::from_utf8(pki.collateral(&options)).unwrap()
    };
    // The relay's collateral says UpToDate; the client's own says OutOfDate: the client's decides.
    let mut options = stack.attest_options();
    options.collateral = Some(own(dev_quote::TcbStatus::OutOfDate));
    let (report, key) = stack.bare_client().with_attestation(options).attest().await.unwrap();
    assert_eq!(report.verdict, Verdict::Reject, "{report:#?}");
    assert!(key.is_none());
    // The same client source saying UpToDate is accepted.
    let mut options = stack.attest_options();
    options.collateral = Some(own(dev_quote::TcbStatus::UpToDate));
    assert!(stack.bare_client().with_attestation(options).attest().await.unwrap().0.accepted());
    // A minimum above the collateral's evaluation number refuses it as a rollback.
    let mut options = stack.attest_options();
    options.tcb_floor = client::attest::TcbFloor::new(Some(u32::MAX));
    let (report, _) = stack.bare_client().with_attestation(options).attest().await.unwrap();
    assert_eq!((report.verdict, report.reason.as_deref()), (Verdict::Reject, Some("collateral_rollback")));
}

/// A key cache file holds a verification for the relay and trust options it was made under:
/// a client that trusts less (Intel's root, no dev root) does not reuse it.
#[tokio::test(flavor = "multi_thread")]
async fn a_cached_key_is_not_reused_under_other_trust_options() {
    let stack = Stack::start();
    let file = stack.dir.path().join("key-cache.json");
    let cache = || client::key_cache::KeyCache::new(Some(file.clone()));
    let trusting = stack.client().with_key_cache(cache());
    trusting.chat("hello", &options()).await.unwrap();
    assert!(file.exists(), "the verification was cached");
    // The same file, a client that trusts only Intel's root: verified again, and refused.
    let strict = stack
        .bare_client()
        .with_attestation(AttestOptions::new(TrustRoot::Intel, dev_measurements()))
        .with_key_cache(cache());
    match strict.chat("must not be sent", &options()).await {
        Err(ClientError::NotAttested(r)) => assert_eq!(r.reason.as_deref(), Some("untrusted_root")),
        other => panic!("a cached key verified under the dev root was reused: {other:?}"),
    }
    // The trusting client's context still finds its entry.
    let again = stack.client().with_key_cache(cache());
    assert!(again.chat("hello again", &options()).await.is_ok());
}
