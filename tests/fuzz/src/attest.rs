//! The attestation fixture: the development PKI, keys and report of its corpus
//! (`tests/dev-quote`, seed 7, as `shared/tests/attest_corpus.rs` uses it), the quote's
//! collateral, and a policy that accepts exactly that quote under the dev root.

use std::sync::OnceLock;

use dev_quote::{CollateralOptions, DevPki, QuoteVersion, corpus};
use shared::attest::verify::NonceProof;
use shared::attest::{Binding, Collateral, Policy, TrustRoot};

pub use dev_quote::corpus::{NOW, SEED, measurements, report};

/// The fixture's key binding and nonce proof are made once per process: deriving the key and
/// signing took a sixth of each `quote` execution, time better spent in the verifier.
pub fn binding() -> Binding {
    static BINDING: OnceLock<Binding> = OnceLock::new();
    *BINDING.get_or_init(corpus::binding)
}

pub fn proof() -> NonceProof {
    static PROOF: OnceLock<NonceProof> = OnceLock::new();
    *PROOF.get_or_init(corpus::proof)
}

/// Everything a verification of the fixture quote needs, made once per process.
pub struct Fixture {
    pub quote_v4: Vec<u8>,
    pub quote_v5: Vec<u8>,
    pub quote_v5_td10: Vec<u8>,
    /// Collateral JSON (dcap-qvl's `QuoteCollateralV3`), UpToDate.
    pub collateral_json: String,
    pub collateral: Collateral,
    pub policy: Policy,
}

pub fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let pki = DevPki::from_seed(&SEED);
        let collateral_json = String::from_utf8(pki.collateral(&CollateralOptions::default())).expect("UTF-8 JSON");
        let collateral = Collateral::from_json(&collateral_json).expect("the dev collateral parses");
        Fixture {
            quote_v4: pki.quote(&report(), QuoteVersion::V4),
            quote_v5: pki.quote(&report(), QuoteVersion::V5),
            quote_v5_td10: pki.quote(&report(), QuoteVersion::V5Td10),
            collateral_json,
            collateral,
            policy: Policy::new(TrustRoot::Dev(pki.root_cert_der()), measurements()),
        }
    })
}

/// Other collateral the seeds start from: OutOfDate, and without a PCK CRL.
pub fn other_collaterals() -> Vec<String> {
    let pki = DevPki::from_seed(&SEED);
    let out_of_date = CollateralOptions { tcb_status: dev_quote::TcbStatus::OutOfDate, ..CollateralOptions::default() };
    let no_crl = CollateralOptions { omit_pck_crl: true, ..CollateralOptions::default() };
    [out_of_date, no_crl].iter().map(|o| String::from_utf8(pki.collateral(o)).expect("UTF-8 JSON")).collect()
}
