//! ECDSA verifications already done, so a GPU that attests again costs one signature check (its
//! report's). A certificate's or an OCSP answer's signature over the same bytes under the same
//! key verifies the same way forever; only validity windows change, and those are checked on
//! every verification. Remembered by the SHA-256 of key, signature and message, at most
//! [`MAX_ENTRIES`] of them (then forgotten all at once).

use std::collections::HashSet;
use std::sync::Mutex;

use p384::ecdsa::signature::Verifier;
use p384::ecdsa::{Signature, VerifyingKey};
use sha2::{Digest, Sha256};

/// About 40 GPUs' chains and OCSP answers.
const MAX_ENTRIES: usize = 1024;

#[derive(Debug, Default)]
pub struct Verified {
    seen: Mutex<HashSet<[u8; 32]>>,
}

impl Verified {
    /// Whether `signature` over `message` verifies under `key`, from memory when it did before.
    pub fn ecdsa(&self, key: &VerifyingKey, message: &[u8], signature: &Signature) -> bool {
        let id: [u8; 32] = Sha256::new()
            .chain_update(key.to_sec1_bytes())
            .chain_update(signature.to_bytes())
            .chain_update(Sha256::digest(message))
            .finalize()
            .into();
        if self.seen.lock().is_ok_and(|seen| seen.contains(&id)) {
            return true;
        }
        let ok = key.verify(message, signature).is_ok();
        if ok && let Ok(mut seen) = self.seen.lock() {
            if seen.len() >= MAX_ENTRIES {
                seen.clear();
            }
            seen.insert(id);
        }
        ok
    }
}
