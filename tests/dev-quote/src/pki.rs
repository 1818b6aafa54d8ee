//! The seeded certificate hierarchy, in the shape dcap-qvl expects of Intel's:
//! root CA (pathlen 1) → PCK platform CA (pathlen 0) → PCK leaf with the SGX extension, and
//! root → TCB signer (which signs TCB info and QE identity). Two CRLs: root's and PCK CA's.

use std::time::Duration;

use p256::ecdsa::{Signature, SigningKey as EcKey, signature::Signer};
use rcgen::{
    BasicConstraints, CertificateParams, CertificateRevocationListParams, IsCa, Issuer, KeyIdMethod, KeyUsagePurpose,
    PublicKeyData, RevocationReason, RevokedCertParams, SerialNumber, SignatureAlgorithm, SigningKey,
};
use sha2::{Digest, Sha256};

use super::PkiOptions;
use super::sgx_extension::sgx_extension;
use super::x509::{self, certified};

/// A P-256 key derived from the seed; signs with RFC 6979 (deterministic) nonces.
pub(super) struct DevKey {
    key: EcKey,
    /// SEC1 uncompressed point, as rcgen wants it.
    public: Vec<u8>,
}

impl DevKey {
    /// scalar = SHA-256(domain ‖ label ‖ seed ‖ counter), retried until it is a valid scalar.
    fn derive(seed: &[u8; 32], label: &str) -> Self {
        let mut counter = 0u32;
        loop {
            let scalar = labelled_hash(seed, label, counter);
            if let Ok(key) = EcKey::from_slice(&scalar) {
                let public = key.verifying_key().to_sec1_point(false).as_bytes().to_vec();
                return Self { key, public };
            }
            counter = counter.wrapping_add(1);
        }
    }

    /// ECDSA-SHA256 as DCAP encodes it: raw r ‖ s.
    pub(super) fn sign_raw(&self, msg: &[u8]) -> [u8; 64] {
        let signature: Signature = self.key.sign(msg);
        let mut raw = [0u8; 64];
        raw.copy_from_slice(&signature.to_bytes());
        raw
    }

    /// The public key as DCAP encodes it: X ‖ Y.
    pub(super) fn public_xy(&self) -> [u8; 64] {
        let mut xy = [0u8; 64];
        xy.copy_from_slice(&self.public[1..]);
        xy
    }
}

impl PublicKeyData for DevKey {
    fn der_bytes(&self) -> &[u8] {
        &self.public
    }

    fn algorithm(&self) -> &'static SignatureAlgorithm {
        &rcgen::PKCS_ECDSA_P256_SHA256
    }
}

impl SigningKey for DevKey {
    fn sign(&self, msg: &[u8]) -> Result<Vec<u8>, rcgen::Error> {
        let signature: Signature = self.key.sign(msg);
        Ok(signature.to_der().as_bytes().to_vec())
    }
}

/// SHA-256(domain ‖ label ‖ 0 ‖ seed ‖ counter): every derived value has its own label.
pub(super) fn labelled_hash(seed: &[u8; 32], label: &str, counter: u32) -> [u8; 32] {
    let mut hash = Sha256::new();
    hash.update(b"SVC DEV PKI v1\0");
    hash.update(label.as_bytes());
    hash.update([0]);
    hash.update(seed);
    hash.update(counter.to_be_bytes());
    hash.finalize().into()
}

pub(super) struct Cert {
    pub key: DevKey,
    pub der: Vec<u8>,
    params: CertificateParams,
}

impl Cert {
    fn issuer(&self) -> Issuer<'_, &DevKey> {
        Issuer::from_params(&self.params, &self.key)
    }
}

pub(super) struct Pki {
    pub root: Cert,
    pub pck_ca: Cert,
    pub pck: Cert,
    pub signer: Cert,
    /// The QE's attestation key (one per PKI, like a real QE's).
    pub attestation: DevKey,
    /// QE ID, in the quote header's user data.
    pub qe_id: [u8; 16],
}

