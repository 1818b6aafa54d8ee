//! A session: its key made and sealed with its terms, and opened again for each step.

use ed25519_dalek::{Signer, SigningKey};
use rand_core::OsRng;
use serde::{Deserialize, Serialize};
use shared::address::Address;
use shared::b64;
use shared::swap::{OpenedSession, ParsedTerms, SessionCommitment, SessionTerms};
use shared::wire::SealedObject;
use zeroize::Zeroizing;

use super::{SESSION_FORMAT, SESSION_KIND, SwapError, Swaps};
use crate::keys::custody::Custody;
use crate::keys::{EnclaveKeys, SeedText};

/// What a session object holds (sealed; never leaves the enclave in the clear).
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct SessionSecret {
    seed: SeedText,
    terms: SessionTerms,
    /// Who funded the session's SOL and gets back what is left of it (rent, unused fees): the
    /// pool of a managed swap; none for a one-shot, whose payer funded it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    sol_from: Option<String>,
}

/// An opened session: its key and terms.
pub(super) struct Session {
    pub(super) key: SigningKey,
    pub(super) address: Address,
    pub(super) terms: ParsedTerms,
    pub(super) text: SessionTerms,
    /// Where the session's SOL returns: the pool of a managed swap, else the payer.
    pub(super) sol_to: Address,
}

impl Swaps {
    /// A new session: a fresh key sealed with `terms`, and the commitment signed by this
    /// enclave's attested key.
    pub fn open_session(
        &self,
        custody: &Custody,
        keys: &EnclaveKeys,
        terms: SessionTerms,
        sol_from: Option<Address>,
    ) -> Result<OpenedSession, SwapError> {
        let parsed = terms.parse().map_err(|e| SwapError::BadTerms(malformed_field(&e)))?;
        let key = SigningKey::generate(&mut OsRng);
        let address = Address(key.verifying_key().to_bytes());
        let sol_from = sol_from.map(|a| a.to_string());
        let secret = SessionSecret { seed: SeedText::of(&key), terms: terms.clone(), sol_from };
        let plaintext = Zeroizing::new(serde_json::to_vec(&secret).map_err(|_| SwapError::Sealed)?);
        let (id, blob) = custody.seal_new(SESSION_KIND, SESSION_FORMAT, &plaintext).map_err(|_| SwapError::Sealed)?;
        let signature = keys.signer().sign(&SessionCommitment::message(&parsed, &address)).to_bytes();
        Ok(OpenedSession {
            object: SealedObject {
                id: hex::encode(id),
                kind: SESSION_KIND.into(),
                version: SESSION_FORMAT,
                blob,
                public_key: Some(address.to_string()),
            },
            commitment: SessionCommitment {
                terms,
                ephemeral_pubkey: address.to_string(),
                enclave_pubkey: b64::encode(keys.enclave_public()),
                signature: b64::encode(signature),
            },
        })
    }

    /// A one-shot session, whose terms the relay sets: opened only if its `minOut` is at least
    /// the router's quote now less `oneshotMaxSlippageBps`.
    pub async fn open_oneshot(
        &self,
        custody: &Custody,
        keys: &EnclaveKeys,
        terms: SessionTerms,
    ) -> Result<OpenedSession, SwapError> {
        let t = terms.parse().map_err(|e| SwapError::BadTerms(malformed_field(&e)))?;
        let floor = self.least_out(&t.from_mint, &t.to_mint, t.amount, self.oneshot_max_slippage_bps).await?;
        if t.min_out < floor {
            return Err(SwapError::MinOutBelowQuote(floor));
        }
        self.open_session(custody, keys, terms, None)
    }

    pub(super) fn open(&self, custody: &Custody, blob: &str) -> Result<Session, SwapError> {
        let plaintext = custody.open_kind(blob, SESSION_KIND, SESSION_FORMAT).map_err(|_| SwapError::Sealed)?;
        let secret: SessionSecret = serde_json::from_slice(&plaintext).map_err(|_| SwapError::Sealed)?;
        let key = secret.seed.key().ok_or(SwapError::Sealed)?;
        let terms = secret.terms.parse().map_err(|_| SwapError::Sealed)?;
        let sol_to = match &secret.sol_from {
            Some(text) => Address::parse(text).ok_or(SwapError::Sealed)?,
            None => terms.payer,
        };
        Ok(Session { address: Address(key.verifying_key().to_bytes()), key, terms, text: secret.terms, sol_to })
    }
}

fn malformed_field(e: &shared::swap::SwapError) -> &'static str {
    match e {
        shared::swap::SwapError::Malformed(field) => field,
        shared::swap::SwapError::BadSignature => "signature",
    }
}
