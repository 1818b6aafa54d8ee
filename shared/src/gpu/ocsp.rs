//! Stapled OCSP responses for a GPU's device chain (notes/gpu.md §2 step 4, §6 "Revocation"):
//! the node fetches them from NVIDIA and passes them on; NVIDIA signs them, so who carried them
//! does not matter. For every certificate between the leaf and the root (NVIDIA's responder does
//! not serve the leaf) one response must say `good`, be signed by a responder certificate that
//! the certificate's issuer issued for OCSP signing, be current at `now`, and be no older than
//! the policy allows.

use p384::ecdsa::Signature;
use sha2::{Digest, Sha384};
use x509_cert::Certificate;
use x509_cert::der::asn1::GeneralizedTime;
use x509_cert::der::{Decode, Encode, oid::ObjectIdentifier};

use super::GpuError;
use super::cache::Verified;
use super::chain;
use super::tlv::{elements, only, tlv};

const OCSP_BASIC: [u8; 9] = [0x2b, 0x06, 0x01, 0x05, 0x05, 0x07, 0x30, 0x01, 0x01];
const ECDSA_WITH_SHA384: [u8; 8] = [0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x03];
const SHA384: [u8; 9] = [0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x02];
const OCSP_SIGNING: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.6.1.5.5.7.3.9");
const EXTENDED_KEY_USAGE: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.5.29.37");

/// A certificate as OCSP names it: SHA-384 of its issuer's name and key, and its serial.
#[derive(Debug, Clone, PartialEq, Eq)]
struct CertId {
    issuer_name_hash: Vec<u8>,
    issuer_key_hash: Vec<u8>,
    serial: Vec<u8>,
}

/// What a checked response says.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Status {
    cert_id: CertId,
    good: bool,
    produced_at: u64,
    this_update: u64,
    next_update: Option<u64>,
}

/// Checks that every certificate between the leaf and the root of `chain` (leaf first) has a
/// good, current response among `responses` (DER `OCSPResponse`s); returns the oldest
/// response's `producedAt`.
pub fn check_chain(
    chain: &[Certificate],
    responses: &[Vec<u8>],
    now: u64,
    max_age: u64,
    cache: &Verified,
) -> Result<u64, GpuError> {
    // A chain of leaf and root alone has no certificate NVIDIA's responder answers for, so
    // nothing could say it is revoked.
    if chain.len() < 3 {
        return Err(GpuError::Ocsp("no certificate of the chain has a responder"));
    }
    let mut oldest = u64::MAX;
    for pair in chain[1..].windows(2) {
        let (cert, issuer) = (&pair[0], &pair[1]);
        let wanted = cert_id(cert, issuer)?;
        let status = responses
            .iter()
            .find_map(|der| check_response(der, &wanted, issuer, now, cache).ok())
            .ok_or(GpuError::Ocsp("no valid response for a certificate of the chain"))?;
        if !status.good {
            return Err(GpuError::Ocsp("a certificate of the chain is revoked or unknown"));
        }
        if now < status.this_update || status.next_update.is_none_or(|next| now > next) {
            return Err(GpuError::Ocsp("a response is not current"));
        }
        if now.saturating_sub(status.produced_at) > max_age {
            return Err(GpuError::Ocsp("a response is older than the policy allows"));
        }
        oldest = oldest.min(status.produced_at);
    }
    Ok(oldest)
}

/// The SHA-384 CertID of `cert` issued by `issuer`.
fn cert_id(cert: &Certificate, issuer: &Certificate) -> Result<CertId, GpuError> {
    let name = issuer.tbs_certificate().subject().to_der().map_err(|_| GpuError::Malformed("issuer name"))?;
    let key = issuer.tbs_certificate().subject_public_key_info().subject_public_key.raw_bytes();
    let serial = cert.tbs_certificate().serial_number().as_bytes().to_vec();
    Ok(CertId {
        issuer_name_hash: Sha384::digest(name).to_vec(),
        issuer_key_hash: Sha384::digest(key).to_vec(),
        serial,
    })
}

