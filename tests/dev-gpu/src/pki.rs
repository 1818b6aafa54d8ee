//! The seeded device hierarchy, in the shape of NVIDIA's (notes/gpu.md §1.3), one level shorter:
//! root "Device Identity CA" → "Provisioner ICA" → per-device "BROM" → "FMC LF" leaf (signs
//! reports, carries the firmware id), plus one OCSP responder under each issuer whose certificate
//! the chain's OCSP answers cover (the ICA for the BROM, the root for the ICA). All P-384.

use p384::ecdsa::{Signature, SigningKey as EcKey, signature::Signer};
use rcgen::{
    BasicConstraints, CertificateParams, CustomExtension, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyUsagePurpose,
    PublicKeyData, SerialNumber, SignatureAlgorithm, SigningKey,
};
use sha2::{Digest, Sha384};

use super::der;
use dev_quote::x509::{self, certified};

/// A P-384 key derived from the seed; signs ECDSA-SHA384 with RFC 6979 (deterministic) nonces.
pub(crate) struct DevKey {
    key: EcKey,
    /// SEC1 uncompressed point: what rcgen wants, and the subjectPublicKey bits.
    pub public: Vec<u8>,
}

impl DevKey {
    /// scalar = labelled SHA-384 of the seed, retried until it is a valid scalar.
    fn derive(seed: &[u8; 32], label: &str) -> Self {
        let mut counter = 0u32;
        loop {
            if let Ok(key) = EcKey::from_slice(&labelled_hash(seed, label, counter)) {
                let public = key.verifying_key().to_sec1_point(false).as_bytes().to_vec();
                return Self { key, public };
            }
            counter = counter.wrapping_add(1);
        }
    }

    /// ECDSA-SHA384 as SPDM encodes it: raw r ‖ s.
    pub(crate) fn sign_raw(&self, msg: &[u8]) -> [u8; 96] {
        let signature: Signature = self.key.sign(msg);
        let mut raw = [0u8; 96];
        raw.copy_from_slice(&signature.to_bytes());
        raw
    }

    /// ECDSA-SHA384 as X.509 and OCSP encode it: DER `SEQUENCE {r, s}`.
    pub(crate) fn sign_der(&self, msg: &[u8]) -> Vec<u8> {
        let signature: Signature = self.key.sign(msg);
        signature.to_der().as_bytes().to_vec()
    }
}

impl PublicKeyData for DevKey {
    fn der_bytes(&self) -> &[u8] {
        &self.public
    }

    fn algorithm(&self) -> &'static SignatureAlgorithm {
        &rcgen::PKCS_ECDSA_P384_SHA384
    }
}

impl SigningKey for DevKey {
    fn sign(&self, msg: &[u8]) -> Result<Vec<u8>, rcgen::Error> {
        Ok(self.sign_der(msg))
    }
}

/// SHA-384(domain ‖ label ‖ 0 ‖ seed ‖ counter): every derived value has its own label.
pub(crate) fn labelled_hash(seed: &[u8; 32], label: &str, counter: u32) -> [u8; 48] {
    let mut hash = Sha384::new();
    hash.update(b"SVC DEV GPU PKI v1\0");
    hash.update(label.as_bytes());
    hash.update([0]);
    hash.update(seed);
    hash.update(counter.to_be_bytes());
    hash.finalize().into()
}

/// A certificate and the key it certifies.
pub(crate) struct Cert {
    pub key: DevKey,
    pub der: Vec<u8>,
}

pub(crate) struct Pki {
    pub root: Cert,
    pub ica: Cert,
    pub brom: Cert,
    pub leaf: Cert,
    /// Issued by the root; answers for the ICA.
    pub root_responder: Cert,
    /// Issued by the ICA; answers for the BROM.
    pub ica_responder: Cert,
}

/// TCG DICE firmware id extension, as Hopper leaves carry it (2.23.133.5.4.1).
const DICE_FWID: [u64; 6] = [2, 23, 133, 5, 4, 1];

