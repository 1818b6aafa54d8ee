//! Sealed objects (DESIGN §10): the enclave makes and opens them; the relay keeps the blobs in
//! `sealed_objects` and hands them back. A blob sealed under an earlier KEK comes back from
//! the enclave re-sealed under the current one, and replaces the stored one (lazy rotation);
//! `rewrap_all` does every object in one pass.

use axum::body::Bytes;
use serde::de::DeserializeOwned;
use shared::wire::codes::EnclaveCode;
use shared::wire::{NewObject, OpenedObject, SealedObject, StoredBlob};
use sqlx::Row;

use super::EnclavePool;
use crate::http::error::RelayError;
use crate::store::Store;

/// Asks an enclave that answers; refusals come back with their code.
pub(crate) async fn ask<T: DeserializeOwned>(
    enclaves: &EnclavePool,
    path: &str,
    body: &impl serde::Serialize,
) -> Result<T, RelayError> {
    let enclave = enclaves.any();
    let body = Bytes::from(serde_json::to_vec(body).map_err(|_| RelayError::Internal("a value did not serialize"))?);
    let answer = enclave.post_json(path, body).await.map_err(|_| enclave.unreachable())?;
    if answer.status == 200 {
        return serde_json::from_slice(&answer.body)
            .map_err(|_| RelayError::EnclaveAnswer("the enclave answered with an unexpected body"));
    }
    let refusal: serde_json::Value = serde_json::from_slice(&answer.body).unwrap_or_default();
    let code = refusal["error"].as_str().and_then(EnclaveCode::parse);
    let message = refusal["message"].as_str().unwrap_or("the enclave refused").chars().take(300).collect();
    Err(RelayError::Enclave { status: answer.status, code, message })
}

/// A new secret of `kind`, made and sealed by an enclave, stored here.
pub async fn create(store: &Store, enclaves: &EnclavePool, kind: &str) -> Result<SealedObject, RelayError> {
    let object: SealedObject = ask(enclaves, "/objects", &NewObject { kind: kind.into() }).await?;
    insert(store, &object, crate::unix_now()).await?;
    Ok(object)
}

/// Stores a new object.
pub async fn insert(store: &Store, object: &SealedObject, now: i64) -> Result<(), RelayError> {
    sqlx::query(
        "INSERT INTO sealed_objects (id, kind, version, blob, public_key, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $6)",
    )
    .bind(&object.id)
    .bind(&object.kind)
    .bind(i64::from(object.version))
    .bind(&object.blob)
    .bind(&object.public_key)
    .bind(now)
    .execute(store.pool())
    .await?;
    Ok(())
}

/// Replaces the blob of object `id`, only if it still is `expected` (so of two relays that
/// re-sealed the same object, one write wins and the other changes nothing). True if replaced.
pub async fn replace_blob(store: &Store, id: &str, expected: &str, blob: &str, now: i64) -> Result<bool, RelayError> {
    let done = sqlx::query("UPDATE sealed_objects SET blob = $1, updated_at = $2 WHERE id = $3 AND blob = $4")
        .bind(blob)
        .bind(now)
        .bind(id)
        .bind(expected)
        .execute(store.pool())
        .await?;
    Ok(done.rows_affected() == 1)
}

/// The stored object `id`.
pub async fn load(store: &Store, id: &str) -> Result<Option<SealedObject>, RelayError> {
    let row = sqlx::query("SELECT id, kind, version, blob, public_key FROM sealed_objects WHERE id = $1")
        .bind(id)
        .fetch_optional(store.pool())
        .await?;
    let object = row.map(|r| -> Result<SealedObject, sqlx::Error> {
        Ok(SealedObject {
            id: r.try_get("id")?,
            kind: r.try_get("kind")?,
            version: u32::try_from(r.try_get::<i64, _>("version")?).unwrap_or(0),
            blob: r.try_get("blob")?,
            public_key: r.try_get("public_key")?,
        })
    });
    Ok(object.transpose()?)
}

/// Object `id`, which a stored row names: its absence is the store's fault, not the caller's.
pub async fn load_named(store: &Store, id: &str) -> Result<SealedObject, RelayError> {
    load(store, id).await?.ok_or(RelayError::Internal("a stored sealed object is missing"))
}

/// Has an enclave open object `id` (proving it opens), storing its re-sealed blob when the
/// enclave re-sealed it under the current KEK.
pub async fn open(store: &Store, enclaves: &EnclavePool, id: &str) -> Result<OpenedObject, RelayError> {
    let stored = load(store, id).await?.ok_or(RelayError::NotFound("no sealed object with that id"))?;
    let opened: OpenedObject = ask(enclaves, "/objects/open", &StoredBlob { blob: stored.blob.clone() }).await?;
    if opened.id != stored.id || opened.kind != stored.kind {
        return Err(RelayError::EnclaveAnswer("the enclave opened another object than the one stored"));
    }
    if let Some(rewrapped) = &opened.rewrapped {
        replace_blob(store, id, &stored.blob, rewrapped, crate::unix_now()).await?;
    }
    Ok(opened)
}

/// Re-seals every stored object under the current KEK; returns (objects, re-sealed).
pub async fn rewrap_all(store: &Store, enclaves: &EnclavePool) -> Result<(usize, usize), RelayError> {
    let ids: Vec<String> = sqlx::query("SELECT id FROM sealed_objects ORDER BY id")
        .fetch_all(store.pool())
        .await?
        .iter()
        .map(|r| r.try_get("id"))
        .collect::<Result<_, _>>()?;
    let mut rewrapped = 0;
    for id in &ids {
        if open(store, enclaves, id).await?.rewrapped.is_some() {
            rewrapped += 1;
        }
    }
    Ok((ids.len(), rewrapped))
}
