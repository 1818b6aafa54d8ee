//! Stapling NVIDIA's OCSP answers (RFC 6960) for each GPU's device chain: for every certificate
//! between the leaf and the root (what the enclave's `shared::gpu::ocsp` checks; NVIDIA's
//! responder does not serve the leaf), one answer, fetched by HTTP POST and kept for
//! `refresh`. NVIDIA signs the answers, so carrying them needs no trust; the agent only makes
//! sure it asks for the right certificate, and keeps the last answer when the responder is down
//! (the enclave's age limit decides whether it still counts).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use der::asn1::{Null, ObjectIdentifier, OctetString};
use der::{Encode, Sequence};
use sha2::{Digest, Sha256, Sha384};
use x509_cert::Certificate;
use x509_cert::serial_number::SerialNumber;
use x509_cert::spki::AlgorithmIdentifierOwned;

/// NVIDIA's OCSP responder for the device identity chain (nvtrust, attestation-sdk).
pub const NVIDIA_OCSP_URL: &str = "https://ocsp.ndis.nvidia.com/";
/// id-sha384, the hash NVIDIA's responder names certificates by.
const ID_SHA384: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.16.840.1.101.3.4.2.2");
/// Largest answer taken: NVIDIA's are about 1 KiB with the responder certificate.
const MAX_ANSWER: usize = 16 * 1024;

/// Fetches and keeps OCSP answers.
pub struct Stapler {
    url: String,
    http: reqwest::Client,
    refresh: Duration,
    /// By SHA-256 of the certificate's DER.
    kept: Mutex<HashMap<[u8; 32], Kept>>,
}

/// When an answer was fetched, and the DER `OCSPResponse`.
type Kept = (Instant, Vec<u8>);

impl Stapler {
    pub fn new(url: &str, refresh: Duration) -> Self {
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(10))
            .build()
            .expect("a TLS client with the built-in roots");
        Stapler { url: url.to_string(), http, refresh, kept: Mutex::default() }
    }

    /// The answers for `chain_pem` (leaf first), one per certificate between the leaf and the
    /// root, fresh where the responder answered and the last kept one where it did not.
    pub async fn staple(&self, chain_pem: &str) -> Vec<Vec<u8>> {
        let chain = match Certificate::load_pem_chain(chain_pem.as_bytes()) {
            Ok(chain) if chain.len() >= 3 => chain,
            _ => {
                tracing::warn!("a GPU certificate chain is not PEM of at least three certificates: nothing stapled");
                return Vec::new();
            }
        };
        let mut answers = Vec::new();
        for pair in chain[1..].windows(2) {
            let (cert, issuer) = (&pair[0], &pair[1]);
            let Ok(der) = cert.to_der() else { continue };
            let key: [u8; 32] = Sha256::digest(&der).into();
            let kept = self.kept.lock().unwrap_or_else(|e| e.into_inner()).get(&key).cloned();
            if let Some((at, answer)) = &kept
                && at.elapsed() < self.refresh
            {
                answers.push(answer.clone());
                continue;
            }
            match self.fetch(cert, issuer).await {
                Ok(answer) => {
                    self.kept.lock().unwrap_or_else(|e| e.into_inner()).insert(key, (Instant::now(), answer.clone()));
                    answers.push(answer);
                }
                Err(e) => {
                    tracing::warn!(error = %e, "OCSP responder: keeping the last answer, if any");
                    answers.extend(kept.map(|(_, answer)| answer));
                }
            }
        }
        answers
    }

    async fn fetch(&self, cert: &Certificate, issuer: &Certificate) -> Result<Vec<u8>, String> {
        let body = request(cert, issuer)?;
        let answer = self
            .http
            .post(&self.url)
            .header("content-type", "application/ocsp-request")
            .header("accept", "application/ocsp-response")
            .body(body)
            .send()
            .await
            .map_err(|e| format!("{} cannot be reached: {e}", self.url))?;
        if !answer.status().is_success() {
            return Err(format!("{} answered {}", self.url, answer.status()));
        }
        let bytes = answer.bytes().await.map_err(|e| e.to_string())?;
        // A DER SEQUENCE, not an error page; the enclave checks everything else.
        if bytes.len() > MAX_ANSWER || bytes.first() != Some(&0x30) {
            return Err(format!("{} answered something that is not an OCSPResponse", self.url));
        }
        Ok(bytes.to_vec())
    }
}

/// The DER `OCSPRequest` for `cert`, issued by `issuer`: one request, no nonce (answers are
/// stapled and reused, so a nonce would only stop the responder's caching).
pub fn request(cert: &Certificate, issuer: &Certificate) -> Result<Vec<u8>, String> {
    let request =
        OcspRequest { tbs_request: TbsRequest { request_list: vec![Request { req_cert: cert_id(cert, issuer)? }] } };
    request.to_der().map_err(|e| e.to_string())
}

/// `CertID` as NVIDIA's responder writes it: SHA-384 (with NULL parameters) of the issuer's
/// name and of its public key's bits, and the serial.
pub fn cert_id(cert: &Certificate, issuer: &Certificate) -> Result<CertId, String> {
    let name = issuer.tbs_certificate().subject().to_der().map_err(|e| e.to_string())?;
    let key = issuer.tbs_certificate().subject_public_key_info().subject_public_key.raw_bytes();
    let octets = |bytes: &[u8]| OctetString::new(bytes).map_err(|e| e.to_string());
    Ok(CertId {
        hash_algorithm: AlgorithmIdentifierOwned { oid: ID_SHA384, parameters: Some(Null.into()) },
        issuer_name_hash: octets(&Sha384::digest(name))?,
        issuer_key_hash: octets(&Sha384::digest(key))?,
        serial_number: cert.tbs_certificate().serial_number().clone(),
    })
}

// RFC 6960 §4.1.1, the parts a request without signature, extensions or requestor has.
#[derive(Debug, Sequence)]
struct OcspRequest {
    tbs_request: TbsRequest,
}

#[derive(Debug, Sequence)]
struct TbsRequest {
    request_list: Vec<Request>,
}

#[derive(Debug, Sequence)]
struct Request {
    req_cert: CertId,
}

#[derive(Debug, Clone, PartialEq, Eq, Sequence)]
pub struct CertId {
    hash_algorithm: AlgorithmIdentifierOwned,
    issuer_name_hash: OctetString,
    issuer_key_hash: OctetString,
    serial_number: SerialNumber,
}

#[cfg(test)]
mod tests;
