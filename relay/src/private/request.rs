//! A private request as the relay checks it: the envelope parsed (never opened) once, its
//! ciphertext hashed, the model resolved to a catalog id. What it forwards is the one typed
//! request of every private route, `shared::wire::PrivateRequest`.

use shared::envelope::Envelope;
use shared::keys::PromptHash;
use shared::wire::PrivateRequest;

use crate::http::error::RelayError;

/// Longest model id accepted before resolving it.
const MAX_MODEL_LEN: usize = 128;

#[derive(Debug, Clone)]
pub struct SealedRequest {
    /// What goes to the enclave: the envelope re-serialised from its parsed fields (the same
    /// ciphertext, so the same hash and receipt), the catalog model id and the outer token cap.
    pub forward: PrivateRequest,
    /// sha256 of the decoded ciphertext: the receipt must be for exactly this.
    pub prompt_hash: PromptHash,
    /// The enclave key the envelope names (`keyId`), which picks the enclave.
    pub key_id: Option<[u8; 32]>,
}

impl SealedRequest {
    /// Checks the envelope's form and resolves `model` (default: the catalog default).
    pub fn new(encrypted_prompt: &str, model: Option<&str>, max_tokens: Option<u32>) -> Result<Self, RelayError> {
        let envelope = parse_envelope(encrypted_prompt)?;
        let model = match model {
            Some(m) if m.len() > MAX_MODEL_LEN => {
                return Err(RelayError::input(
                    shared::wire::codes::INVALID_FIELD,
                    format!("model must be at most {MAX_MODEL_LEN} characters"),
                ));
            }
            Some(m) => shared::catalog::resolve(m.trim()),
            None => shared::catalog::DEFAULT_MODEL.to_string(),
        };
        Ok(SealedRequest {
            prompt_hash: envelope.ciphertext_hash(),
            key_id: envelope.key_id,
            forward: PrivateRequest { encrypted_prompt: envelope.to_json_string(), model: Some(model), max_tokens },
        })
    }

    /// The catalog model id.
    pub fn model(&self) -> &str {
        self.forward.model.as_deref().unwrap_or(shared::catalog::DEFAULT_MODEL)
    }
}

/// `encryptedPrompt` is the envelope JSON string; the base64 of that JSON is accepted too
/// (contract §4.1 calls the x402 route's field base64).
fn parse_envelope(text: &str) -> Result<Envelope, RelayError> {
    let direct = Envelope::parse(text);
    if direct.is_ok() || text.trim_start().starts_with('{') {
        return Ok(direct?);
    }
    let decoded = shared::b64::decode(text.trim()).ok().and_then(|b| String::from_utf8(b).ok());
    match decoded {
        Some(json) => Ok(Envelope::parse(&json)?),
        None => Ok(direct?),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn envelope() -> Envelope {
        Envelope { enc: [1; 32], nonce: [2; 16], ciphertext: vec![3; 40], key_id: None }
    }

    #[test]
    fn envelope_json_and_its_base64_are_the_same_request() {
        let env = envelope();
        let plain = SealedRequest::new(&env.to_json_string(), Some("m"), Some(5)).unwrap();
        let b64 = shared::b64::encode(env.to_json_string());
        let wrapped = SealedRequest::new(&b64, Some("m"), Some(5)).unwrap();
        assert_eq!(plain.forward, wrapped.forward);
        assert_eq!(plain.prompt_hash, env.ciphertext_hash());
        assert_eq!(wrapped.prompt_hash, env.ciphertext_hash());
        assert_eq!(wrapped.forward.max_tokens, Some(5));
    }

    #[test]
    fn models_resolve_and_bad_envelopes_are_named() {
        let env = envelope().to_json_string();
        assert_eq!(SealedRequest::new(&env, None, None).unwrap().model(), "gpt-oss:20b");
        assert_eq!(SealedRequest::new(&env, Some("svc-gpu:gpt-oss-20b"), None).unwrap().model(), "gpt-oss:20b");
        let long = "m".repeat(129);
        assert!(matches!(SealedRequest::new(&env, Some(&long), None), Err(RelayError::Input { .. })));
        for bad in ["{\"x\": 1}", "not an envelope", ""] {
            assert!(matches!(SealedRequest::new(bad, None, None), Err(RelayError::InvalidEnvelope(_))), "{bad}");
        }
    }
}
