//! The enclaves behind this relay (DESIGN §10), each known by the key id of its current
//! X25519 key (hex sha256, the envelopes' `keyId`). A background refresh keeps the ids current:
//! an enclave that reboots comes back with a new key, and envelopes sealed to its old key are
//! refused with `decrypt_failed`, the contract's signal to refetch the key (§3 rule 4).

use std::sync::atomic::{AtomicUsize, Ordering};

use axum::body::Bytes;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use shared::wire::PublicKeyResponse;
use shared::wire::codes::EnclaveCode;

use super::EnclaveClient;
use crate::http::error::RelayError;

pub struct Member {
    pub client: EnclaveClient,
    /// The current key, while the enclave answers: parsed, and the enclave's answer as it
    /// came, which `GET /tee/public-key` serves byte for byte without a round trip.
    key: RwLock<Option<(PublicKeyResponse, Bytes)>>,
}

impl Member {
    pub fn key(&self) -> Option<PublicKeyResponse> {
        self.key.read().ok().and_then(|k| k.as_ref().map(|(key, _)| key.clone()))
    }

    /// The enclave's `/public-key` answer as last fetched.
    pub fn key_answer(&self) -> Option<Bytes> {
        self.key.read().ok().and_then(|k| k.as_ref().map(|(_, body)| body.clone()))
    }

    fn key_id(&self) -> Option<[u8; 32]> {
        let key = self.key()?;
        shared::receipt::decode_hex32(&key.public_key_sha256)
    }

    async fn refresh(&self) {
        let fresh = match self.client.get_now("/public-key").await {
            Ok(answer) if answer.status == 200 => {
                serde_json::from_slice::<PublicKeyResponse>(&answer.body).ok().map(|key| (key, answer.body))
            }
            _ => None,
        };
        let changed = self.key().map(|k| k.public_key) != fresh.as_ref().map(|(k, _)| k.public_key.clone());
        if changed {
            tracing::info!(endpoint = %self.client.endpoint, up = fresh.is_some(), "enclave key changed");
        }
        if let Ok(mut key) = self.key.write() {
            *key = fresh;
        }
    }
}

pub struct EnclavePool {
    members: Vec<Member>,
    next: AtomicUsize,
}

impl EnclavePool {
    /// `shown`: what `teeEndpoint` says for any of them (default each one's own URL);
    /// `max_in_flight`: requests to each enclave at once (its connections are as many).
    pub fn new(endpoints: &[String], timeout: Duration, shown: Option<&str>, max_in_flight: usize) -> Self {
        let members = endpoints
            .iter()
            .map(|e| Member { client: EnclaveClient::new(e, timeout, shown, max_in_flight), key: RwLock::new(None) })
            .collect();
        EnclavePool { members, next: AtomicUsize::new(0) }
    }

    pub fn members(&self) -> &[Member] {
        &self.members
    }

    /// Asks every enclave for its current key.
    pub async fn refresh(&self) {
        for member in &self.members {
            member.refresh().await;
        }
    }

    /// Refreshes every `interval` until the pool is dropped.
    pub fn keep_fresh(self: &Arc<Self>, interval: Duration) {
        let pool = Arc::downgrade(self);
        tokio::spawn(async move {
            while let Some(pool) = pool.upgrade() {
                pool.refresh().await;
                drop(pool);
                tokio::time::sleep(interval).await;
            }
        });
    }

    /// The current key of an enclave that answers (they take turns), as that enclave sent it;
    /// `None` when none is known to answer.
    pub fn any_key_answer(&self) -> Option<Bytes> {
        let up: Vec<Bytes> = self.members.iter().filter_map(Member::key_answer).collect();
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        (!up.is_empty()).then(|| up[n % up.len()].clone())
    }

    /// An enclave that answers, taking turns; the first one when none is known to answer
    /// (the request then reports it unreachable).
    pub fn any(&self) -> &EnclaveClient {
        let up: Vec<&Member> = self.members.iter().filter(|m| m.key().is_some()).collect();
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        match up.is_empty() {
            true => &self.members[0].client,
            false => &up[n % up.len()].client,
        }
    }

    /// The enclave that holds the key `key_id` names, or any one when the envelope names none.
    /// A key no enclave holds (a reboot made a new one) is refused before anything is sent.
    pub async fn for_key(&self, key_id: Option<[u8; 32]>) -> Result<&EnclaveClient, RelayError> {
        let Some(id) = key_id else { return Ok(self.any()) };
        if let Some(m) = self.members.iter().find(|m| m.key_id() == Some(id)) {
            return Ok(&m.client);
        }
        // The key may be newer than the last refresh.
        self.refresh().await;
        let holder = self.members.iter().find(|m| m.key_id() == Some(id));
        // An enclave that does not answer may hold it: say that one is unreachable.
        let down = self.members.iter().find(|m| m.key().is_none());
        match holder.or(down) {
            Some(m) => Ok(&m.client),
            None => Err(RelayError::Enclave {
                status: 400,
                code: Some(EnclaveCode::DecryptFailed),
                message: "the envelope is sealed to a key no enclave here holds; refetch the enclave key".into(),
            }),
        }
    }
}