impl Pki {
    /// The hierarchy of device `device` (0 for the first): the root, the ICA and the
    /// responders depend on the seed alone, so every device of one seed shares them, as every
    /// GPU of a product shares NVIDIA's; the BROM and the leaf are the device's own.
    pub(crate) fn new(seed: &[u8; 32], device: u8, fwid: &[u8; 48]) -> Self {
        let ca = |pathlen| IsCa::Ca(BasicConstraints::Constrained(pathlen));
        let ca_usages = || vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        // Fixed serial numbers: the certificates must depend on nothing but the seed.
        let root_params = params("SVC DEV GPU Device Identity CA", 1, ca(2), ca_usages());
        let root_key = DevKey::derive(seed, "root");
        let root_der = certified(root_params.self_signed(&root_key));

        let issue =
            |issuer_params: &CertificateParams, issuer_key: &DevKey, label: &str, mut params: CertificateParams| {
                params.use_authority_key_identifier_extension = true;
                let key = DevKey::derive(seed, label);
                let der = certified(params.signed_by(&key, &Issuer::from_params(issuer_params, issuer_key)));
                (Cert { key, der }, params)
            };
        let (ica, ica_params) =
            issue(&root_params, &root_key, "ica", params("SVC DEV GPU Provisioner ICA", 2, ca(1), ca_usages()));
        // Device 0 keeps the labels and serials it had before devices were numbered.
        let own = |label: &str| if device == 0 { label.to_string() } else { format!("{label} {device}") };
        let mut brom_params = params("SVC DEV GPU BROM", 3, ca(0), ca_usages());
        let mut leaf_params =
            params("SVC DEV GPU FMC LF", 4, IsCa::ExplicitNoCa, vec![KeyUsagePurpose::DigitalSignature]);
        if device != 0 {
            brom_params.serial_number = Some(SerialNumber::from_slice(&[3, device]));
            leaf_params.serial_number = Some(SerialNumber::from_slice(&[4, device]));
        }
        let (brom, brom_params) = issue(&ica_params, &ica.key, &own("brom"), brom_params);
        leaf_params.custom_extensions.push(dice_fwid(fwid));
        let (leaf, _) = issue(&brom_params, &brom.key, &own("leaf"), leaf_params);

        let responder = |cn, serial| {
            let mut p = params(cn, serial, IsCa::ExplicitNoCa, vec![KeyUsagePurpose::DigitalSignature]);
            p.extended_key_usages = vec![ExtendedKeyUsagePurpose::OcspSigning];
            p
        };
        let (root_responder, _) = issue(
            &root_params,
            &root_key,
            "ocsp responder root",
            responder("SVC DEV GPU OCSP Responder Device Identity CA", 5),
        );
        let (ica_responder, _) = issue(
            &ica_params,
            &ica.key,
            "ocsp responder ica",
            responder("SVC DEV GPU OCSP Responder Provisioner ICA", 6),
        );
        let root = Cert { key: root_key, der: root_der };
        Self { root, ica, brom, leaf, root_responder, ica_responder }
    }
}

/// The firmware id as `shared::gpu::chain` reads a Hopper leaf's: an FWID
/// `SEQUENCE {id-sha384, OCTET STRING}` directly in the extension's SEQUENCE (NVIDIA's also
/// holds a version and a public key before it; this keeps the version only).
fn dice_fwid(fwid: &[u8; 48]) -> CustomExtension {
    let content = der::seq(&[der::tlv(0x02, &[1]), der::seq(&[der::oid(&der::SHA384), der::octets(fwid)])]);
    CustomExtension::from_oid_content(&DICE_FWID, content)
}

/// Every dev certificate is valid 2025-01-01T00:00:00Z .. 2100-01-01T00:00:00Z.
const VALIDITY: (u64, u64) = (1_735_689_600, 4_102_444_800);

fn params(cn: &str, serial: u8, is_ca: IsCa, key_usages: Vec<KeyUsagePurpose>) -> CertificateParams {
    x509::params("SVC DEV (not NVIDIA)", cn, serial, VALIDITY, is_ca, key_usages)
}
