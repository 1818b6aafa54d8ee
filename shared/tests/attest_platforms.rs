//! Remembered platforms (`shared::attest::platforms`): a warm check gives exactly the document
//! a full check gives, and only a quote that differs from a verified one in `report_data` and
//! its signature, under the same collateral and root, within the time window, is recalled.
#![cfg(feature = "remember-platforms")]

use dev_quote::corpus::measurements_of;
use dev_quote::{CollateralOptions, DevPki, QuoteVersion, TdReport};
use shared::attest::{
    Binding, Collateral, Evidence, Policy, TrustRoot, Verdict, VerificationDocument, VerifiedPlatforms, verify,
    verify_remembering,
};
use shared::keys::TeeKey;

const SAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/test-vectors/dcap-qvl-samples");
const NOW: u64 = 1_800_000_000;

struct Dev {
    pki: DevPki,
    collateral: Collateral,
    policy: Policy,
}

impl Dev {
    fn new() -> Self {
        Self::with_collateral(&CollateralOptions::default())
    }

    fn with_collateral(options: &CollateralOptions) -> Self {
        let pki = DevPki::from_seed(&[7; 32]);
        let collateral = Collateral::from_json(std::str::from_utf8(&pki.collateral(options)).unwrap()).unwrap();
        let policy =
            Policy::new(TrustRoot::Dev(pki.root_cert_der()), measurements_of(&pki.quote(&report(0), QuoteVersion::V4)));
        Dev { pki, collateral, policy }
    }

    fn quote(&self, key: u8, version: QuoteVersion) -> Vec<u8> {
        self.pki.quote(&report(key), version)
    }

    /// The full check and the remembering one, which must agree.
    fn both(&self, quote: &[u8], key: u8, platforms: &VerifiedPlatforms, now: u64) -> VerificationDocument {
        let evidence = evidence(quote, &self.collateral, key);
        let cold = verify(&evidence, &self.policy, now);
        let warm = verify_remembering(&evidence, &self.policy, platforms, now);
        assert_eq!(warm, cold);
        warm
    }
}

fn binding(key: u8) -> Binding {
    Binding::PublicKey(TeeKey([key; 32]))
}

fn report(key: u8) -> TdReport {
    TdReport { mr_td: [0xa0; 48], report_data: binding(key).report_data(), ..TdReport::default() }
}

fn evidence<'a>(quote: &'a [u8], collateral: &'a Collateral, key: u8) -> Evidence<'a> {
    Evidence { quote, collateral, binding: Some(binding(key)), nonce: None }
}

#[test]
fn another_quote_from_a_verified_platform_is_recalled_with_the_same_document() {
    for version in [QuoteVersion::V4, QuoteVersion::V5] {
        let dev = Dev::new();
        let platforms = VerifiedPlatforms::default();
        let first = dev.both(&dev.quote(1, version), 1, &platforms, NOW);
        assert_eq!(first.verdict, Verdict::Accept, "{first:#?}");
        assert_eq!(platforms.recalled(), 0);
        // A new key (new report_data, new signature) on the same platform, later.
        let second = dev.both(&dev.quote(2, version), 2, &platforms, NOW + 60);
        assert_eq!(second.verdict, Verdict::Accept, "{second:#?}");
        assert_eq!(platforms.recalled(), 1);
    }
}

#[test]
fn a_bad_signature_on_a_known_platform_is_checked_in_full_and_refused() {
    let dev = Dev::new();
    let platforms = VerifiedPlatforms::default();
    dev.both(&dev.quote(1, QuoteVersion::V4), 1, &platforms, NOW);
    let mut quote = dev.quote(2, QuoteVersion::V4);
    // The signature's first byte (after the 632-byte header and report, and the auth data's length).
    quote[632 + 4] ^= 1;
    let doc = dev.both(&quote, 2, &platforms, NOW);
    assert_eq!((doc.verdict, doc.reason.as_deref()), (Verdict::Reject, Some("quote_signature_invalid")));
    // report_data changed but the signature kept: the signature no longer covers it.
    let mut quote = dev.quote(1, QuoteVersion::V4);
    quote[48 + 520] ^= 1;
    let doc = dev.both(&quote, 1, &platforms, NOW);
    assert_eq!(doc.verdict, Verdict::Reject, "{doc:#?}");
    assert_eq!(platforms.recalled(), 0);
}

