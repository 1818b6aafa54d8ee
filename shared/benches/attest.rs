//! Quote verification with cached (pre-parsed) collateral: our verifier (dcap-qvl + policy +
//! binding) against bare dcap-qvl on the same quote, and warm: the platform remembered from an
//! earlier check (`attest::platforms`). Targets: ≤ 3 ms median and ≤ 1.1× dcap-qvl cold,
//! ≤ 1 ms warm.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use dcap_qvl::QuoteCollateralV3;
use dcap_qvl::verify::QuoteVerifier;
use dev_quote::corpus::measurements_of;
use dev_quote::{CollateralOptions, DevPki, QuoteVersion, TdReport};
use shared::attest::{Binding, Collateral, Evidence, Policy, TrustRoot, VerifiedPlatforms, verify, verify_remembering};

const SAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/test-vectors/dcap-qvl-samples");

fn pair(c: &mut Criterion, label: &str, quote: &[u8], json: &str, root: TrustRoot, binding: Option<Binding>, now: u64) {
    let parsed: QuoteCollateralV3 = serde_json::from_str(json).unwrap();
    let collateral = Collateral::from_json(json).unwrap();
    let root_der = match &root {
        TrustRoot::Intel => None,
        TrustRoot::Dev(der) => Some(der.clone()),
    };
    let policy = Policy::new(root, measurements_of(quote));
    let check = verify(&Evidence { quote, collateral: &collateral, binding, nonce: None }, &policy, now);
    assert!(check.check("dcap").unwrap().ok, "{check:#?}");
    c.bench_function(&format!("{label}: dcap-qvl alone"), |b| {
        b.iter(|| {
            let v = match &root_der {
                None => QuoteVerifier::new_prod(),
                Some(der) => QuoteVerifier::new(der.clone()),
            };
            black_box(v.verify(black_box(quote), &parsed, now).unwrap())
        })
    });
    c.bench_function(&format!("{label}: our verifier (dcap-qvl + policy + binding)"), |b| {
        b.iter(|| {
            black_box(verify(
                &Evidence { quote: black_box(quote), collateral: &collateral, binding, nonce: None },
                &policy,
                now,
            ))
        })
    });
    let platforms = VerifiedPlatforms::default();
    c.bench_function(&format!("{label}: our verifier, warm (platform remembered)"), |b| {
        b.iter(|| {
            black_box(verify_remembering(
                &Evidence { quote: black_box(quote), collateral: &collateral, binding, nonce: None },
                &policy,
                &platforms,
                now,
            ))
        })
    });
    assert!(platforms.recalled() > 0, "{label}: the warm check recalled nothing");
}

fn benches(c: &mut Criterion) {
    let quote = std::fs::read(format!("{SAMPLES}/tdx_quote")).unwrap();
    let json = std::fs::read_to_string(format!("{SAMPLES}/tdx_quote_collateral.json")).unwrap();
    pair(c, "real v4 sample", &quote, &json, TrustRoot::Intel, None, 1_750_377_600);

    let pki = DevPki::from_seed(&[7; 32]);
    let binding = Binding::PublicKey(shared::keys::TeeKey([1; 32]));
    let report = TdReport { mr_td: [0xa0; 48], report_data: binding.report_data(), ..TdReport::default() };
    let quote = pki.quote(&report, QuoteVersion::V4);
    let json = String::from_utf8(pki.collateral(&CollateralOptions::default())).unwrap();
    pair(c, "dev v4 quote", &quote, &json, TrustRoot::Dev(pki.root_cert_der()), Some(binding), 1_800_000_000);
}

criterion_group!(attest, benches);
criterion_main!(attest);
