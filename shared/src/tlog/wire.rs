//! The JSON of the `/log/v1` routes (docs/log.md "Routes"), shared by the relay that serves
//! them and the clients that check them. Hashes, keys and signatures are lowercase hex.

use serde::{Deserialize, Serialize};

use super::hash::{Hash, parse_hex};
use super::sth::{SthError, TreeHead};

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    #[error("`{0}` is not the hex it should be")]
    Malformed(&'static str),
    #[error(transparent)]
    Sth(#[from] SthError),
    #[error("the tree head is signed by another key than the log's")]
    WrongKey,
}

/// `GET /log/v1/sth`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct SignedTreeHead {
    pub tree_size: u64,
    /// hex of 32 bytes
    pub root_hash: String,
    /// unix milliseconds
    pub timestamp: u64,
    /// hex of the 64-byte ed25519 signature over the head's message (docs/log.md)
    pub signature: String,
    /// hex of the 32-byte ed25519 log key (the relay's ledger key)
    pub log_key: String,
}

impl SignedTreeHead {
    pub fn new(head: &TreeHead, signature: &[u8; 64], log_key: &[u8; 32]) -> Self {
        SignedTreeHead {
            tree_size: head.size,
            root_hash: hex::encode(head.root),
            timestamp: head.timestamp,
            signature: hex::encode(signature),
            log_key: hex::encode(log_key),
        }
    }

    /// The head, its signature and key, decoded (not verified).
    pub fn decode(&self) -> Result<(TreeHead, [u8; 64], [u8; 32]), WireError> {
        let root = parse_hex(&self.root_hash).ok_or(WireError::Malformed("rootHash"))?;
        let mut signature = [0u8; 64];
        hex::decode_to_slice(&self.signature, &mut signature).map_err(|_| WireError::Malformed("signature"))?;
        let key = parse_hex(&self.log_key).ok_or(WireError::Malformed("logKey"))?;
        Ok((TreeHead { size: self.tree_size, root, timestamp: self.timestamp }, signature, key))
    }

    /// Verifies the signature, by `log_key` when given (else by the key the head names).
    pub fn verify(&self, log_key: Option<&[u8; 32]>) -> Result<TreeHead, WireError> {
        let (head, signature, key) = self.decode()?;
        if log_key.is_some_and(|k| *k != key) {
            return Err(WireError::WrongKey);
        }
        head.verify(&key, &signature)?;
        Ok(head)
    }
}

/// `GET /log/v1/proof/inclusion`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct InclusionProof {
    pub leaf_index: u64,
    pub tree_size: u64,
    /// leaf to root, hex
    pub audit_path: Vec<String>,
    /// a head of `treeSize` leaves
    pub sth: SignedTreeHead,
}

/// `GET /log/v1/proof/consistency`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ConsistencyProof {
    pub first: u64,
    pub second: u64,
    /// hex
    pub proof: Vec<String>,
}

/// One entry of `GET /log/v1/entries`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct LogEntry {
    pub index: u64,
    /// hex of the hashed bytes (docs/log.md "Entries")
    pub entry: String,
    /// hex of SHA-256(0x00 ‖ entry)
    pub leaf_hash: String,
    /// the receipt's ledger address (base58)
    pub address: String,
}

/// `GET /log/v1/entries`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Entries {
    pub entries: Vec<LogEntry>,
}

/// One anchor: a signed head whose hash a ledger transaction carries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Anchor {
    pub sth: SignedTreeHead,
    /// hex of sha256(head message ‖ signature), the memo's payload
    pub sth_hash: String,
    /// the ledger transaction's id (base58 signature)
    pub tx_signature: String,
    /// the ledger transaction, base64
    pub transaction: String,
    /// unix seconds
    pub anchored_at: i64,
    /// `solana` ledger mode: the same memo sent to the chain, once it landed (base58 signature);
    /// `svc receipt --proof --rpc` reads it there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ledger_signature: Option<String>,
}

/// `GET /log/v1/anchors`, newest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Anchors {
    pub anchors: Vec<Anchor>,
}

/// Decodes a list of hex hashes (a proof).
pub fn decode_hashes(list: &[String], field: &'static str) -> Result<Vec<Hash>, WireError> {
    list.iter().map(|h| parse_hex(h).ok_or(WireError::Malformed(field))).collect()
}
