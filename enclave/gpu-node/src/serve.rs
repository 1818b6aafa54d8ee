//! The node's one port: TLS on the pinned key, `GET /attest?nonce=` and `/v1/*` to the model
//! server. The enclave reaches both over the same key, so the session it attested is the one
//! its prompts travel on.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Path as UrlPath, Query, State};
use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use rcgen::{KeyPair, PublicKeyData};
use sha2::{Digest, Sha256};

use crate::attest::Attester;

/// The most a prompt to the model server may carry.
const MAX_BODY: usize = 16 * 1024 * 1024;
/// A TLS handshake slower than this is dropped, so one slow peer cannot hold the port.
const HANDSHAKE: Duration = Duration::from_secs(10);

pub struct Node {
    pub attester: Attester,
    /// SHA-256 of the TLS key's SubjectPublicKeyInfo.
    pub pin: [u8; 32],
    /// The model server's `/v1` base URL.
    pub upstream: String,
    pub http: reqwest::Client,
}

pub fn router(node: Arc<Node>) -> Router {
    Router::new()
        .route("/attest", axum::routing::get(attest))
        .route("/v1/{*rest}", axum::routing::any(forward))
        .layer(DefaultBodyLimit::max(MAX_BODY))
        .with_state(node)
}

#[derive(serde::Deserialize)]
struct Nonce {
    nonce: String,
}

async fn attest(State(node): State<Arc<Node>>, Query(q): Query<Nonce>) -> Response {
    let Some(nonce) = hex::decode(&q.nonce).ok().and_then(|n| <[u8; 32]>::try_from(n).ok()) else {
        return refuse(StatusCode::BAD_REQUEST, "nonce must be 64 hex characters");
    };
    match node.attester.evidence(&node.pin, &nonce).await {
        Ok(evidence) => axum::Json(evidence).into_response(),
        Err(e) => {
            tracing::error!(error = %e, "no evidence for the enclave");
            refuse(StatusCode::SERVICE_UNAVAILABLE, &e.to_string())
        }
    }
}

/// Passes the call to the model server, as it came.
async fn forward(
    State(node): State<Arc<Node>>,
    method: Method,
    UrlPath(rest): UrlPath<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let mut call = node.http.request(method, format!("{}/{rest}", node.upstream)).body(body);
    if let Some(kind) = headers.get("content-type") {
        call = call.header("content-type", kind);
    }
    match call.send().await {
        Ok(answer) => {
            let status = StatusCode::from_u16(answer.status().as_u16()).unwrap_or(StatusCode::BAD_GATEWAY);
            let kind = answer.headers().get("content-type").cloned();
            // The enclave asks for whole completions, not streams.
            let Ok(body) = answer.bytes().await else {
                return refuse(StatusCode::BAD_GATEWAY, "the model server's answer broke off");
            };
            let mut response = (status, body).into_response();
            if let Some(kind) = kind {
                response.headers_mut().insert("content-type", kind);
            }
            response
        }
        Err(e) => {
            tracing::warn!(error = %e, "model server unreachable");
            refuse(StatusCode::BAD_GATEWAY, "the model server cannot be reached")
        }
    }
}

fn refuse(status: StatusCode, message: &str) -> Response {
    (status, axum::Json(serde_json::json!({"error": message}))).into_response()
}

/// The node's TLS key from `path`, made (mode 0600) on the first start.
pub fn load_or_make_key(path: &Path) -> Result<KeyPair, String> {
    match std::fs::read_to_string(path) {
        Ok(pem) => KeyPair::from_pem(&pem).map_err(|e| format!("{}: {e}", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            use std::io::Write;
            use std::os::unix::fs::OpenOptionsExt;
            let key = KeyPair::generate().map_err(|e| e.to_string())?;
            let mut file = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(path)
                .map_err(|e| format!("{}: {e}", path.display()))?;
            file.write_all(key.serialize_pem().as_bytes()).and_then(|()| file.sync_all()).map_err(|e| e.to_string())?;
            Ok(key)
        }
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}

/// SHA-256 of `key`'s SubjectPublicKeyInfo: what the enclave pins.
pub fn pin(key: &KeyPair) -> [u8; 32] {
    Sha256::digest(key.subject_public_key_info()).into()
}

/// A TLS server on `key`, with a self-signed certificate (the enclave pins the key, not a CA).
pub fn tls(key: &KeyPair) -> Result<tokio_rustls::TlsAcceptor, String> {
    let cert = rcgen::CertificateParams::new(vec!["gpu-node.invalid".into()])
        .and_then(|p| p.self_signed(key))
        .map_err(|e| e.to_string())?;
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_no_client_auth()
        .with_single_cert(vec![cert.der().clone()], rustls::pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into()))
        .map_err(|e| e.to_string())?;
    Ok(tokio_rustls::TlsAcceptor::from(Arc::new(config)))
}

/// TCP with a TLS handshake per connection, for `axum::serve`.
pub struct TlsListener {
    pub tcp: tokio::net::TcpListener,
    pub acceptor: tokio_rustls::TlsAcceptor,
}

impl axum::serve::Listener for TlsListener {
    type Io = tokio_rustls::server::TlsStream<tokio::net::TcpStream>;
    type Addr = std::net::SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            let Ok((tcp, addr)) = self.tcp.accept().await else { continue };
            if let Ok(Ok(tls)) = tokio::time::timeout(HANDSHAKE, self.acceptor.accept(tcp)).await {
                return (tls, addr);
            }
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        self.tcp.local_addr()
    }
}
