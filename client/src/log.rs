//! Checking a receipt against the transparency log (docs/log.md "What a client checks"):
//! the receipt's leaf is in a signed head, and that head extends the newest anchored head
//! (or is extended by it). The checks are one pure function, [`check`], so tests can feed it
//! tampered proofs and forked heads; [`Client::log_proof`] fetches what it needs.

use serde::Serialize;
use shared::tlog::wire::{Anchor, Anchors, ConsistencyProof, InclusionProof, WireError, decode_hashes};
use shared::tlog::{ProofError, leaf_hash, verify_consistency, verify_inclusion};

use crate::api::Client;
use crate::error::ClientError;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LogError {
    #[error("{0}")]
    Wire(#[from] WireError),
    #[error("inclusion proof: {0}")]
    Inclusion(ProofError),
    #[error("the anchored head and the proof's head are not consistent: {0}")]
    Consistency(ProofError),
    #[error("the signed head is for {head} leaves, the proof for {proof}")]
    SizeMismatch { head: u64, proof: u64 },
    #[error("the consistency proof is for {got:?}, not {want:?}")]
    WrongConsistencySizes { got: (u64, u64), want: (u64, u64) },
    #[error("the anchor's transaction does not carry its head: {0}")]
    AnchorTransaction(&'static str),
}

/// What was checked, for printing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LogCheck {
    pub leaf_index: u64,
    pub tree_size: u64,
    /// hex
    pub root_hash: String,
    /// hex of the key every head was signed by
    pub log_key: String,
    /// The newest anchored head, if any was checked.
    pub anchor: Option<AnchorCheck>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AnchorCheck {
    pub tree_size: u64,
    pub tx_signature: String,
    /// The ledger transaction found on a chain of the caller's choosing (`--rpc`), when checked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub landed: Option<String>,
}

/// The sizes a consistency proof must join: the smaller head first.
pub fn consistency_sizes(proof_size: u64, anchor_size: u64) -> (u64, u64) {
    (proof_size.min(anchor_size), proof_size.max(anchor_size))
}

/// Checks `proof` for `entry`: the head's signature (by `log_key` when pinned, else by the key
/// it names), the audit path to its root; with an anchor, the anchor's signature by the same
/// key, its ledger transaction (signed by that key, carrying the head's hash), and the
/// consistency of the two heads.
pub fn check(
    entry: &[u8],
    proof: &InclusionProof,
    anchored: Option<(&Anchor, &ConsistencyProof)>,
    log_key: Option<&[u8; 32]>,
) -> Result<LogCheck, LogError> {
    let (_, _, named_key) = proof.sth.decode()?;
    let key = *log_key.unwrap_or(&named_key);
    let head = proof.sth.verify(Some(&key))?;
    if head.size != proof.tree_size {
        return Err(LogError::SizeMismatch { head: head.size, proof: proof.tree_size });
    }
    let path = decode_hashes(&proof.audit_path, "auditPath")?;
    verify_inclusion(proof.leaf_index, head.size, &leaf_hash(entry), &path, &head.root).map_err(LogError::Inclusion)?;
    let anchor = match anchored {
        None => None,
        Some((anchor, consistency)) => {
            // A head signed by any other key is a fork, whatever it says.
            let anchored_head = anchor.sth.verify(Some(&key))?;
            let (_, signature, _) = anchor.sth.decode()?;
            let sth_hash = anchored_head.signed_hash(&signature);
            if anchor.sth_hash != hex::encode(sth_hash) {
                return Err(LogError::AnchorTransaction("sthHash is not the head's hash"));
            }
            let tx = shared::b64::decode(&anchor.transaction).map_err(|_| LogError::AnchorTransaction("not base64"))?;
            let tx = shared::ledger::anchor::parse_and_verify(&tx)
                .map_err(|_| LogError::AnchorTransaction("not a signed anchor transaction"))?;
            if tx.payer != key || tx.sth_hash != sth_hash || tx.id() != anchor.tx_signature {
                return Err(LogError::AnchorTransaction("signed by another key or for another head"));
            }
            let want = consistency_sizes(head.size, anchored_head.size);
            if (consistency.first, consistency.second) != want {
                return Err(LogError::WrongConsistencySizes { got: (consistency.first, consistency.second), want });
            }
            let hashes = decode_hashes(&consistency.proof, "proof")?;
            let (r1, r2) = if anchored_head.size <= head.size {
                (anchored_head.root, head.root)
            } else {
                (head.root, anchored_head.root)
            };
            verify_consistency(want.0, want.1, &r1, &r2, &hashes).map_err(LogError::Consistency)?;
            Some(AnchorCheck { tree_size: anchored_head.size, tx_signature: anchor.tx_signature.clone(), landed: None })
        }
    };
    Ok(LogCheck {
        leaf_index: proof.leaf_index,
        tree_size: head.size,
        root_hash: hex::encode(head.root),
        log_key: hex::encode(key),
        anchor,
    })
}

/// Everything [`check`] needs, as the relay served it.
#[derive(Debug, Clone)]
pub struct LogEvidence {
    pub proof: InclusionProof,
    pub anchored: Option<(Anchor, ConsistencyProof)>,
}

impl LogEvidence {
    pub fn check(&self, entry: &[u8], log_key: Option<&[u8; 32]>) -> Result<LogCheck, LogError> {
        check(entry, &self.proof, self.anchored.as_ref().map(|(a, c)| (a, c)), log_key)
    }
}

/// Which anchor a log check is made against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnchorChoice {
    /// The newest, landed on a chain or not.
    Newest,
    /// The newest whose memo has landed (`ledgerSignature` set), for a check on the chain: the
    /// newest anchor may be seconds from landing, and a pending one proves nothing there.
    NewestLanded,
}

impl Client {
    /// Fetches the inclusion proof of `entry`'s leaf, the anchor `choice` names and the
    /// consistency proof between their heads.
    pub async fn log_evidence(&self, entry: &[u8], choice: AnchorChoice) -> Result<LogEvidence, ClientError> {
        let leaf = hex::encode(leaf_hash(entry));
        let proof: InclusionProof = self.get(&format!("/log/v1/proof/inclusion?leafHash={leaf}")).await?;
        let limit = match choice {
            AnchorChoice::Newest => 1,
            AnchorChoice::NewestLanded => 20,
        };
        let anchors: Anchors = self.get(&format!("/log/v1/anchors?limit={limit}")).await?;
        let mut anchors = anchors.anchors.into_iter();
        let chosen = match choice {
            AnchorChoice::Newest => anchors.next(),
            AnchorChoice::NewestLanded => anchors.find(|a| a.ledger_signature.is_some()),
        };
        let anchored = match chosen {
            None => None,
            Some(anchor) => {
                let (first, second) = consistency_sizes(proof.tree_size, anchor.sth.tree_size);
                let path = format!("/log/v1/proof/consistency?first={first}&second={second}");
                Some((anchor, self.get::<ConsistencyProof>(&path).await?))
            }
        };
        Ok(LogEvidence { proof, anchored })
    }

    /// The current signed tree head, unchecked.
    pub async fn log_head(&self) -> Result<shared::tlog::wire::SignedTreeHead, ClientError> {
        self.get("/log/v1/sth").await
    }

    /// Fetches and checks (see [`check`]).
    pub async fn log_proof(&self, entry: &[u8], log_key: Option<&[u8; 32]>) -> Result<LogCheck, ClientError> {
        Ok(self.log_evidence(entry, AnchorChoice::Newest).await?.check(entry, log_key)?)
    }
}

/// The lines `svc` prints about a check.
pub fn describe(check: &LogCheck) -> Vec<String> {
    let key: String = check.log_key.chars().take(16).collect();
    let mut lines = vec![format!(
        "log:      leaf {} of {} (inclusion verified against a head signed by log key {key}…)",
        check.leaf_index, check.tree_size
    )];
    lines.push(match &check.anchor {
        Some(a) => format!(
            "anchor:   head of {} leaves anchored in {} (signature, memo and consistency with the proof's head verified)",
            a.tree_size, a.tx_signature
        ),
        None => "anchor:   none yet (inclusion checked against the current signed head only)".into(),
    });
    if let Some(landed) = check.anchor.as_ref().and_then(|a| a.landed.as_ref()) {
        lines.push(format!("chain:    anchor memo landed in {landed}, signed by the log key"));
    }
    lines
}

#[cfg(test)]
mod tests;
