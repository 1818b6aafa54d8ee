//! The freshness witness (DESIGN §13): per mint, the one head of the pool's book lineage that
//! the key holder acknowledged, and the two signed messages that move it.
//!
//! - [`AppendRequest`]: the enclave asks to append `next` after `parent`, signed by its attested
//!   ed25519 key.
//! - [`WitnessAnswer`]: the witness's verdict on one request, signed by a provisioner key that
//!   the enclave's measured configuration lists. It names the witness's head after the call:
//!   the request's `next` when it was appended (compare and set on `parent`), else the head
//!   that stood in its way.
//!
//! Both travel through the relay, which can delay or drop them but forge neither. A book is
//! named by the sha256 of its sealed blob's text, so two successors of one parent (siblings)
//! never share a name.

use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};
use serde::{Deserialize, Serialize};

use crate::address::Address;
use crate::b64;

const APPEND_DOMAIN: &str = "svc-witness-append:v1";
const ANSWER_DOMAIN: &str = "svc-witness-answer:v1";

/// A book's place in its mint's lineage: its version and the hex sha256 of its sealed blob.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Head {
    pub version: u64,
    pub digest: String,
}

impl Head {
    /// Before a mint's first book: version 0 and an all-zero digest.
    pub fn genesis() -> Head {
        Head { version: 0, digest: "0".repeat(64) }
    }

    /// The head naming `blob` (a sealed book's text) at `version`.
    pub fn of(version: u64, blob: &str) -> Head {
        Head { version, digest: digest(blob) }
    }

    fn line(&self) -> String {
        format!("{} {}", self.version, self.digest)
    }
}

/// The name of a sealed book: hex sha256 of its blob's text.
pub fn digest(blob: &str) -> String {
    hex::encode(crate::sha256(blob.as_bytes()))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum WitnessError {
    #[error("a field is malformed: {0}")]
    Malformed(&'static str),
    #[error("signed by a key that is not a witness of this enclave")]
    UnknownWitness,
    #[error("the signature does not verify")]
    BadSignature,
}

/// The enclave's request to append `next` after `parent` in `mint`'s lineage.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AppendRequest {
    pub mint: String,
    pub parent: Head,
    pub next: Head,
    /// base64 of the requesting enclave's ed25519 key (the one its attestation binds).
    pub enclave_pubkey: String,
    /// base58 of its signature over [`AppendRequest::message`].
    pub signature: String,
}

impl AppendRequest {
    /// Signed by `key`, the enclave's attested key.
    pub fn signed(mint: &str, parent: Head, next: Head, key: &SigningKey) -> AppendRequest {
        let mut request = AppendRequest {
            mint: mint.to_string(),
            parent,
            next,
            enclave_pubkey: b64::encode(key.verifying_key().to_bytes()),
            signature: String::new(),
        };
        request.signature = bs58::encode(key.sign(&request.message()).to_bytes()).into_string();
        request
    }

    pub fn message(&self) -> Vec<u8> {
        let r = self;
        format!("{APPEND_DOMAIN}\n{}\n{}\n{}\n{}", r.mint, r.parent.line(), r.next.line(), r.enclave_pubkey)
            .into_bytes()
    }

    /// The requesting enclave's key, when the signature verifies under it (the witness then
    /// checks that key is one it verified).
    #[cfg(feature = "sender")]
    pub fn verify(&self) -> Result<[u8; 32], WitnessError> {
        let key = b64::decode_array::<32>(&self.enclave_pubkey).ok_or(WitnessError::Malformed("enclavePubkey"))?;
        verify_with(&key, &self.signature, &self.message())?;
        if self.next.version != self.parent.version.saturating_add(1) {
            return Err(WitnessError::Malformed("next.version"));
        }
        Ok(key)
    }
}

/// The witness's verdict on one [`AppendRequest`] (whose fields it repeats): its head after
/// the call. Appended exactly when `head == next`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WitnessAnswer {
    pub mint: String,
    pub parent: Head,
    pub next: Head,
    /// The requesting enclave's key (base64), as in the request.
    pub requester: String,
    pub head: Head,
    /// The witness's ed25519 key (base58): a provisioner of the enclave's configuration.
    pub witness: String,
    /// base58 of its signature over [`WitnessAnswer::message`].
    pub signature: String,
}

