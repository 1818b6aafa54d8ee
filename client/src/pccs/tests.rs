//! Against a local stand-in that speaks the PCS v4 wire shapes, fed from the real v4
//! sample's collateral: fetch, assemble, verify under Intel's root, then hit the cache.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use axum::Router;
use axum::extract::{Query, State};
use axum::http::HeaderMap;
use axum::routing::get;
use serde_json::Value;
use shared::attest::{Collateral, Evidence, Measurements, Policy, TrustRoot, verify};

use super::*;

const SAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/test-vectors/dcap-qvl-samples");

fn encode(pem: &str) -> String {
    pem.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

#[derive(Clone)]
struct Stand {
    sample: Arc<Value>,
    calls: Arc<AtomicU32>,
    seen: Arc<std::sync::Mutex<Vec<String>>>,
}

async fn serve(stand: Stand) -> String {
    async fn pckcrl(State(s): State<Stand>, Query(q): Query<Vec<(String, String)>>) -> (HeaderMap, Vec<u8>) {
        s.calls.fetch_add(1, Ordering::SeqCst);
        s.seen.lock().unwrap().push(format!("pckcrl {q:?}"));
        let mut h = HeaderMap::new();
        h.insert(
            "SGX-PCK-CRL-Issuer-Chain",
            encode(s.sample["pck_crl_issuer_chain"].as_str().unwrap()).parse().unwrap(),
        );
        (h, hex::decode(s.sample["pck_crl"].as_str().unwrap()).unwrap())
    }
    async fn tcb(State(s): State<Stand>, Query(q): Query<Vec<(String, String)>>) -> (HeaderMap, String) {
        s.calls.fetch_add(1, Ordering::SeqCst);
        s.seen.lock().unwrap().push(format!("tcb {q:?}"));
        let mut h = HeaderMap::new();
        h.insert("TCB-Info-Issuer-Chain", encode(s.sample["tcb_info_issuer_chain"].as_str().unwrap()).parse().unwrap());
        let body = format!(
            r#"{{"tcbInfo":{},"signature":"{}"}}"#,
            s.sample["tcb_info"].as_str().unwrap(),
            s.sample["tcb_info_signature"].as_str().unwrap()
        );
        (h, body)
    }
    async fn qe(State(s): State<Stand>) -> (HeaderMap, String) {
        s.calls.fetch_add(1, Ordering::SeqCst);
        let mut h = HeaderMap::new();
        h.insert(
            "SGX-Enclave-Identity-Issuer-Chain",
            encode(s.sample["qe_identity_issuer_chain"].as_str().unwrap()).parse().unwrap(),
        );
        let body = format!(
            r#"{{"enclaveIdentity":{},"signature":"{}"}}"#,
            s.sample["qe_identity"].as_str().unwrap(),
            s.sample["qe_identity_signature"].as_str().unwrap()
        );
        (h, body)
    }
    async fn rootcrl(State(s): State<Stand>) -> String {
        s.calls.fetch_add(1, Ordering::SeqCst);
        s.sample["root_ca_crl"].as_str().unwrap().to_string()
    }
    let router = Router::new()
        .route("/sgx/certification/v4/pckcrl", get(pckcrl))
        .route("/tdx/certification/v4/tcb", get(tcb))
        .route("/tdx/certification/v4/qe/identity", get(qe))
        .route("/sgx/certification/v4/rootcacrl", get(rootcrl))
        .with_state(stand);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    format!("http://{addr}/sgx/certification/v4")
}

#[tokio::test]
async fn fetches_assembles_verifies_and_caches() {
    let sample: Value =
        serde_json::from_str(&std::fs::read_to_string(format!("{SAMPLES}/tdx_quote_collateral.json")).unwrap())
            .unwrap();
    let stand = Stand { sample: Arc::new(sample), calls: Arc::default(), seen: Arc::default() };
    let base = serve(stand.clone()).await;
    let dir = tempfile::tempdir().unwrap();
    let client = PccsClient::new(&base, Some(dir.path().to_path_buf()));
    let quote = std::fs::read(format!("{SAMPLES}/tdx_quote")).unwrap();

    let text = client.collateral_for(&quote).await.unwrap();
    assert_eq!(stand.calls.load(Ordering::SeqCst), 4);
    let seen = stand.seen.lock().unwrap().join(" | ");
    assert!(seen.contains("(\"ca\", \"platform\")") && seen.contains("(\"encoding\", \"der\")"), "{seen}");
    let (fmspc, _) = pcs_query(&quote).unwrap();
    assert!(seen.contains(&format!("(\"fmspc\", \"{fmspc}\")")), "{seen}");

    // The assembled collateral verifies the real quote under Intel's root at the sample's time.
    let collateral = Collateral::from_json(&text).unwrap();
    let m = Measurements {
        schema_version: 1,
        images: vec![],
        rtmr0: vec![],
        mr_config_id: None,
        mr_owner: None,
        mr_owner_config: None,
        min_tcb_evaluation_data_number: None,
    };
    let doc = verify(
        &Evidence { quote: &quote, collateral: &collateral, binding: None, nonce: None },
        &Policy::new(TrustRoot::Intel, m),
        1_750_377_600,
    );
    assert!(doc.check("dcap").unwrap().ok, "{doc:#?}");
    assert_eq!(doc.tcb_status.as_deref(), Some("UpToDate"));

    // The cached copy is served without asking again, while it is valid. The sample's
    // nextUpdate is in the past by now, so the second call refetches: prove both paths.
    let before = stand.calls.load(Ordering::SeqCst);
    let again = client.collateral_for(&quote).await.unwrap();
    assert_eq!(again, text);
    let expired = collateral.valid_until.unwrap() <= crate::unix_now();
    assert_eq!(stand.calls.load(Ordering::SeqCst) - before, if expired { 4 } else { 0 });
}

#[tokio::test]
async fn fresh_cache_is_used_without_fetching() {
    let dir = tempfile::tempdir().unwrap();
    // A far-future dev collateral in the cache under the sample quote's FMSPC/CA name.
    let quote = std::fs::read(format!("{SAMPLES}/tdx_quote")).unwrap();
    let (fmspc, ca) = pcs_query(&quote).unwrap();
    assert_eq!(ca, "platform");
    assert_eq!(fmspc.len(), 12);
    let pki = dev_quote::DevPki::from_seed(&[1; 32]);
    let cached = String::from_utf8(pki.collateral(&dev_quote::CollateralOptions::default())).unwrap();
    std::fs::write(dir.path().join(format!("collateral-{fmspc}-{ca}.json")), &cached).unwrap();
    // Nothing listens on this port: any fetch would fail.
    let client = PccsClient::new("http://127.0.0.1:9", Some(dir.path().to_path_buf()));
    assert_eq!(client.collateral_for(&quote).await.unwrap(), cached);
}

#[test]
fn percent_decoding() {
    assert_eq!(percent_decode("-----BEGIN%20CERT%0A").as_deref(), Some("-----BEGIN CERT\n"));
    assert_eq!(percent_decode("%zz"), None);
    assert_eq!(percent_decode("%4"), None);
}
