//! A GPU's certificate chain (notes/gpu.md §1.3): leaf first, every certificate signed by the
//! next with ECDSA P-384/SHA-384 and valid at the given time, the last one NVIDIA's device
//! identity root, recognised by its public key (two encodings of that certificate circulate),
//! and the firmware id the leaf carries in its TCG DICE extension.

use p384::ecdsa::{Signature, VerifyingKey};
use sha2::{Digest, Sha256};
use x509_cert::Certificate;
use x509_cert::der::{Decode, Encode, oid::ObjectIdentifier};
use x509_cert::ext::pkix::BasicConstraints;

use super::GpuError;
use super::cache::Verified;
#[cfg(feature = "gpu-ppcie")]
use super::opaque::Pdi;
use super::tlv::{elements, only, tlv};

/// SHA-256 of the DER SubjectPublicKeyInfo of "NVIDIA Device Identity CA".
/// (NVIDIA's verifiers pin the same value: nvtrust, attestation-sdk `certs.h`, trustee.)
pub const NVIDIA_DEVICE_ROOT_SPKI_SHA256: [u8; 32] = [
    0xa9, 0x0c, 0x4e, 0xb5, 0xac, 0xfd, 0x3e, 0x3d, 0x03, 0xa2, 0x5d, 0xb6, 0xa2, 0x6b, 0x84, 0xf7, 0x20, 0xad, 0x05,
    0x03, 0x19, 0x6c, 0x62, 0x7c, 0x21, 0xdd, 0xd4, 0x8d, 0xd8, 0x5b, 0x06, 0xa4,
];

const BASIC_CONSTRAINTS: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.5.29.19");
const ECDSA_WITH_SHA384: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.4.3.3");
/// TCG DICE extensions carrying the firmware id: Hopper's, and Blackwell's `TcbInfo`.
const DICE_FWID: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.23.133.5.4.1");
const DICE_TCB_INFO: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.23.133.5.4.1.1");
/// id-sha384, DER content of the OID.
const SHA384_OID: [u8; 9] = [0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x02];

/// The most certificates a GPU chain has (NVIDIA's are five).
const MAX_CHAIN: usize = 8;

/// A chain that verified: the leaf's key and firmware id.
#[derive(Debug, Clone)]
pub struct VerifiedChain {
    pub leaf_key: VerifyingKey,
    pub leaf_fwid: Option<Vec<u8>>,
    /// Leaf first, the root last (its own, checked by key).
    pub certificates: Vec<Certificate>,
}

#[cfg(feature = "gpu-ppcie")]
impl VerifiedChain {
    /// The device's PDI, the name NVSwitches give it in protected-PCIe mode: the serial number
    /// of its BROM certificate (the leaf's issuer, which NVIDIA's provisioning CA signed) is one
    /// byte (0x41 on every GH100 and GB100 of the samples, 0x50 on every LS_10) and then the
    /// eight bytes of the PDI. A GPU's report does not carry its own PDI, and NVIDIA's
    /// verifiers do not read this one; it is what ties each switch's GPU list to the GPUs
    /// present. Found on both protected-PCIe sample sets (24 devices), and checked on every
    /// switch at every attestation, whose report does state its PDI
    /// ([`super::switch::authenticate_switch`]).
    pub fn device_pdi(&self) -> Result<Pdi, GpuError> {
        let brom = self.certificates.get(1).ok_or(GpuError::NoDevicePdi)?;
        match brom.tbs_certificate().serial_number().as_bytes() {
            [_, pdi @ ..] => pdi.try_into().map(Pdi).map_err(|_| GpuError::NoDevicePdi),
            [] => Err(GpuError::NoDevicePdi),
        }
    }
}

/// Verifies a PEM chain (leaf first) to the root whose SPKI hashes to `root_spki_sha256`, at
/// `now` (Unix seconds); signatures verified before are taken from `cache`.
pub fn verify(pem: &[u8], root_spki_sha256: &[u8; 32], now: u64, cache: &Verified) -> Result<VerifiedChain, GpuError> {
    let certificates = Certificate::load_pem_chain(pem).map_err(|_| GpuError::Malformed("certificate chain"))?;
    if !(2..=MAX_CHAIN).contains(&certificates.len()) {
        return Err(GpuError::Chain("not a chain of two to eight certificates"));
    }
    for cert in &certificates {
        let validity = cert.tbs_certificate().validity();
        let (from, to) =
            (validity.not_before.to_unix_duration().as_secs(), validity.not_after.to_unix_duration().as_secs());
        if now < from || now > to {
            return Err(GpuError::Chain("a certificate is not valid at this time"));
        }
    }
    for pair in certificates.windows(2) {
        let (cert, issuer) = (&pair[0], &pair[1]);
        // A signature alone is not a link: the issuer must be a CA and the one the
        // certificate names, or a leaf's key could certify a "device" of its own.
        if cert.tbs_certificate().issuer() != issuer.tbs_certificate().subject() {
            return Err(GpuError::Chain("a certificate's issuer is not the next certificate"));
        }
        if !is_ca(issuer)? {
            return Err(GpuError::Chain("an issuing certificate is not a CA"));
        }
        verify_signed_by(cert, &public_key(issuer)?, cache)?;
    }
    let root = certificates.last().ok_or(GpuError::Chain("no root"))?;
    if spki_sha256(root)? != *root_spki_sha256 {
        return Err(GpuError::Chain("the chain does not end at the pinned root"));
    }
    let leaf = &certificates[0];
    Ok(VerifiedChain { leaf_key: public_key(leaf)?, leaf_fwid: fwid(leaf)?, certificates })
}

