//! Against the PCS stand-in (tests/standins), fed first with the real v4 sample's collateral
//! (it must verify Intel's real quote), then with the dev PKI's (the cache's lifetimes).

use shared::attest::{Collateral, Evidence, Measurements, Policy, TrustRoot, verify};

use super::*;

const SAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/test-vectors/dcap-qvl-samples");

#[tokio::test]
async fn fetches_and_assembles_collateral_that_verifies_intels_quote() {
    let sample = std::fs::read_to_string(format!("{SAMPLES}/tdx_quote_collateral.json")).unwrap();
    let (pcs, recorder) = standins::pcs::start(&sample).await;
    // The base a PCCS's users are given, with the API path: it is trimmed.
    let client = PcsClient::new(&format!("{}/sgx/certification/v4/", pcs.base_url));
    let quote = std::fs::read(format!("{SAMPLES}/tdx_quote")).unwrap();

    let collateral = client.collateral_for(&quote).await.unwrap();
    let (fmspc, ca) = pcs_query(&quote).unwrap();
    assert_eq!(ca, "platform");
    assert_eq!(
        recorder.requests(),
        [
            "/sgx/certification/v4/pckcrl?ca=platform&encoding=der".to_string(),
            format!("/tdx/certification/v4/tcb?fmspc={fmspc}"),
            "/tdx/certification/v4/qe/identity".to_string(),
            "/sgx/certification/v4/rootcacrl".to_string(),
        ]
    );

    // What came back through the PCS shapes is the sample, byte for byte where it is signed,
    // and it verifies the real quote under Intel's root at the sample's time.
    assert_eq!(collateral.to_json(), Collateral::from_json(&sample).unwrap().to_json());
    let doc = verify(
        &Evidence { quote: &quote, collateral: &collateral, binding: None, nonce: None },
        &Policy::new(TrustRoot::Intel, Measurements::pinning_nothing()),
        1_750_377_600,
    );
    assert!(doc.check("dcap").unwrap().ok, "{doc:#?}");
    assert_eq!(doc.tcb_status.as_deref(), Some("UpToDate"));
}

#[tokio::test]
async fn the_cache_asks_once_per_platform_until_next_update() {
    let pki = dev_quote::DevPki::from_seed(&[7; 32]);
    let json = String::from_utf8(pki.collateral(&dev_quote::CollateralOptions::default())).unwrap();
    let valid_until = Collateral::from_json(&json).unwrap().valid_until.unwrap();
    let (pcs, recorder) = standins::pcs::start(&json).await;
    let cached = CachedPcs::new(PcsClient::new(&pcs.base_url));
    let quote = pki.quote(&dev_quote::TdReport::default(), dev_quote::QuoteVersion::V4);

    let first = cached.collateral_for(&quote, valid_until - 100).await.unwrap();
    assert_eq!(recorder.requests().len(), 4);
    let again = cached.collateral_for(&quote, valid_until - 1).await.unwrap();
    assert_eq!(again, first);
    assert_eq!(recorder.requests().len(), 4, "served from memory before nextUpdate");
    // At nextUpdate the copy is stale: asked again.
    cached.collateral_for(&quote, valid_until).await.unwrap();
    assert_eq!(recorder.requests().len(), 8);
    assert_eq!(Collateral::from_json(&first).unwrap().to_json(), Collateral::from_json(&json).unwrap().to_json());
}

#[tokio::test]
async fn failures_are_typed_and_nothing_is_remembered() {
    let pki = dev_quote::DevPki::from_seed(&[7; 32]);
    let json = String::from_utf8(pki.collateral(&dev_quote::CollateralOptions::default())).unwrap();
    let (pcs, recorder) = standins::pcs::start(&json).await;
    let cached = CachedPcs::new(PcsClient::new(&pcs.base_url));
    let quote = pki.quote(&dev_quote::TdReport::default(), dev_quote::QuoteVersion::V4);

    recorder.fail_with(Some(standins::pcs::Failure::Status(503)));
    match cached.collateral_for(&quote, 0).await {
        Err(PcsError::BadAnswer(m)) => assert!(m.contains("HTTP 503") && !m.contains("pcs-internal-detail"), "{m}"),
        other => panic!("{other:?}"),
    }
    recorder.fail_with(Some(standins::pcs::Failure::Garbage));
    assert!(matches!(cached.collateral_for(&quote, 0).await, Err(PcsError::BadAnswer(_))));
    // Recovered: fetched, not served from a remembered failure.
    recorder.fail_with(None);
    let before = recorder.requests().len();
    cached.collateral_for(&quote, 0).await.unwrap();
    assert_eq!(recorder.requests().len() - before, 4);

    assert!(matches!(cached.collateral_for(b"not a quote", 0).await, Err(PcsError::Malformed(_))));
    let nobody = PcsClient::new("http://127.0.0.1:9");
    assert!(matches!(nobody.collateral_for(&quote).await, Err(PcsError::Unreachable(_))));
}

#[test]
fn percent_decoding() {
    assert_eq!(percent_decode("-----BEGIN%20CERT%0A").as_deref(), Some("-----BEGIN CERT\n"));
    assert_eq!(percent_decode("%zz"), None);
    assert_eq!(percent_decode("%4"), None);
}
