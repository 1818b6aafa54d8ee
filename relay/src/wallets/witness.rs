//! The relay's side of the freshness witness (DESIGN §13): it only carries messages. The key
//! holder long-polls `GET /tee/witness/appends` for the enclave's append requests of stored
//! book steps and posts its signed answers to `POST /tee/witness/answers`. Both messages are
//! signed (by the enclave, by the witness), so the relay can delay or drop them, not forge
//! them; it keeps an answer only when it is signed by a witness key an enclave behind it
//! reports, so nobody else can fill a step's answer with noise.

use std::collections::HashSet;
use std::sync::RwLock;
use std::time::Duration;

use axum::Json;
use axum::extract::{Query, State};
use serde::{Deserialize, Serialize};
use shared::address::Address;
use shared::api::Appends;
use shared::witness::{AppendRequest, WitnessAnswer};
use sqlx::Row;

use crate::http::error::{ErrorBody, RelayError};
use crate::state::AgentsState;
use crate::store::StoreError;

/// Longest a long poll waits (below common 30 s client and proxy timeouts).
const MAX_WAIT_SECS: u64 = 25;

#[derive(Default)]
pub struct WitnessQueue {
    /// A step was stored: wakes the key holder's long poll.
    pub appended: tokio::sync::Notify,
    /// An answer was stored: wakes the steps waiting for one.
    pub answered: tokio::sync::Notify,
    /// Witness keys the enclaves behind this relay reported.
    witnesses: RwLock<HashSet<Address>>,
    /// When the enclaves were last asked for them.
    asked_at: std::sync::Mutex<Option<std::time::Instant>>,
}

/// Least time between two rounds of asking the enclaves for their witness keys, so answers
/// signed by unknown keys cannot make the relay ask them on every post.
const ASK_EVERY: Duration = Duration::from_secs(5);

#[derive(Debug, Deserialize, utoipa::ToSchema)]
pub struct Answers {
    #[schema(value_type = Vec<Object>)]
    pub answers: Vec<WitnessAnswer>,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Stored {
    /// Answers kept (each matched a waiting step).
    pub stored: usize,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Wait {
    wait_secs: Option<u64>,
}

async fn waiting(api: &AgentsState) -> Result<Vec<AppendRequest>, RelayError> {
    let rows = sqlx::query(
        "SELECT append_json FROM privacy_book_steps WHERE state = 'witnessing' AND answer_json IS NULL \
         ORDER BY created_at LIMIT 64",
    )
    .fetch_all(api.store.pool())
    .await
    .map_err(StoreError::from)?;
    rows.iter()
        .map(|r| {
            let text: String = r.try_get("append_json")?;
            serde_json::from_str(&text).map_err(|_| sqlx::Error::Decode("append_json".into()))
        })
        .collect::<Result<_, sqlx::Error>>()
        .map_err(RelayError::from)
}

#[utoipa::path(get, path = "/tee/witness/appends", tag = "enclave",
    summary = "The enclave's book appends waiting for the freshness witness (the key holder long-polls this)",
    params(("waitSecs" = Option<u64>, Query, maximum = 25, description = "Wait up to this long (seconds, at most 25) for one")),
    responses((status = 200, body = Appends), (status = "default", body = ErrorBody)))]
pub async fn appends(State(api): State<AgentsState>, Query(wait): Query<Wait>) -> Result<Json<Appends>, RelayError> {
    let wait = Duration::from_secs(wait.wait_secs.unwrap_or(0).min(MAX_WAIT_SECS));
    if api.agents.is_none() {
        // No pool here: nothing will ever wait.
        tokio::time::sleep(wait).await;
        return Ok(Json(Appends { appends: Vec::new() }));
    }
    let notified = api.wallets.witness.appended.notified();
    let found = waiting(&api).await?;
    if !found.is_empty() || wait.is_zero() {
        return Ok(Json(Appends { appends: found }));
    }
    let _ = tokio::time::timeout(wait, notified).await;
    Ok(Json(Appends { appends: waiting(&api).await? }))
}

