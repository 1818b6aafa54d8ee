//! Stand-in for NVIDIA's OCSP responder (`ocsp.ndis.nvidia.com`, RFC 6960 over HTTP POST): it
//! holds signed answers (real NVIDIA ones or a development PKI's) and gives, for each
//! `application/ocsp-request`, the answer whose `CertID` is the one asked for, byte for byte;
//! for a certificate it has no answer for, `unauthorized` (6), as a responder that is not
//! authoritative must. The recorder keeps each request's DER body; `fail_with` makes later
//! requests fail.

use std::sync::Arc;

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;

pub use crate::Failure;

/// Each request's DER body, in order.
pub type Recorder = crate::Recorder<Vec<u8>>;

#[derive(Clone)]
struct App {
    answers: Arc<Vec<Vec<u8>>>,
    recorder: Recorder,
}

/// Serves `answers` (DER `OCSPResponse`s) at `/`.
pub async fn start(answers: Vec<Vec<u8>>) -> (crate::Running, Recorder) {
    let recorder = Recorder::default();
    let app = App { answers: Arc::new(answers), recorder: recorder.clone() };
    (crate::serve(Router::new().route("/", post(respond)).with_state(app)).await, recorder)
}

async fn respond(State(app): State<App>, body: axum::body::Bytes) -> Response {
    app.recorder.push(body.to_vec());
    if let Some(failure) = app.recorder.failure() {
        return match failure {
            Failure::Status(code) => {
                (StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR), "responder down")
                    .into_response()
            }
            Failure::Garbage => (StatusCode::OK, "<html>not an answer</html>").into_response(),
        };
    }
    // OCSPRequest → TBSRequest → requestList → Request → CertID.
    let cert_id = [0, 0, 0, 0].iter().try_fold(&body[..], |der, _| first_inner(der)).and_then(whole_first);
    let answer = match cert_id {
        Some(id) => app.answers.iter().find(|a| a.windows(id.len()).any(|w| w == id)).cloned(),
        None => return (StatusCode::BAD_REQUEST, "malformed request").into_response(),
    };
    // OCSPResponse { responseStatus unauthorized (6) }.
    let answer = answer.unwrap_or_else(|| vec![0x30, 0x03, 0x0a, 0x01, 0x06]);
    (StatusCode::OK, [("content-type", "application/ocsp-response")], answer).into_response()
}

/// The contents of the first DER element of `der`, if it is a SEQUENCE.
fn first_inner(der: &[u8]) -> Option<&[u8]> {
    let (header, len) = header(der)?;
    (der[0] == 0x30).then(|| der.get(header..header + len)).flatten()
}

/// The first DER element of `der`, whole.
fn whole_first(der: &[u8]) -> Option<&[u8]> {
    let (header, len) = header(der)?;
    der.get(..header + len)
}

/// (header length, content length) of the DER element at the start of `der`.
fn header(der: &[u8]) -> Option<(usize, usize)> {
    let first = *der.get(1)?;
    if first < 0x80 {
        return Some((2, first as usize));
    }
    let n = (first & 0x7f) as usize;
    if n == 0 || n > 4 {
        return None;
    }
    let len = der.get(2..2 + n)?.iter().fold(0usize, |acc, b| (acc << 8) | *b as usize);
    Some((2 + n, len))
}
