//! Owner-signed requests (DESIGN §13): the owner's nonce is the request's idempotency key.
//!
//! - The signature covers the method, path, body hash, timestamp and nonce.
//! - A request signed before this boot's provisioning (`issuedAt` of its bundle, the key
//!   holder's clock) is refused: whatever was captured before a restart dies with it.
//! - Within a boot, the same nonce over the same body is a retry: the answer of a request that
//!   signed a transaction is given again (the same bytes, never a second transaction); a book
//!   step is redone, and its order id, derived from the nonce, finds the order already debited.
//!   The same nonce over another body is refused.

use std::collections::HashMap;
use std::sync::Mutex;

use ed25519_dalek::{Signature, VerifyingKey};
use shared::address::Address;
use shared::b64;
use shared::privacy::{self, OwnerAuth, PrivacyAnswer};

use super::FundsError;

/// What a nonce seen in this boot came to.
enum Outcome {
    Running,
    /// A book step: redone on a retry (its order id makes it idempotent).
    Redo,
    /// A transaction signed: given again on a retry.
    Answered(Box<PrivacyAnswer>),
}

struct Seen {
    timestamp: u64,
    /// sha256 of the path and the body.
    request: [u8; 32],
    outcome: Outcome,
}

/// How a checked request goes on.
pub enum Admission {
    New,
    /// The same request again, and what it came to.
    Retry(Option<Box<PrivacyAnswer>>),
}

#[derive(Default)]
pub struct Nonces {
    seen: Mutex<HashMap<(Address, String), Seen>>,
}

impl Nonces {
    /// Checks the owner's signature over `path` and `body`, the time against `now` (never
    /// before `floor`, the bundle's `issuedAt`), and the nonce.
    pub fn admit(
        &self,
        owner: &VerifyingKey,
        auth: &OwnerAuth,
        (path, body): (&str, &[u8]),
        now: u64,
        floor: u64,
    ) -> Result<Admission, FundsError> {
        if !privacy::nonce_ok(&auth.nonce) {
            return Err(FundsError::OwnerSignatureInvalid);
        }
        let signature = b64::decode_array::<64>(&auth.signature).ok_or(FundsError::OwnerSignatureInvalid)?;
        let message = privacy::owner_message("POST", path, body, auth.timestamp, &auth.nonce);
        owner
            .verify_strict(&message, &Signature::from_bytes(&signature))
            .map_err(|_| FundsError::OwnerSignatureInvalid)?;
        // In the second of provisioning too: the clocks only tell seconds apart.
        if floor > 0 && auth.timestamp <= floor {
            return Err(FundsError::PredatesBoot);
        }
        if auth.timestamp.abs_diff(now) > privacy::OWNER_WINDOW_SECS {
            return Err(FundsError::Stale);
        }
        // The request is its path and body: the same nonce to another wallet or operation is
        // another request, not a retry.
        let request = shared::sha256(&[path.as_bytes(), &[0], body].concat());
        let mut seen = self.seen.lock().map_err(|_| FundsError::Internal)?;
        // Kept while inside the window; older ones are refused as stale anyway.
        seen.retain(|_, s| s.timestamp.abs_diff(now) <= privacy::OWNER_WINDOW_SECS);
        let key = (Address(owner.to_bytes()), auth.nonce.clone());
        match seen.get_mut(&key) {
            Some(s) if s.request != request => Err(FundsError::KeyReused),
            Some(s) => match &s.outcome {
                Outcome::Running => Err(FundsError::InProgress),
                Outcome::Redo => {
                    s.outcome = Outcome::Running;
                    Ok(Admission::Retry(None))
                }
                Outcome::Answered(answer) => Ok(Admission::Retry(Some(answer.clone()))),
            },
            None => {
                seen.insert(key, Seen { timestamp: auth.timestamp, request, outcome: Outcome::Running });
                Ok(Admission::New)
            }
        }
    }

