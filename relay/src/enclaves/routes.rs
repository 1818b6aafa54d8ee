//! The enclaves' public routes: key, attestation and the list of all keys, passed through byte
//! for byte (clients verify them; the relay adds nothing it could forge: at most Intel's signed
//! collateral to a quote that has none), and provisioning, forwarded unread to the enclave the
//! bundle is sealed to.

use std::sync::Arc;

use axum::Json;
use axum::extract::{RawQuery, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::value::RawValue;
use shared::envelope::Envelope;
use shared::wire::ProvisionRequest;

use super::{CollateralSource, EnclaveAnswer, EnclaveClient, EnclavePool};
use crate::http::error::{ErrorBody, RelayError};

fn passthrough(answer: EnclaveAnswer) -> Response {
    let status = StatusCode::from_u16(answer.status).unwrap_or(StatusCode::BAD_GATEWAY);
    (status, [(header::CONTENT_TYPE, "application/json")], answer.body).into_response()
}

/// `GET /tee/public-key`: the key of an enclave that answers (they take turns).
#[utoipa::path(get, path = "/tee/public-key", tag = "enclave",
    summary = "The enclave's X25519 public key (contract §2.5)",
    responses((status = 200, body = shared::wire::PublicKeyResponse),
              (status = 502, description = "`tee_unreachable`, with `teeEndpoint`", body = ErrorBody)))]
pub async fn public_key(State(enclaves): State<Arc<EnclavePool>>) -> Result<Response, RelayError> {
    // The answer the background refresh last fetched (at most `enclaveRefreshSecs` old, and
    // renewed at once when an envelope names a key the enclave no longer holds).
    if let Some(body) = enclaves.any_key_answer() {
        return Ok(([(header::CONTENT_TYPE, "application/json")], body).into_response());
    }
    let enclave = enclaves.any();
    let answer = enclave.get("/public-key").await.map_err(|_| enclave.unreachable())?;
    Ok(passthrough(answer))
}

/// `GET /tee/attestation[?nonce=<64 hex>][&keyId=<64 hex>]`: the attestation of the enclave
/// holding `keyId` (any one without it); the nonce is checked here and again by the enclave.
#[utoipa::path(get, path = "/tee/attestation", tag = "enclave",
    summary = "The enclave's attestation: TDX quotes binding its keys, and the nonce signed (contract §2.4b)",
    params(("nonce" = Option<String>, Query, description = "64 hex characters, echoed and signed", pattern = "^[0-9a-fA-F]{64}$"),
           ("keyId" = Option<String>, Query, description = "The enclave holding this key (hex sha256 of its X25519 key)", pattern = "^[0-9a-f]{64}$")),
    responses((status = 200, body = shared::wire::AttestationResponse),
              (status = 400, description = "A malformed nonce or key id, or a key no enclave holds", body = ErrorBody),
              (status = 502, description = "`tee_unreachable`", body = ErrorBody)))]
pub async fn attestation(
    State(enclaves): State<Arc<EnclavePool>>,
    State(collateral): State<Option<Arc<CollateralSource>>>,
    RawQuery(query): RawQuery,
) -> Result<Response, RelayError> {
    let path = match shared::freshness::nonce_from_query(query.as_deref()) {
        None => "/attestation".to_string(),
        Some(Ok(nonce)) => format!("/attestation?nonce={}", hex::encode(nonce)),
        Some(Err(())) => return Err(RelayError::BadRequest("nonce must be 64 hex characters".into())),
    };
    let key_id = match query.as_deref().and_then(|q| q.split('&').find_map(|p| p.strip_prefix("keyId="))) {
        None => None,
        Some(text) => Some(
            shared::receipt::decode_hex32(text)
                .ok_or_else(|| RelayError::BadRequest("keyId must be 64 lowercase hex characters".into()))?,
        ),
    };
    let enclave = enclaves.for_key(key_id).await?;
    let answer = match path.as_str() {
        "/attestation" => enclave.attestation().await,
        _ => enclave.get(&path).await,
    };
    let mut answer = answer.map_err(|_| enclave.unreachable())?;
    if let Some(source) = &collateral
        && answer.status == 200
        && let Some(body) = source.attach(&answer.body, crate::unix_now().max(0) as u64).await
    {
        answer.body = body.into();
    }
    Ok(passthrough(answer))
}

/// One enclave in `GET /tee/keys`.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EnclaveEntry {
    /// Hex sha256 of its X25519 key (the envelopes' `keyId`); null while it does not answer.
    pub key_id: Option<String>,
    pub public_key: Option<String>,
    pub healthy: bool,
    /// Its `GET /tee/attestation` document, as it sent it.
    #[schema(value_type = Option<Object>)]
    pub attestation: Option<Box<RawValue>>,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct EnclaveList {
    pub enclaves: Vec<EnclaveEntry>,
}

/// `GET /tee/keys`: every enclave behind this relay, with its attestation.
#[utoipa::path(get, path = "/tee/keys", tag = "enclave", summary = "Every enclave behind this relay, with its attestation",
    responses((status = 200, body = EnclaveList)))]
pub async fn keys(State(pool): State<Arc<EnclavePool>>) -> Json<EnclaveList> {
    let mut enclaves = Vec::new();
    for member in pool.members() {
        let key = member.key();
        let attestation = match key {
            None => None,
            Some(_) => match member.client.get("/attestation").await {
                Ok(a) if a.status == 200 => {
                    std::str::from_utf8(&a.body).ok().and_then(|t| RawValue::from_string(t.into()).ok())
                }
                _ => None,
            },
        };
        enclaves.push(EnclaveEntry {
            key_id: key.as_ref().map(|k| k.public_key_sha256.clone()),
            public_key: key.as_ref().map(|k| k.public_key.clone()),
            healthy: attestation.is_some(),
            attestation,
        });
    }
    Json(EnclaveList { enclaves })
}

/// `POST /tee/provision {encryptedBundle}`: a key holder's sealed secrets bundle, forwarded
/// unread to the enclave whose key it names; the enclave's answer comes back unchanged.
#[utoipa::path(post, path = "/tee/provision", tag = "enclave",
    summary = "A key holder's secrets bundle, sealed to the attested key, forwarded unread (docs/custody.md)",
    request_body = shared::wire::ProvisionRequest,
    responses((status = 200, description = "The enclave's provisioning state", body = shared::wire::ProvisioningState),
              (status = 400, description = "A malformed body or envelope, or the enclave's refusal", body = ErrorBody),
              (status = 413, body = ErrorBody), (status = 502, body = ErrorBody),
              (status = "default", description = "The enclave's refusal, passed on", body = ErrorBody)))]
pub async fn provision(
    State(enclaves): State<Arc<EnclavePool>>,
    body: axum::body::Body,
) -> Result<Response, RelayError> {
    let body = crate::http::body::read(body, crate::http::body::MAX_SMALL_BODY).await?;
    let request: ProvisionRequest = serde_json::from_slice(&body)
        .map_err(|_| RelayError::BadRequest("body must be {\"encryptedBundle\": \"<envelope JSON>\"}".into()))?;
    // Only the envelope's outer fields are read here, for its key id.
    let envelope = Envelope::parse(&request.encrypted_bundle)?;
    let enclave: &EnclaveClient = enclaves.for_key(envelope.key_id).await?;
    let answer = enclave.post_json("/provision", body).await.map_err(|_| enclave.unreachable())?;
    Ok(passthrough(answer))
}
