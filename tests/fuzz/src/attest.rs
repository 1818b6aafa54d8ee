//! The attestation fixture: the development PKI (`tests/dev-quote`, seed 7, as
//! `shared/tests/attest_corpus.rs` uses it), a quote binding fixed keys, its collateral, and a
//! policy that accepts exactly that quote under the dev root.

use std::sync::OnceLock;

use dev_quote::{CollateralOptions, DevPki, QuoteVersion, TdReport};
use ed25519_dalek::{Signer, SigningKey};
use shared::attest::measurements::{ImageMeasurement, Measurements, Rtmr0Entry};
use shared::attest::verify::NonceProof;
use shared::attest::{Binding, Collateral, Policy, TrustRoot};
use shared::keys::{EnclaveKey, TeeKey};

pub const SEED: [u8; 32] = [7; 32];
/// The verification time: inside every dev certificate's and collateral's validity.
pub const NOW: u64 = 1_800_000_000;
pub const TEE: [u8; 32] = [0x11; 32];
pub const NONCE: [u8; 32] = [0x22; 32];

pub fn enclave_key() -> SigningKey {
    SigningKey::from_bytes(&[0x33; 32])
}

/// The fixture's key binding and nonce proof are made once per process: deriving the key and
/// signing took a sixth of each `quote` execution, time better spent in the verifier.
pub fn binding() -> Binding {
    static BINDING: OnceLock<Binding> = OnceLock::new();
    *BINDING.get_or_init(|| Binding::Keys {
        tee: TeeKey(TEE),
        enclave: EnclaveKey(enclave_key().verifying_key().to_bytes()),
    })
}

pub fn proof() -> NonceProof {
    static PROOF: OnceLock<NonceProof> = OnceLock::new();
    *PROOF.get_or_init(|| {
        let msg = shared::freshness::nonce_message(&NONCE, &TEE);
        NonceProof { nonce: NONCE, signature: enclave_key().sign(&msg).to_bytes() }
    })
}

pub fn report() -> TdReport {
    TdReport {
        mr_td: [0xa0; 48],
        rtmr: [[0xa1; 48], [0xa2; 48], [0xa3; 48], [0; 48]],
        report_data: binding().report_data(),
        ..TdReport::default()
    }
}

pub fn measurements() -> Measurements {
    Measurements {
        schema_version: 1,
        images: vec![ImageMeasurement { name: "fuzz".into(), mrtd: [0xa0; 48], rtmr1: [0xa2; 48], rtmr2: [0xa3; 48] }],
        rtmr0: vec![Rtmr0Entry { platform: "fuzz".into(), value: [0xa1; 48] }],
        mr_config_id: None,
        mr_owner: None,
        mr_owner_config: None,
        min_tcb_evaluation_data_number: None,
    }
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
