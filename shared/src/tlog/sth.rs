//! Signed tree heads (docs/log.md "Tree heads"): the bytes the log key signs and the hash an
//! anchor writes to the ledger.
//!
//! message = `SVC-LOG-STH-v1` (14 ASCII bytes) ‖ tree size (8, big-endian) ‖ root (32) ‖
//! timestamp (8, big-endian, unix milliseconds). The prefix keeps these signatures apart from
//! the ledger transactions the same key signs. The head's hash = sha256(message ‖ signature).

use ed25519_dalek::{Signer, SigningKey, VerifyingKey};

use super::hash::Hash;

pub const PREFIX: &[u8] = b"SVC-LOG-STH-v1";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TreeHead {
    pub size: u64,
    pub root: Hash,
    /// Unix milliseconds.
    pub timestamp: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SthError {
    #[error("the log key is not a valid ed25519 key")]
    BadKey,
    #[error("the tree head's signature does not verify")]
    BadSignature,
}

impl TreeHead {
    /// The signed bytes.
    pub fn message(&self) -> Vec<u8> {
        let mut m = Vec::with_capacity(PREFIX.len() + 48);
        m.extend_from_slice(PREFIX);
        m.extend_from_slice(&self.size.to_be_bytes());
        m.extend_from_slice(&self.root);
        m.extend_from_slice(&self.timestamp.to_be_bytes());
        m
    }

    pub fn sign(&self, key: &SigningKey) -> [u8; 64] {
        key.sign(&self.message()).to_bytes()
    }

    /// Strict ed25519 verification (no small-order keys, canonical signatures only).
    pub fn verify(&self, log_key: &[u8; 32], signature: &[u8; 64]) -> Result<(), SthError> {
        let key = VerifyingKey::from_bytes(log_key).map_err(|_| SthError::BadKey)?;
        key.verify_strict(&self.message(), &ed25519_dalek::Signature::from_bytes(signature))
            .map_err(|_| SthError::BadSignature)
    }

    /// sha256(message ‖ signature): what an anchor writes.
    pub fn signed_hash(&self, signature: &[u8; 64]) -> Hash {
        let mut bytes = self.message();
        bytes.extend_from_slice(signature);
        crate::sha256(&bytes)
    }
}
