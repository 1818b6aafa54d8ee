//! The enclave's half of a session: `POST /swaps/sessions` (a new session key and the signed
//! commitment) and `POST /swaps/step` (one idempotent step). The relay checks what comes back
//! against what it asked for; it cannot change what the enclave signs.

use shared::swap::{OpenedSession, SessionTerms, StepAnswer, StepRequest};

use crate::enclaves::EnclavePool;
use crate::enclaves::objects::ask;
use crate::http::error::RelayError;

/// A new session for `terms`: the sealed key and the commitment, checked to be over exactly
/// these terms and that key, and signed by the key it names.
pub async fn open_session(enclaves: &EnclavePool, terms: &SessionTerms) -> Result<OpenedSession, RelayError> {
    let opened: OpenedSession = ask(enclaves, "/swaps/sessions", terms).await?;
    let c = &opened.commitment;
    let signed = c.verify().is_ok();
    if !signed || c.terms != *terms || opened.object.public_key.as_deref() != Some(c.ephemeral_pubkey.as_str()) {
        return Err(RelayError::EnclaveAnswer("the enclave's session commitment does not match the request"));
    }
    Ok(opened)
}

/// One step; a refusal comes back as [`RelayError::Enclave`] with its code.
pub async fn step(enclaves: &EnclavePool, request: &StepRequest) -> Result<StepAnswer, RelayError> {
    ask(enclaves, "/swaps/step", request).await
}