/// Unix seconds as rcgen's date type (which this crate cannot name), clamped to
/// 9999-12-31T23:59:59Z, the last instant X.509 can encode.
macro_rules! utc {
    ($unix:expr) => {
        rcgen::date_time_ymd(1970, 1, 1) + Duration::from_secs(u64::min($unix, 253_402_300_799))
    };
}

// Fixed serial numbers: the certificates must not depend on anything but seed and options.
const PCK_SERIAL: u8 = 3;

impl Pki {
    pub(super) fn new(seed: &[u8; 32], options: &PkiOptions) -> Self {
        let (from, to) = (options.not_before, options.not_after);
        let ca = |pathlen| IsCa::Ca(BasicConstraints::Constrained(pathlen));
        let ca_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let leaf_usages = vec![KeyUsagePurpose::DigitalSignature, KeyUsagePurpose::ContentCommitment];

        let root_key = DevKey::derive(seed, "root ca");
        let root_params = params("SVC DEV Root CA", 1, from, to, ca(1), ca_usages.clone());
        let root = Cert { der: certified(root_params.self_signed(&root_key)), key: root_key, params: root_params };

        let issue = |issuer: &Cert, label: &str, mut params: CertificateParams| {
            let key = DevKey::derive(seed, label);
            params.use_authority_key_identifier_extension = true;
            let der = certified(params.signed_by(&key, &issuer.issuer()));
            Cert { key, der, params }
        };
        let pck_ca = issue(&root, "pck platform ca", params("SVC DEV PCK Platform CA", 2, from, to, ca(0), ca_usages));
        let mut pck_params = params(
            "SVC DEV PCK Certificate",
            PCK_SERIAL,
            from,
            options.pck_not_after,
            IsCa::ExplicitNoCa,
            leaf_usages.clone(),
        );
        pck_params.custom_extensions.push(sgx_extension(seed));
        let pck = issue(&pck_ca, "pck leaf", pck_params);
        let signer =
            issue(&root, "tcb signer", params("SVC DEV TCB Signing", 4, from, to, IsCa::ExplicitNoCa, leaf_usages));

        let mut qe_id = [0u8; 16];
        qe_id.copy_from_slice(&labelled_hash(seed, "qe id", 0)[..16]);
        Self { root, pck_ca, pck, signer, attestation: DevKey::derive(seed, "attestation key"), qe_id }
    }

    /// (root CA CRL, PCK CA CRL), both empty unless the PCK leaf is revoked.
    pub(super) fn crls(&self, this_update: u64, next_update: u64, revoke_pck: bool) -> (Vec<u8>, Vec<u8>) {
        let crl = |issuer: &Cert, revoked: Vec<RevokedCertParams>| {
            let params = CertificateRevocationListParams {
                this_update: utc!(this_update),
                // rcgen refuses nextUpdate <= thisUpdate.
                next_update: utc!(next_update.max(this_update.saturating_add(1))),
                crl_number: SerialNumber::from_slice(&[1]),
                issuing_distribution_point: None,
                revoked_certs: revoked,
                key_identifier_method: KeyIdMethod::Sha256,
            };
            params.signed_by(&issuer.issuer()).map(|crl| crl.der().to_vec()).expect("dev CRL parameters are valid")
        };
        let revoked = revoke_pck.then(|| RevokedCertParams {
            serial_number: SerialNumber::from_slice(&[PCK_SERIAL]),
            revocation_time: utc!(this_update),
            reason_code: Some(RevocationReason::KeyCompromise),
            invalidity_date: None,
        });
        (crl(&self.root, Vec::new()), crl(&self.pck_ca, revoked.into_iter().collect()))
    }
}

fn params(
    cn: &str,
    serial: u8,
    not_before: u64,
    not_after: u64,
    is_ca: IsCa,
    key_usages: Vec<KeyUsagePurpose>,
) -> CertificateParams {
    x509::params("SVC DEV (not Intel)", cn, serial, (not_before, not_after), is_ca, key_usages)
}
