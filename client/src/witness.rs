//! The freshness witness (DESIGN §13), run by the key holder: per mint the head of the pool's
//! book lineage it acknowledged, moved only by compare and set on the parent, and on disk
//! before any answer leaves. It adds no trust: the key holder already holds the KEK.
//!
//! - An append is taken only from an enclave key the key holder verified (its attestation).
//! - The heads file is replaced whole: written to a temporary file, fsynced, renamed over the
//!   old one, the directory fsynced; a crash leaves the old heads or the new ones.
//! - Answers are signed by the provisioner key, which the enclave's measured configuration
//!   names; requests and answers travel through the relay (`/tee/witness/…`), which can delay
//!   them but not forge them.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use ed25519_dalek::SigningKey;
use serde::{Deserialize, Serialize};
use shared::api::Appends;
use shared::witness::{AppendRequest, Head, WitnessAnswer};

use crate::api::Client;
use crate::error::ClientError;

/// What the heads file holds.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct HeadsFile {
    heads: BTreeMap<String, Head>,
}

#[derive(Debug, thiserror::Error)]
pub enum WitnessError {
    #[error("the append request does not verify: {0}")]
    BadRequest(shared::witness::WitnessError),
    #[error("the heads file {0}: {1}")]
    Io(PathBuf, std::io::Error),
}

pub struct Witness {
    path: PathBuf,
    key: SigningKey,
    heads: Mutex<BTreeMap<String, Head>>,
    /// ed25519 keys of enclaves whose attestation the key holder verified.
    enclaves: Mutex<HashSet<[u8; 32]>>,
    /// When the enclaves behind the relay were last verified for an unknown key.
    learned_at: Mutex<Option<Instant>>,
}

impl Witness {
    /// The witness whose heads live in `path` (none yet if it does not exist), answering with
    /// `key`, the provisioner key.
    pub fn open(path: &Path, key: SigningKey) -> Result<Witness, ClientError> {
        let heads = match std::fs::read(path) {
            Ok(bytes) => {
                serde_json::from_slice::<HeadsFile>(&bytes)
                    .map_err(|e| ClientError::Secrets(format!("{}: not a witness heads file: {e}", path.display())))?
                    .heads
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => BTreeMap::new(),
            Err(e) => return Err(ClientError::Secrets(format!("{}: {e}", path.display()))),
        };
        Ok(Witness {
            path: path.to_path_buf(),
            key,
            heads: Mutex::new(heads),
            enclaves: Mutex::new(HashSet::new()),
            learned_at: Mutex::new(None),
        })
    }

    /// Every mint's head, as a bundle carries them.
    pub fn heads(&self) -> BTreeMap<String, Head> {
        self.heads.lock().map(|h| h.clone()).unwrap_or_default()
    }

    /// An enclave key whose attestation verified: its appends are taken.
    pub fn trust(&self, enclave_key: [u8; 32]) {
        if let Ok(mut keys) = self.enclaves.lock() {
            keys.insert(enclave_key);
        }
    }

    fn knows(&self, enclave_key: &[u8; 32]) -> bool {
        self.enclaves.lock().is_ok_and(|k| k.contains(enclave_key))
    }

    /// Appends `request.next` if the mint's head is `request.parent` and the request comes from
    /// an enclave it verified (durably, before answering); answers with the head either way, so
    /// a request it will never take (an unverified key: an earlier boot's, or the host's own) is
    /// refused rather than left waiting. Asked again, an appended request gets the same answer.
    pub fn answer(&self, request: &AppendRequest) -> Result<WitnessAnswer, WitnessError> {
        let enclave = request.verify().map_err(WitnessError::BadRequest)?;
        let mut heads = self.heads.lock().unwrap_or_else(|p| p.into_inner());
        let head = heads.get(&request.mint).cloned().unwrap_or_else(Head::genesis);
        if head == request.parent && self.knows(&enclave) {
            let mut next = heads.clone();
            next.insert(request.mint.clone(), request.next.clone());
            self.persist(&next)?;
            *heads = next;
            return Ok(WitnessAnswer::signed(request, request.next.clone(), &self.key));
        }
        Ok(WitnessAnswer::signed(request, head, &self.key))
    }

    fn persist(&self, heads: &BTreeMap<String, Head>) -> Result<(), WitnessError> {
        let io = |e| WitnessError::Io(self.path.clone(), e);
        let text = serde_json::to_vec_pretty(&HeadsFile { heads: heads.clone() }).unwrap_or_default();
        crate::private_file::write(&self.path, &text).map_err(io)
    }
}

/// How long one look for append requests may wait at the relay.
const LONG_POLL_SECS: u64 = 20;
/// Least time between two verifications of the relay's enclaves for an unknown key.
const LEARN_EVERY: Duration = Duration::from_secs(10);

impl Client {
    /// Verifies every enclave the relay lists whose key the witness does not know yet, and
    /// trusts the ones that pass; at most every [`LEARN_EVERY`], so appends signed by keys no
    /// listed enclave holds cannot keep it attesting.
    async fn learn_enclaves(&self, witness: &Witness) {
        {
            let mut at = witness.learned_at.lock().unwrap_or_else(|p| p.into_inner());
            if at.is_some_and(|t| t.elapsed() < LEARN_EVERY) {
                return;
            }
            *at = Some(Instant::now());
        }
        let Ok(listing) = self.get::<serde_json::Value>("/tee/keys").await else { return };
        let ids = listing["enclaves"].as_array().cloned().unwrap_or_default();
        for id in ids.iter().filter(|e| e["healthy"] == true).filter_map(|e| e["keyId"].as_str()) {
            let Some(key_id) = shared::receipt::decode_hex32(id) else { continue };
            if let Ok((_, Some(key))) = self.attest_key(Some(key_id)).await {
                witness.trust(key.enclave_public_key);
            }
        }
    }

