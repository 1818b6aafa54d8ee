//! Reading a request body: once, with a cap. An oversized body is read on (to a bound, for a
//! short while) and dropped before the 413 goes out, so the client finishes sending and reads
//! the answer instead of a reset connection.

use std::time::Duration;

use axum::body::{Body, Bytes};
use http_body_util::BodyExt;
use shared::envelope::MAX_ENVELOPE_JSON;

use crate::http::error::RelayError;

/// Largest private-route body: the largest envelope plus room for the other fields.
pub const MAX_PRIVATE_BODY: usize = MAX_ENVELOPE_JSON + 4096;
/// Largest body of the small JSON routes (sign-in, key management, swaps).
pub const MAX_SMALL_BODY: usize = 64 * 1024;
/// How much of an oversized body is read and dropped, at most, and for how long.
const DRAIN_BYTES: usize = 16 << 20;
const DRAIN_TIME: Duration = Duration::from_secs(2);

/// How long a body may take to arrive (`server.bodyReadSecs`), set once at start.
static READ_DEADLINE: std::sync::OnceLock<Duration> = std::sync::OnceLock::new();

/// Sets the body deadline for the life of the process (the first call wins).
pub fn set_read_deadline(deadline: Duration) {
    let _ = READ_DEADLINE.set(deadline);
}

/// The whole body, or `payload_too_large` past `limit`, or `request_timeout` when it does not
/// arrive in time (a client trickling its body holds nothing for long).
pub async fn read(body: Body, limit: usize) -> Result<Bytes, RelayError> {
    let deadline = READ_DEADLINE.get().copied().unwrap_or(Duration::from_secs(30));
    tokio::time::timeout(deadline, read_all(body, limit)).await.map_err(|_| RelayError::RequestTimeout)?
}

async fn read_all(body: Body, limit: usize) -> Result<Bytes, RelayError> {
    let mut body = body;
    let mut collected = Vec::new();
    while let Some(frame) = body.frame().await {
        let Ok(frame) = frame else { return Err(RelayError::BadRequest("the request body was cut short".into())) };
        let Ok(data) = frame.into_data() else { continue };
        if collected.len() + data.len() > limit {
            drain(body, collected.len() + data.len()).await;
            return Err(RelayError::PayloadTooLarge(limit));
        }
        collected.extend_from_slice(&data);
    }
    Ok(Bytes::from(collected))
}

async fn drain(mut body: Body, mut seen: usize) {
    let _ = tokio::time::timeout(DRAIN_TIME, async {
        while seen < DRAIN_BYTES {
            match body.frame().await {
                Some(Ok(frame)) => seen += frame.data_ref().map_or(0, |d| d.len()),
                _ => break,
            }
        }
    })
    .await;
}
