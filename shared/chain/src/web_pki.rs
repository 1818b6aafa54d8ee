//! TLS to the public internet: an HTTPS RPC node or router, and the agent's web tools. The
//! web PKI's roots compiled in (Mozilla's, through `webpki-roots`), ring, rustls's safe default
//! protocol versions. A pinned node uses its own configuration instead.

/// The client configuration for a server that proves itself under the web PKI.
pub fn web_pki() -> rustls::ClientConfig {
    let roots = rustls::RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.to_vec() };
    rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .expect("ring supports the default protocol versions")
        .with_root_certificates(roots)
        .with_no_client_auth()
}
