//! Freshness: the nonce must be signed by the enclave key that `report_data` binds, so a
//! replayed attestation, even a real one, fails.

use ed25519_dalek::{Signature, VerifyingKey};

use super::Binding;
use crate::attest::document::{Outcome, Verdict};
use crate::attest::evidence::NonceProof;
use crate::keys::{EnclaveKey, TeeKey};

/// No row without a proof; a proof without [`Binding::Keys`] has no key to check against.
pub(crate) fn check(proof: Option<&NonceProof>, binding: Option<Binding>) -> Outcome {
    let mut out = Outcome::default();
    let Some(proof) = proof else {
        return out;
    };
    let ok = match binding {
        Some(Binding::Keys { tee, enclave }) => verify_nonce(proof, &tee, &enclave),
        _ => false,
    };
    out.record(
        "nonce_signature",
        ok,
        Some(hex::encode(proof.nonce)),
        None,
        (!ok).then(|| "not signed by the bound enclave key".to_string()),
    );
    if !ok {
        out.fail(Verdict::Reject, "nonce_signature_invalid");
    }
    out
}

fn verify_nonce(proof: &NonceProof, tee: &TeeKey, enclave: &EnclaveKey) -> bool {
    let Ok(key) = VerifyingKey::from_bytes(&enclave.0) else {
        return false;
    };
    let message = crate::freshness::nonce_message(&proof.nonce, &tee.0);
    key.verify_strict(&message, &Signature::from_bytes(&proof.signature)).is_ok()
}