#[utoipa::path(post, path = "/tee/witness/answers", tag = "enclave",
    summary = "The freshness witness's signed answers to book appends",
    request_body = Answers,
    responses((status = 200, body = Stored), (status = 400, body = ErrorBody), (status = "default", body = ErrorBody)))]
pub async fn answers(State(api): State<AgentsState>, body: axum::body::Body) -> Result<Json<Stored>, RelayError> {
    let bytes = crate::http::body::read(body, crate::http::body::MAX_SMALL_BODY).await?;
    let Answers { answers } = serde_json::from_slice(&bytes)
        .map_err(|_| RelayError::BadRequest("body must be {\"answers\": [...]}".into()))?;
    api.configured()?;
    let mut stored = 0;
    for answer in answers {
        if !known_witness(&api, &api.wallets.witness, &answer).await {
            tracing::warn!(witness = %answer.witness, "an answer not signed by a witness of these enclaves");
            continue;
        }
        if keep(&api, &answer).await? {
            stored += 1;
        }
    }
    if stored > 0 {
        api.wallets.witness.answered.notify_waiters();
    }
    Ok(Json(Stored { stored }))
}

/// Keeps `answer` on its step, if the step waits for one and the answer is to its request.
async fn keep(api: &AgentsState, answer: &WitnessAnswer) -> Result<bool, RelayError> {
    let row = sqlx::query("SELECT append_json FROM privacy_book_steps WHERE digest = $1 AND answer_json IS NULL")
        .bind(&answer.next.digest)
        .fetch_optional(api.store.pool())
        .await
        .map_err(StoreError::from)?;
    let Some(row) = row else { return Ok(false) };
    let text: String = row.try_get("append_json").map_err(StoreError::from)?;
    let Ok(append) = serde_json::from_str::<AppendRequest>(&text) else { return Ok(false) };
    if (&append.mint, &append.parent, &append.next, &append.enclave_pubkey)
        != (&answer.mint, &answer.parent, &answer.next, &answer.requester)
    {
        return Ok(false);
    }
    let text = serde_json::to_string(answer).map_err(|_| RelayError::Internal("a value did not serialize"))?;
    let done = sqlx::query(
        "UPDATE privacy_book_steps SET answer_json = $1, updated_at = $2 WHERE digest = $3 AND answer_json IS NULL",
    )
    .bind(text)
    .bind(crate::unix_now())
    .bind(&answer.next.digest)
    .execute(api.store.pool())
    .await
    .map_err(StoreError::from)?;
    Ok(done.rows_affected() == 1)
}

/// Whether the answer verifies under a witness key an enclave behind this relay reports from
/// its measured configuration (asked again when an unknown one signs).
async fn known_witness(api: &AgentsState, queue: &WitnessQueue, answer: &WitnessAnswer) -> bool {
    let listed = |queue: &WitnessQueue| -> Vec<Address> {
        queue.witnesses.read().map(|w| w.iter().copied().collect()).unwrap_or_default()
    };
    if answer.verify(&listed(queue)).is_ok() {
        return true;
    }
    {
        let mut asked = queue.asked_at.lock().unwrap_or_else(|p| p.into_inner());
        if asked.is_some_and(|t| t.elapsed() < ASK_EVERY) {
            return false;
        }
        *asked = Some(std::time::Instant::now());
    }
    for member in api.enclaves.members() {
        let Ok(a) = member.client.get("/attestation").await else { continue };
        let Ok(body) = serde_json::from_slice::<serde_json::Value>(&a.body) else { continue };
        let listed = body["provisioning"]["witnessKeys"].as_array().cloned().unwrap_or_default();
        if let Ok(mut keys) = queue.witnesses.write() {
            keys.extend(listed.iter().filter_map(|k| k.as_str().and_then(Address::parse)));
        }
    }
    answer.verify(&listed(queue)).is_ok()
}