/// Whether the certificate's basic constraints say it is a CA.
fn is_ca(cert: &Certificate) -> Result<bool, GpuError> {
    let extensions = cert.tbs_certificate().extensions().map(|e| e.as_slice()).unwrap_or_default();
    match extensions.iter().find(|e| e.extn_id == BASIC_CONSTRAINTS) {
        Some(e) => BasicConstraints::from_der(e.extn_value.as_bytes())
            .map(|b| b.ca)
            .map_err(|_| GpuError::Malformed("basic constraints")),
        None => Ok(false),
    }
}

/// SHA-256 of a certificate's DER SubjectPublicKeyInfo.
pub fn spki_sha256(cert: &Certificate) -> Result<[u8; 32], GpuError> {
    let der = cert.tbs_certificate().subject_public_key_info().to_der().map_err(|_| GpuError::Malformed("SPKI"))?;
    Ok(Sha256::digest(der).into())
}

/// A certificate's P-384 public key.
pub fn public_key(cert: &Certificate) -> Result<VerifyingKey, GpuError> {
    let spki = cert.tbs_certificate().subject_public_key_info();
    VerifyingKey::from_sec1_bytes(spki.subject_public_key.raw_bytes()).map_err(|_| GpuError::Chain("not a P-384 key"))
}

/// Checks that `cert` is signed by `issuer` with ECDSA P-384/SHA-384.
pub fn verify_signed_by(cert: &Certificate, issuer: &VerifyingKey, cache: &Verified) -> Result<(), GpuError> {
    if cert.signature_algorithm().oid != ECDSA_WITH_SHA384 {
        return Err(GpuError::Chain("a certificate not signed with ECDSA-SHA384"));
    }
    let tbs = cert.tbs_certificate().to_der().map_err(|_| GpuError::Malformed("certificate"))?;
    let signature =
        Signature::from_der(cert.signature().raw_bytes()).map_err(|_| GpuError::Malformed("certificate signature"))?;
    match cache.ecdsa(issuer, &tbs, &signature) {
        true => Ok(()),
        false => Err(GpuError::Chain("a certificate's signature does not verify")),
    }
}

/// The leaf's firmware id: the first SHA-384 FWID `SEQUENCE {id-sha384, OCTET STRING}` of its
/// DICE extension, a direct element of the extension's SEQUENCE (Hopper) or of its `fwids [6]`
/// (Blackwell's `TcbInfo`). `None` if the leaf has neither extension.
fn fwid(leaf: &Certificate) -> Result<Option<Vec<u8>>, GpuError> {
    let extensions = leaf.tbs_certificate().extensions().map(|e| e.as_slice()).unwrap_or_default();
    let Some(ext) = extensions.iter().find(|e| e.extn_id == DICE_FWID || e.extn_id == DICE_TCB_INFO) else {
        return Ok(None);
    };
    let body = only(ext.extn_value.as_bytes(), 0x30).ok_or(GpuError::Malformed("the DICE extension"))?;
    for element in elements(body) {
        let found = match element.tag {
            0x30 => sha384_fwid(element.value),
            0xa6 => elements(element.value).filter(|e| e.tag == 0x30).find_map(|e| sha384_fwid(e.value)),
            _ => None,
        };
        if let Some(digest) = found {
            return Ok(Some(digest.to_vec()));
        }
    }
    Err(GpuError::Chain("the DICE extension holds no SHA-384 firmware id"))
}

/// The digest of an FWID's contents `{id-sha384, OCTET STRING (48)}`, exactly.
fn sha384_fwid(fwid: &[u8]) -> Option<&[u8]> {
    let oid = tlv(fwid).filter(|t| t.tag == 0x06)?;
    let digest = only(oid.rest, 0x04)?;
    (oid.value == SHA384_OID && digest.len() == 48).then_some(digest)
}