    /// Records what an admitted request came to: `Some(answer)` to give again, `None` to redo.
    /// A failed request is forgotten, so the same bytes can be sent again (after a refusal the
    /// caller can wait out: warming up, the witness away).
    pub fn finish(&self, owner: &VerifyingKey, nonce: &str, result: Result<Option<&PrivacyAnswer>, ()>) {
        let Ok(mut seen) = self.seen.lock() else { return };
        let key = (Address(owner.to_bytes()), nonce.to_string());
        match result {
            Err(()) => {
                seen.remove(&key);
            }
            Ok(answer) => {
                if let Some(s) = seen.get_mut(&key) {
                    s.outcome = answer.map_or(Outcome::Redo, |a| Outcome::Answered(Box::new(a.clone())));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use ed25519_dalek::{Signer, SigningKey};
    use shared::privacy::SignedTx;

    use super::*;

    const PATH: &str = "/agents/v1/wallets/w/withdraw";
    const NOW: u64 = 1_800_000_000;

    fn auth(key: &SigningKey, ts: u64, nonce: &str, body: &[u8]) -> OwnerAuth {
        let message = privacy::owner_message("POST", PATH, body, ts, nonce);
        OwnerAuth { timestamp: ts, nonce: nonce.into(), signature: b64::encode(key.sign(&message).to_bytes()) }
    }

    fn code(r: Result<Admission, FundsError>) -> &'static str {
        match r {
            Ok(Admission::New) => "new",
            Ok(Admission::Retry(None)) => "redo",
            Ok(Admission::Retry(Some(_))) => "answered",
            Err(e) => e.status_and_code().map_or("?", |(_, c)| c.as_str()),
        }
    }

    #[test]
    fn signatures_times_and_nonces_as_a_table() {
        let owner = SigningKey::from_bytes(&[9; 32]);
        let other = SigningKey::from_bytes(&[8; 32]);
        let vk = owner.verifying_key();
        let body = br#"{"mint":"m"}"#;
        let floor = NOW - 60;
        let nonces = Nonces::default();
        let admit = |a: &OwnerAuth, body: &[u8]| code(nonces.admit(&vk, a, (PATH, body), NOW, floor));
        let window = privacy::OWNER_WINDOW_SECS;
        // Each row on its own nonce.
        let rows: [(&str, OwnerAuth, &[u8], &str); 6] = [
            ("signed by the owner, now", auth(&owner, NOW, "a", body), body, "new"),
            ("signed by another key", auth(&other, NOW, "b", body), body, "owner_signature_invalid"),
            ("signed over another body", auth(&owner, NOW, "c", body), br#"{"mint":"n"}"#, "owner_signature_invalid"),
            ("signed before this boot", auth(&owner, floor - 1, "d", body), body, "request_predates_boot"),
            ("signed in the second of provisioning", auth(&owner, floor, "f", body), body, "request_predates_boot"),
            ("outside the window", auth(&owner, NOW + window + 1, "e", body), body, "stale_timestamp"),
        ];
        for (name, a, sent, expected) in rows {
            assert_eq!(admit(&a, sent), expected, "{name}");
        }
    }

    #[test]
    fn a_nonce_is_an_idempotency_key() {
        let owner = SigningKey::from_bytes(&[9; 32]);
        let vk = owner.verifying_key();
        let nonces = Nonces::default();
        let (one, two) = (br#"{"amount":"1"}"#.as_slice(), br#"{"amount":"2"}"#.as_slice());
        let admit = |a: &OwnerAuth, body: &[u8]| code(nonces.admit(&vk, a, (PATH, body), NOW, 0));
        let first = auth(&owner, NOW, "n", one);
        assert_eq!(admit(&first, one), "new");
        assert_eq!(admit(&first, one), "request_in_progress", "the same request while it runs");
        assert_eq!(admit(&auth(&owner, NOW, "n", two), two), "idempotency_key_reused");
        // The same nonce and body for another wallet of the same owner: another request.
        let elsewhere = "/agents/v1/wallets/w2/withdraw";
        let message = privacy::owner_message("POST", elsewhere, one, NOW, "n");
        let signed =
            OwnerAuth { timestamp: NOW, nonce: "n".into(), signature: b64::encode(owner.sign(&message).to_bytes()) };
        assert_eq!(code(nonces.admit(&vk, &signed, (elsewhere, one), NOW, 0)), "idempotency_key_reused");
        // A refusal forgets the nonce: the same bytes may be sent again.
        nonces.finish(&vk, "n", Err(()));
        assert_eq!(admit(&first, one), "new");
        // A transaction signed: the retry gets it again.
        let tx = SignedTx { transaction: "AA==".into(), signature: "tx".into(), last_valid_block_height: 1 };
        let answer = PrivacyAnswer::HopSigned { tx };
        nonces.finish(&vk, "n", Ok(Some(&answer)));
        assert_eq!(admit(&first, one), "answered");
        // A book step: redone (its order id keeps it to one debit).
        let step = auth(&owner, NOW, "s", one);
        assert_eq!(admit(&step, one), "new");
        nonces.finish(&vk, "s", Ok(None));
        assert_eq!(admit(&step, one), "redo");
    }
}