/// Parses one `OCSPResponse` and, if it answers for `wanted`, checks its signature: by a
/// responder certificate in the response that `issuer` issued for OCSP signing and that is
/// valid at `now`.
fn check_response(
    der: &[u8],
    wanted: &CertId,
    issuer: &Certificate,
    now: u64,
    cache: &Verified,
) -> Result<Status, GpuError> {
    let bad = GpuError::Ocsp("malformed response");
    let outer = only(der, 0x30).ok_or(bad.clone())?;
    let status = tlv(outer).filter(|t| t.tag == 0x0a && t.value == [0]).ok_or(GpuError::Ocsp("not successful"))?;
    let bytes = only(status.rest, 0xa0).and_then(|b| only(b, 0x30)).ok_or(bad.clone())?;
    let kind = tlv(bytes).filter(|t| t.tag == 0x06 && t.value == OCSP_BASIC).ok_or(bad.clone())?;
    let basic = only(kind.rest, 0x04).and_then(|b| only(b, 0x30)).ok_or(bad.clone())?;

    let mut parts = elements(basic);
    let tbs = parts.next().filter(|t| t.tag == 0x30).ok_or(bad.clone())?;
    let algorithm = parts.next().filter(|t| t.tag == 0x30).ok_or(bad.clone())?;
    let signature = parts.next().filter(|t| t.tag == 0x03).ok_or(bad.clone())?;
    let certs = parts.next().filter(|t| t.tag == 0xa0).and_then(|t| only(t.value, 0x30)).ok_or(bad.clone())?;
    let status = read_response_data(tbs.value)?;
    if status.cert_id != *wanted {
        return Err(GpuError::Ocsp("a response for another certificate"));
    }
    if tlv(algorithm.value).is_none_or(|oid| oid.tag != 0x06 || oid.value != ECDSA_WITH_SHA384) {
        return Err(GpuError::Ocsp("not signed with ECDSA-SHA384"));
    }
    let responder = elements(certs)
        .filter_map(|c| Certificate::from_der(c.whole).ok())
        .find(|c| authorised(c, issuer, now, cache))
        .ok_or(GpuError::Ocsp("no responder certificate its issuer authorised"))?;
    let signature =
        signature.value.split_first().filter(|(unused, _)| **unused == 0).map(|(_, s)| s).ok_or(bad.clone())?;
    let signature = Signature::from_der(signature).map_err(|_| bad.clone())?;
    if !cache.ecdsa(&chain::public_key(&responder)?, tbs.whole, &signature) {
        return Err(GpuError::Ocsp("the response's signature does not verify"));
    }
    Ok(status)
}

/// A responder certificate issued by `issuer`, for OCSP signing, valid at `now`.
fn authorised(responder: &Certificate, issuer: &Certificate, now: u64, cache: &Verified) -> bool {
    let validity = responder.tbs_certificate().validity();
    let current = validity.not_before.to_unix_duration().as_secs() <= now
        && now <= validity.not_after.to_unix_duration().as_secs();
    let for_ocsp = responder.tbs_certificate().extensions().is_some_and(|list| {
        list.iter().any(|e| {
            e.extn_id == EXTENDED_KEY_USAGE
                && only(e.extn_value.as_bytes(), 0x30)
                    .is_some_and(|usages| elements(usages).any(|u| u.tag == 0x06 && u.value == OCSP_SIGNING.as_bytes()))
        })
    });
    current
        && for_ocsp
        && chain::public_key(issuer).is_ok_and(|key| chain::verify_signed_by(responder, &key, cache).is_ok())
}

/// `ResponseData`: `[0] version?`, responderID, producedAt, responses (exactly one), `[1] extensions?`.
fn read_response_data(data: &[u8]) -> Result<Status, GpuError> {
    let bad = GpuError::Ocsp("malformed response data");
    let mut parts = elements(data).skip_while(|t| t.tag == 0xa0);
    let _responder_id = parts.next().filter(|t| t.tag == 0xa1 || t.tag == 0xa2).ok_or(bad.clone())?;
    let produced_at = time(parts.next().ok_or(bad.clone())?.whole)?;
    let responses = parts.next().filter(|t| t.tag == 0x30).ok_or(bad.clone())?;
    let mut singles = elements(responses.value);
    let single = singles.next().filter(|t| t.tag == 0x30).ok_or(bad.clone())?;
    if singles.next().is_some() {
        return Err(GpuError::Ocsp("more than one certificate in a response"));
    }
    let mut fields = elements(single.value);
    let id = fields.next().filter(|t| t.tag == 0x30).ok_or(bad.clone())?;
    let mut id_fields = elements(id.value);
    let hash = id_fields.next().filter(|t| t.tag == 0x30).and_then(|t| tlv(t.value)).ok_or(bad.clone())?;
    if hash.tag != 0x06 || hash.value != SHA384 {
        return Err(GpuError::Ocsp("a CertID not hashed with SHA-384"));
    }
    let mut octets = || id_fields.next().map(|t| t.value.to_vec()).ok_or(bad.clone());
    let cert_id = CertId { issuer_name_hash: octets()?, issuer_key_hash: octets()?, serial: octets()? };
    let status = fields.next().ok_or(bad.clone())?;
    let good = status.tag == 0x80 && status.value.is_empty();
    let this_update = time(fields.next().ok_or(bad.clone())?.whole)?;
    let next_update = match fields.next() {
        Some(t) if t.tag == 0xa0 => Some(time(t.value)?),
        _ => None,
    };
    Ok(Status { cert_id, good, produced_at, this_update, next_update })
}

/// A DER GeneralizedTime as Unix seconds.
fn time(der: &[u8]) -> Result<u64, GpuError> {
    let t = GeneralizedTime::from_der(der).map_err(|_| GpuError::Ocsp("a malformed time"))?;
    Ok(t.to_unix_duration().as_secs())
}