    /// One round: the append requests waiting at the relay, answered.
    pub async fn witness_round(&self, witness: &Witness) -> Result<usize, ClientError> {
        let path = format!("/tee/witness/appends?waitSecs={LONG_POLL_SECS}");
        let Appends { appends } = self.get(&path).await?;
        if appends.iter().any(|r| r.verify().is_ok_and(|k| !witness.knows(&k))) {
            self.learn_enclaves(witness).await;
        }
        let mut answers = Vec::new();
        if !appends.is_empty() && appends.iter().all(|r| r.verify().is_err()) {
            // Only requests nobody could answer (not signed as they say): do not spin on them.
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
        for request in &appends {
            match witness.answer(request) {
                Ok(answer) => answers.push(answer),
                Err(e) => {
                    tracing::warn!(mint = %request.mint, version = request.next.version, error = %e, "append not answered")
                }
            }
        }
        if !answers.is_empty() {
            let response = self
                .http
                .post(format!("{}/tee/witness/answers", self.base))
                .json(&serde_json::json!({ "answers": answers }))
                .send()
                .await
                .map_err(|_| ClientError::RelayUnreachable(self.base.clone()))?;
            let kept: serde_json::Value = self.read(response).await?;
            if kept["stored"] == 0 {
                // The relay kept none (it does not know this witness's key yet): do not spin.
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }
        Ok(answers.len())
    }
}

/// The witness as a daemon: answers the relay's append requests until `stop` resolves.
pub async fn serve(client: &Client, witness: &Witness, stop: impl std::future::Future<Output = ()>) {
    let mut stop = std::pin::pin!(stop);
    loop {
        let round = tokio::select! {
            _ = &mut stop => return,
            round = client.witness_round(witness) => round,
        };
        match round {
            Ok(n) if n > 0 => tracing::info!(answered = n, "witnessed book appends"),
            Ok(_) => {}
            Err(e) => {
                tracing::warn!(error = %e, "cannot reach the relay's witness queue");
                tokio::select! {
                    _ = &mut stop => return,
                    _ = tokio::time::sleep(Duration::from_secs(1)) => {}
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn witness(dir: &Path) -> Witness {
        Witness::open(&dir.join("heads.json"), SigningKey::from_bytes(&[7; 32])).unwrap()
    }

    #[test]
    fn appends_by_compare_and_set_and_keeps_heads_across_restarts() {
        let dir = tempfile::tempdir().unwrap();
        let enclave = SigningKey::from_bytes(&[1; 32]);
        let w = witness(dir.path());
        let first = AppendRequest::signed("m", Head::genesis(), Head::of(1, "a"), &enclave);
        // An unverified enclave (an earlier boot, the host's own key): refused, nothing appended.
        let refused = w.answer(&first).unwrap();
        assert_eq!((refused.appended(), refused.head.clone(), w.heads().len()), (false, Head::genesis(), 0));
        w.trust(enclave.verifying_key().to_bytes());
        let acked = w.answer(&first).unwrap();
        assert!(acked.appended());
        assert_eq!(w.answer(&first).unwrap(), acked, "asked again: the same answer");
        // A sibling (another successor of the same parent) is refused with the head.
        let sibling = AppendRequest::signed("m", Head::genesis(), Head::of(1, "b"), &enclave);
        let refused = w.answer(&sibling).unwrap();
        assert_eq!((refused.appended(), refused.head.clone()), (false, Head::of(1, "a")));
        let second = AppendRequest::signed("m", Head::of(1, "a"), Head::of(2, "c"), &enclave);
        assert!(w.answer(&second).unwrap().appended());
        // The old answer cannot be turned into a newer one, and the heads survive a restart.
        let again = witness(dir.path());
        assert_eq!(again.heads(), [("m".to_string(), Head::of(2, "c"))].into());
        again.trust(enclave.verifying_key().to_bytes());
        assert!(!again.answer(&sibling).unwrap().appended());
        let listed = [shared::address::Address(SigningKey::from_bytes(&[7; 32]).verifying_key().to_bytes())];
        assert_eq!(acked.verify(&listed), Ok(()));
    }

    #[test]
    fn a_tampered_request_is_not_answered_and_changes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let enclave = SigningKey::from_bytes(&[1; 32]);
        let w = witness(dir.path());
        w.trust(enclave.verifying_key().to_bytes());
        let mut request = AppendRequest::signed("m", Head::genesis(), Head::of(1, "a"), &enclave);
        request.next = Head::of(1, "relay's own book");
        assert!(matches!(w.answer(&request), Err(WitnessError::BadRequest(_))));
        assert!(w.heads().is_empty());
        assert!(!dir.path().join("heads.json").exists(), "nothing written");
    }
}
