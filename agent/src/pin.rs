//! TLS to a GPU node by pinned key: the node must present a certificate whose
//! SubjectPublicKeyInfo hashes (sha256) to the pin from the enclave's measured configuration,
//! and must prove it holds that key in the handshake. No CA, name or date is consulted: the
//! pin is the whole trust decision, and it is measured, so clients see which node is trusted.

use std::sync::Arc;

use rustls::DigitallySignedStruct;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use sha2::{Digest, Sha256};

#[derive(Debug)]
struct PinnedKey {
    spki_sha256: [u8; 32],
    algorithms: WebPkiSupportedAlgorithms,
}

/// sha256 of a certificate's DER SubjectPublicKeyInfo (what operators pin).
pub fn spki_sha256(cert_der: &[u8]) -> Option<[u8; 32]> {
    let der = CertificateDer::from(cert_der);
    let cert = webpki::EndEntityCert::try_from(&der).ok()?;
    Some(Sha256::digest(cert.subject_public_key_info().as_ref()).into())
}

impl ServerCertVerifier for PinnedKey {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match spki_sha256(end_entity) {
            Some(hash) if hash == self.spki_sha256 => Ok(ServerCertVerified::assertion()),
            Some(_) => Err(rustls::Error::InvalidCertificate(rustls::CertificateError::ApplicationVerificationFailure)),
            None => Err(rustls::Error::InvalidCertificate(rustls::CertificateError::BadEncoding)),
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

/// A rustls client configuration that trusts exactly the pinned key.
pub fn pinned_tls_config(spki_sha256: [u8; 32]) -> rustls::ClientConfig {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let algorithms = provider.signature_verification_algorithms;
    rustls::ClientConfig::builder_with_provider(provider.clone() as Arc<CryptoProvider>)
        .with_safe_default_protocol_versions()
        .expect("ring supports the default protocol versions")
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(PinnedKey { spki_sha256, algorithms }))
        .with_no_client_auth()
}
