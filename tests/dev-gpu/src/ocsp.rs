//! Stapled OCSP answers (RFC 6960) for the dev chain, in the shape NVIDIA's responder gives them
//! (notes/gpu.md §2 "Offline/caching facts"): one certificate per response, a SHA-384 CertID,
//! a delegated responder named by key hash and included in `certs`, ECDSA-SHA384, valid a day.

use ring::digest::{SHA1_FOR_LEGACY_USE_ONLY, digest};
use sha2::{Digest, Sha384};

use super::der::{self, bits, explicit, generalized_time, octets, oid, seq, tlv};
use super::pki::Cert;

/// How long an answer is current, as NVIDIA's are.
const VALIDITY_SECS: u64 = 24 * 3600;

/// A DER `OCSPResponse` saying `cert` (issued by `issuer`) is good, produced at `produced_at`
/// (Unix seconds), signed by `responder` (a certificate `issuer` issued for OCSP signing).
pub(crate) fn good(cert: &Cert, issuer: &Cert, responder: &Cert, produced_at: u64) -> Vec<u8> {
    // The certificates are ours and rcgen-made, so their fields are always there.
    let fields = |der| der::cert_fields(der).expect("a dev certificate parses");
    let (cert_fields, issuer_fields) = (fields(&cert.der), fields(&issuer.der));
    let cert_id = seq(&[
        // With NULL parameters, as NVIDIA writes it.
        seq(&[oid(&der::SHA384), tlv(0x05, &[])]),
        octets(&Sha384::digest(issuer_fields.subject)),
        octets(&Sha384::digest(issuer_fields.public_key)),
        tlv(0x02, cert_fields.serial),
    ]);
    let single = seq(&[
        cert_id,
        tlv(0x80, &[]), // certStatus good: [0] IMPLICIT NULL
        generalized_time(produced_at),
        explicit(0, &generalized_time(produced_at.saturating_add(VALIDITY_SECS))),
    ]);
    // responderID byKey [2]: SHA-1 of the responder's subjectPublicKey bits (RFC 6960 KeyHash).
    let key_hash = digest(&SHA1_FOR_LEGACY_USE_ONLY, &responder.key.public);
    let tbs = seq(&[explicit(2, &octets(key_hash.as_ref())), generalized_time(produced_at), seq(&[single])]);
    let signature = responder.key.sign_der(&tbs);
    let basic = seq(&[
        tbs,
        seq(&[oid(&der::ECDSA_WITH_SHA384)]),
        bits(&signature),
        explicit(0, &seq(std::slice::from_ref(&responder.der))),
    ]);
    // OCSPResponse {successful (0), responseBytes [0] {id-pkix-ocsp-basic, OCTET STRING}}.
    seq(&[tlv(0x0a, &[0]), explicit(0, &seq(&[oid(&der::OCSP_BASIC), octets(&basic)]))])
}