#[test]
fn any_other_byte_changed_is_a_new_platform() {
    let dev = Dev::new();
    let platforms = VerifiedPlatforms::default();
    dev.both(&dev.quote(1, QuoteVersion::V4), 1, &platforms, NOW);
    // Other measurements (re-signed by the same attestation key): not the platform seen.
    let other = dev.pki.quote(&TdReport { mr_td: [0xa1; 48], ..report(1) }, QuoteVersion::V4);
    let doc = dev.both(&other, 1, &platforms, NOW);
    assert_eq!(doc.reason.as_deref(), Some("mrtd_unknown"), "{doc:#?}");
    assert_eq!(platforms.recalled(), 0);
    // Other collateral (still valid): checked in full.
    let later = Dev::with_collateral(&CollateralOptions { next_update: 4_000_000_000, ..CollateralOptions::default() });
    let doc = later.both(&later.quote(2, QuoteVersion::V4), 2, &platforms, NOW);
    assert_eq!(doc.verdict, Verdict::Accept);
    assert_eq!(platforms.recalled(), 0);
}

#[test]
fn nothing_is_recalled_outside_the_time_window_it_verified_in() {
    let next_update = NOW + 3600;
    let dev = Dev::with_collateral(&CollateralOptions { next_update, ..CollateralOptions::default() });
    let platforms = VerifiedPlatforms::default();
    dev.both(&dev.quote(1, QuoteVersion::V4), 1, &platforms, NOW);
    // Before the moment it verified, and at the collateral's expiry: checked in full.
    assert_eq!(dev.both(&dev.quote(2, QuoteVersion::V4), 2, &platforms, NOW - 1).verdict, Verdict::Accept);
    let expired = dev.both(&dev.quote(2, QuoteVersion::V4), 2, &platforms, next_update + 1);
    assert_eq!(expired.reason.as_deref(), Some("collateral_expired"), "{expired:#?}");
    assert_eq!(platforms.recalled(), 0);
    dev.both(&dev.quote(2, QuoteVersion::V4), 2, &platforms, next_update - 1);
    assert_eq!(platforms.recalled(), 1);
}

#[test]
fn failures_are_not_remembered() {
    let dev = Dev::with_collateral(&CollateralOptions { next_update: NOW - 1, ..CollateralOptions::default() });
    let platforms = VerifiedPlatforms::default();
    for key in [1, 2] {
        let doc = dev.both(&dev.quote(key, QuoteVersion::V4), key, &platforms, NOW);
        assert_eq!(doc.reason.as_deref(), Some("collateral_expired"), "{doc:#?}");
    }
    assert_eq!(platforms.recalled(), 0);
}

#[test]
fn real_intel_quotes_are_recalled_under_intel_root() {
    for (quote, collateral, now) in [
        ("tdx_quote", "tdx_quote_collateral.json", 1_750_377_600),
        ("tdx_quote_td15ex", "tdx_quote_td15ex_collateral.json", 1_791_504_000),
    ] {
        let quote = std::fs::read(format!("{SAMPLES}/{quote}")).unwrap();
        let collateral =
            Collateral::from_json(&std::fs::read_to_string(format!("{SAMPLES}/{collateral}")).unwrap()).unwrap();
        let policy = Policy::new(TrustRoot::Intel, measurements_of(&quote));
        let evidence = Evidence { quote: &quote, collateral: &collateral, binding: None, nonce: None };
        let platforms = VerifiedPlatforms::default();
        let cold = verify(&evidence, &policy, now);
        assert!(cold.check("dcap").unwrap().ok, "{cold:#?}");
        for _ in 0..2 {
            assert_eq!(verify_remembering(&evidence, &policy, &platforms, now), cold);
        }
        assert_eq!(platforms.recalled(), 1);
    }
}