impl WitnessAnswer {
    /// The witness's answer to `request`, its head now being `head`.
    #[cfg(feature = "sender")]
    pub fn signed(request: &AppendRequest, head: Head, key: &SigningKey) -> WitnessAnswer {
        let mut answer = WitnessAnswer {
            mint: request.mint.clone(),
            parent: request.parent.clone(),
            next: request.next.clone(),
            requester: request.enclave_pubkey.clone(),
            head,
            witness: Address(key.verifying_key().to_bytes()).to_string(),
            signature: String::new(),
        };
        answer.signature = bs58::encode(key.sign(&answer.message()).to_bytes()).into_string();
        answer
    }

    pub fn message(&self) -> Vec<u8> {
        let a = self;
        format!(
            "{ANSWER_DOMAIN}\n{}\n{}\n{}\n{}\n{}",
            a.mint,
            a.parent.line(),
            a.next.line(),
            a.requester,
            a.head.line()
        )
        .into_bytes()
    }

    pub fn appended(&self) -> bool {
        self.head == self.next
    }

    /// Checks the answer is signed by one of `witnesses`.
    pub fn verify(&self, witnesses: &[Address]) -> Result<(), WitnessError> {
        let witness = Address::parse(&self.witness).ok_or(WitnessError::Malformed("witness"))?;
        if !witnesses.contains(&witness) {
            return Err(WitnessError::UnknownWitness);
        }
        verify_with(&witness.0, &self.signature, &self.message())
    }
}

fn verify_with(key: &[u8; 32], signature: &str, message: &[u8]) -> Result<(), WitnessError> {
    let key = VerifyingKey::from_bytes(key).map_err(|_| WitnessError::Malformed("key"))?;
    let sig = bs58::decode(signature).into_vec().map_err(|_| WitnessError::Malformed("signature"))?;
    let sig: [u8; 64] = sig.try_into().map_err(|_| WitnessError::Malformed("signature"))?;
    key.verify_strict(message, &Signature::from_bytes(&sig)).map_err(|_| WitnessError::BadSignature)
}

#[cfg(all(test, feature = "sender"))]
mod tests {
    use super::*;

    fn request(enclave: &SigningKey) -> AppendRequest {
        AppendRequest::signed("mint", Head::genesis(), Head::of(1, "blob"), enclave)
    }

    #[test]
    fn messages_name_every_field() {
        let enclave = SigningKey::from_bytes(&[1; 32]);
        let r = request(&enclave);
        let text = String::from_utf8(r.message()).unwrap();
        // sha256("blob") = fa2c8cc4…
        assert_eq!(
            text,
            format!(
                "svc-witness-append:v1\nmint\n0 {}\n1 fa2c8cc4f28176bbeed4b736df569a34c79cd3723e9ec42f9674b4d46ac6b8b8\n{}",
                "0".repeat(64),
                r.enclave_pubkey
            )
        );
        assert_eq!(r.verify(), Ok(enclave.verifying_key().to_bytes()));
    }

    #[test]
    fn a_request_or_answer_changed_in_any_field_fails() {
        let (enclave, witness) = (SigningKey::from_bytes(&[1; 32]), SigningKey::from_bytes(&[2; 32]));
        let r = request(&enclave);
        let mut skipped = r.clone();
        skipped.next.version = 2;
        assert_eq!(skipped.verify(), Err(WitnessError::BadSignature));
        let answer = WitnessAnswer::signed(&r, r.next.clone(), &witness);
        let listed = [Address(witness.verifying_key().to_bytes())];
        assert!(answer.appended());
        assert_eq!(answer.verify(&listed), Ok(()));
        assert_eq!(answer.verify(&[Address([9; 32])]), Err(WitnessError::UnknownWitness));
        // A refusal turned into an acknowledgement by the carrier.
        let refusal = WitnessAnswer::signed(&r, Head::of(1, "other"), &witness);
        assert!(!refusal.appended());
        let mut forged = refusal.clone();
        forged.head = r.next.clone();
        assert_eq!(forged.verify(&listed), Err(WitnessError::BadSignature));
        // An answer signed by an unlisted key that names a listed one.
        let mut impostor = WitnessAnswer::signed(&r, r.next.clone(), &SigningKey::from_bytes(&[3; 32]));
        impostor.witness = listed[0].to_string();
        assert_eq!(impostor.verify(&listed), Err(WitnessError::BadSignature));
    }
}
