//! Stand-in for Intel's Provisioning Certification Service, API v4 (as a PCCS serves it): the
//! four routes a TDX verifier needs, answering with one collateral set.
//!
//! `start(collateral_json)` takes collateral in `Collateral::to_json`'s form (dcap-qvl's
//! `QuoteCollateralV3`, byte fields as hex) and serves it in the PCS's shapes: the PCK CRL as
//! DER with its `SGX-PCK-CRL-Issuer-Chain` header, `{"tcbInfo":…,"signature":…}` and
//! `{"enclaveIdentity":…,"signature":…}` bodies with their URL-encoded issuer-chain headers,
//! and the root CA CRL as hex text. The recorder lists each request's path and query (tests
//! check that only an FMSPC and a CA were asked for); `fail_with` makes later requests fail.

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::Value;

pub use crate::Failure;

/// `path?query` of each request, in order.
pub type Recorder = crate::Recorder<String>;

#[derive(Clone)]
struct App {
    collateral: std::sync::Arc<Value>,
    recorder: Recorder,
}

impl App {
    fn field(&self, name: &str) -> &str {
        self.collateral[name].as_str().unwrap_or_default()
    }
}

/// PEM in a header, percent-encoded as the PCS sends it.
fn encoded(pem: &str) -> HeaderValue {
    let text: String = pem
        .bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect();
    HeaderValue::from_str(&text).expect("percent-encoded text is a valid header")
}

fn answer(app: &App, uri: &Uri, header: (&'static str, &str), body: impl IntoResponse) -> Response {
    app.recorder.push(uri.to_string());
    match app.recorder.failure() {
        Some(Failure::Status(code)) => {
            return (StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR), "pcs-internal-detail")
                .into_response();
        }
        Some(Failure::Garbage) => return "not collateral".into_response(),
        None => {}
    }
    let mut headers = HeaderMap::new();
    if !header.0.is_empty() {
        headers.insert(header.0, encoded(header.1));
    }
    (headers, body).into_response()
}

async fn pck_crl(State(app): State<App>, uri: Uri) -> Response {
    let der = hex::decode(app.field("pck_crl")).unwrap_or_default();
    answer(&app, &uri, ("SGX-PCK-CRL-Issuer-Chain", app.field("pck_crl_issuer_chain")), der)
}

async fn tcb(State(app): State<App>, uri: Uri) -> Response {
    let body = format!(r#"{{"tcbInfo":{},"signature":"{}"}}"#, app.field("tcb_info"), app.field("tcb_info_signature"));
    answer(&app, &uri, ("TCB-Info-Issuer-Chain", app.field("tcb_info_issuer_chain")), body)
}

async fn qe_identity(State(app): State<App>, uri: Uri) -> Response {
    let body = format!(
        r#"{{"enclaveIdentity":{},"signature":"{}"}}"#,
        app.field("qe_identity"),
        app.field("qe_identity_signature")
    );
    answer(&app, &uri, ("SGX-Enclave-Identity-Issuer-Chain", app.field("qe_identity_issuer_chain")), body)
}

async fn root_ca_crl(State(app): State<App>, uri: Uri) -> Response {
    let hex_text = app.field("root_ca_crl").to_string();
    answer(&app, &uri, ("", ""), hex_text)
}

/// Serves `collateral_json` on loopback; the base URL is what a client's `--pccs` takes.
pub async fn start(collateral_json: &str) -> (crate::Running, Recorder) {
    let collateral: Value = serde_json::from_str(collateral_json).expect("collateral JSON");
    let recorder = Recorder::default();
    let app = App { collateral: std::sync::Arc::new(collateral), recorder: recorder.clone() };
    let router = Router::new()
        .route("/sgx/certification/v4/pckcrl", get(pck_crl))
        .route("/tdx/certification/v4/tcb", get(tcb))
        .route("/tdx/certification/v4/qe/identity", get(qe_identity))
        .route("/sgx/certification/v4/rootcacrl", get(root_ca_crl))
        .with_state(app);
    (crate::serve(router).await, recorder)
}
