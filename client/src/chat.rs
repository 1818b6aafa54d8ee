//! Private chat: seal the prompt, send it through the relay, open the reply, and check the
//! receipt against what was sent.

use rand_core::OsRng;
use shared::envelope::{self, Envelope, PromptPlaintext};
use shared::keys::{EnclaveKey, TeeKey};
use shared::receipt::Receipt;
use shared::wire::{OnchainAttestation, PrivateRequest, ProcessResponse, ReplyPlaintext, Usage};
use shared::{b64, hpke, reply};

use crate::api::Client;
use crate::error::ClientError;
use crate::key_cache::CachedKey;

#[derive(Debug, Clone, Default)]
pub struct ChatOptions {
    pub model: Option<String>,
    pub max_tokens: Option<u32>,
    pub temperature: Option<f32>,
}

/// A decrypted reply whose receipt passed every check in [`check`].
#[derive(Debug, Clone)]
pub struct ChatOutcome {
    pub reply: String,
    pub model: String,
    pub provider: String,
    pub usage: Usage,
    pub receipt: Receipt,
    pub onchain: OnchainAttestation,
    /// Whether the enclave attached a TDX quote (none without TDX hardware).
    pub quote_present: bool,
    /// True when the enclave was accepted without any quote (`--allow-unattested`).
    pub unattested: bool,
    /// True when the first attempt hit a stale key and the call was retried.
    pub retried: bool,
    /// The GPU node that served it, as the enclave signed beside the receipt (checked; none
    /// for a local development model server).
    pub served_by: Option<shared::served_by::ServedBy>,
}

/// What the client sent, kept to check the answer.
pub(crate) struct Sent {
    pub envelope: Envelope,
    pub context: hpke::Context,
    pub tee_key: [u8; 32],
    /// The enclave as verified before sending.
    pub attested: CachedKey,
}

impl Client {
    /// Seals `plaintext` to the verified enclave key.
    pub(crate) async fn seal_prompt(&self, plaintext: &PromptPlaintext) -> Result<Sent, ClientError> {
        let attested = self.enclave_key().await?;
        let tee_key = attested.tee_public_key;
        let bytes = zeroize::Zeroizing::new(serde_json::to_vec(plaintext).expect("plaintext serialises"));
        let (envelope, context) = envelope::seal(&tee_key, &bytes, &mut OsRng)
            .map_err(|_| ClientError::BadKey("enclave key is not usable"))?;
        Ok(Sent { envelope, context, tee_key, attested })
    }
}

impl Client {
    /// Sends `prompt` privately. After `tee_unreachable`, `decrypt_failed` or a reply that does
    /// not decrypt, drops the cached enclave key, refetches it and retries once.
    pub async fn chat(&self, prompt: &str, options: &ChatOptions) -> Result<ChatOutcome, ClientError> {
        match self.chat_once(prompt, options).await {
            Err(e) if e.means_stale_key() => {
                self.drop_cached_key();
                let mut outcome = self.chat_once(prompt, options).await?;
                outcome.retried = true;
                Ok(outcome)
            }
            other => other,
        }
    }

    async fn chat_once(&self, prompt: &str, options: &ChatOptions) -> Result<ChatOutcome, ClientError> {
        let mut plaintext = PromptPlaintext::from_prompt(prompt, shared::time::unix_now());
        // Sealed too, so the relay can neither swap the model nor lower the limit (the enclave
        // refuses an outer model that differs, and ignores an outer limit).
        plaintext.model = Some(options.model.clone().unwrap_or_else(|| shared::catalog::DEFAULT_MODEL.into()));
        plaintext.max_tokens = options.max_tokens;
        plaintext.temperature = options.temperature;
        let sent = self.seal_prompt(&plaintext).await?;
        let request = PrivateRequest {
            encrypted_prompt: sent.envelope.to_json_string(),
            model: options.model.clone(),
            max_tokens: None,
        };

        let mut http = self.http.post(format!("{}/tee/process", self.base)).json(&request);
        if let Some(key) = &self.api_key {
            http = http.bearer_auth(key);
        }
        let response = http.send().await.map_err(|_| ClientError::RelayUnreachable(self.base.clone()))?;
        let response: ProcessResponse = self.read(response).await?;
        let outcome = check(&sent, response, &self.program_id)?;
        ran_what_was_asked(options.model.as_deref(), &outcome.receipt)?;
        Ok(outcome)
    }
}

/// The model sits outside the envelope, so a relay could swap it for a cheaper one: the
/// enclave's receipt must name the model asked for (the default when none was).
pub(crate) fn ran_what_was_asked(asked: Option<&str>, receipt: &Receipt) -> Result<(), ClientError> {
    let asked = shared::catalog::resolve(asked.unwrap_or(shared::catalog::DEFAULT_MODEL));
    match shared::catalog::resolve(&receipt.model) == asked {
        true => Ok(()),
        false => Err(ClientError::Mismatch("the enclave ran another model than the one asked for")),
    }
}

/// What an answer carries that the checks need: the receipt outside and inside the sealed
/// reply, the model named outside and inside, the binding attestation, the ledger record.
pub(crate) struct Answer<'a> {
    pub outer_receipt: &'a Receipt,
    pub inner_receipt: &'a Receipt,
    pub outer_model: &'a str,
    pub inner_model: &'a str,
    pub attestation: &'a shared::wire::BindingAttestation,
    pub onchain: Option<&'a OnchainAttestation>,
    /// The enclave's statement of which GPU node served the request, when it names one.
    pub served_by: Option<&'a shared::served_by::ServedBy>,
}

/// Every check a client makes on a chat answer. The relay could have swapped, dropped or
/// replayed anything; the receipt inside the encrypted reply is what the enclave signed.
fn check(
    sent: &Sent,
    response: ProcessResponse,
    program_id: &shared::address::Address,
) -> Result<ChatOutcome, ClientError> {
    if !response.success {
        return Err(ClientError::Malformed("success is false".into()));
    }
    let opened = reply::open(&sent.context, &sent.envelope.enc, &response.encrypted_response)
        .map_err(|_| ClientError::ReplyUndecryptable)?;
    let inner: ReplyPlaintext = serde_json::from_slice(&opened).map_err(|e| ClientError::Malformed(e.to_string()))?;
    let answer = Answer {
        outer_receipt: &response.receipt,
        inner_receipt: &inner.receipt,
        outer_model: &response.model,
        inner_model: &inner.model,
        attestation: &response.attestation,
        onchain: response.onchain_attestation.as_ref(),
        served_by: inner.served_by.as_ref(),
    };
    let onchain = check_answer(sent, &answer, program_id)?;
    Ok(ChatOutcome {
        reply: inner.reply,
        model: inner.model,
        provider: response.provider,
        usage: inner.usage,
        receipt: inner.receipt,
        onchain,
        quote_present: response.attestation.tdx_quote.is_some(),
        unattested: sent.attested.unattested,
        retried: false,
        served_by: inner.served_by,
    })
}

/// The receipt and binding checks shared by chat and encrypted agent mode.
pub(crate) fn check_answer(
    sent: &Sent,
    answer: &Answer<'_>,
    program_id: &shared::address::Address,
) -> Result<OnchainAttestation, ClientError> {
    if answer.inner_receipt != answer.outer_receipt {
        return Err(ClientError::Mismatch("the relay's receipt differs from the one inside the encrypted reply"));
    }
    let verified = answer.inner_receipt.verify(program_id)?;
    if let Some(statement) = answer.served_by
        && statement.verify(answer.inner_receipt).is_err()
    {
        return Err(ClientError::Mismatch("the GPU node statement is not the enclave's for this receipt"));
    }
    let body = &verified.body;
    if body.prompt_hash != sent.envelope.ciphertext_hash() {
        return Err(ClientError::Mismatch("receipt is for another ciphertext"));
    }
    if body.nonce != sent.envelope.nonce {
        return Err(ClientError::Mismatch("receipt nonce differs from ours"));
    }
    if body.client_pubkey != sent.envelope.client_key() {
        return Err(ClientError::Mismatch("receipt client key differs from ours"));
    }
    if body.tee_pubkey != TeeKey(sent.tee_key) {
        return Err(ClientError::Mismatch("receipt enclave key differs from the key we encrypted to"));
    }
    if answer.inner_model != body.model || answer.outer_model != body.model {
        return Err(ClientError::Mismatch("model differs between reply, response and receipt"));
    }
    // The binding the quote attests: report_data = sha256(tee_pubkey ‖ enclave_pubkey).
    let attestation = answer.attestation;
    let expected_rd = shared::quote::binding_report_data(&[&sent.tee_key, &verified.enclave_pubkey.0]);
    if attestation.report_data_hex != hex::encode(expected_rd)
        || attestation.enclave_public_key != b64::encode(verified.enclave_pubkey.0)
        || attestation.tee_public_key != b64::encode(sent.tee_key)
    {
        return Err(ClientError::Mismatch("attestation does not bind the receipt's keys"));
    }
    // The receipt key and quote must be the ones verified before sending.
    if verified.enclave_pubkey != EnclaveKey(sent.attested.enclave_public_key) {
        return Err(ClientError::Mismatch("receipt is signed by another key than the attested enclave key"));
    }
    let attested_quote = sent.attested.binding_quote_hash.map(hex::encode).unwrap_or_default();
    if answer.inner_receipt.tdx_quote_hash != attested_quote {
        return Err(ClientError::Mismatch("receipt names another quote than the one verified"));
    }
    if let Some(q) = &attestation.tdx_quote {
        let quote = b64::decode(&q.quote).map_err(|_| ClientError::Malformed("quote is not base64".into()))?;
        if shared::quote::report_data(&quote).ok() != Some(expected_rd) {
            return Err(ClientError::Mismatch("quote report_data does not bind the receipt's keys"));
        }
        if attestation.tdx_quote_hash != hex::encode(shared::sha256(&quote))
            || answer.inner_receipt.tdx_quote_hash != attestation.tdx_quote_hash
        {
            return Err(ClientError::Mismatch("receipt tdxQuoteHash differs from the quote"));
        }
    }
    let onchain = answer.onchain.cloned().ok_or(ClientError::Malformed("no onchainAttestation".into()))?;
    if onchain.address != answer.inner_receipt.address
        || onchain.encrypted_prompt_hash != answer.inner_receipt.encrypted_prompt_hash
    {
        return Err(ClientError::Mismatch("onchainAttestation differs from the receipt"));
    }
    Ok(onchain)
}

#[cfg(test)]
mod tests {
    use shared::keys::{ClientKey, PromptHash, TeeKey};
    use shared::receipt::{Receipt, ReceiptBody, ReceiptContext};

    use super::ran_what_was_asked;

    fn receipt_for(model: &str) -> Receipt {
        let body = ReceiptBody {
            prompt_hash: PromptHash([1; 32]),
            tee_pubkey: TeeKey([2; 32]),
            nonce: [3; 16],
            client_pubkey: ClientKey([4; 32]),
            model: model.into(),
            provider: "svc-gpu".into(),
        };
        let ctx = ReceiptContext {
            program_id: shared::address::default_program_id(),
            timestamp: 1_700_000_000,
            tdx_quote_hash: None,
        };
        Receipt::issue(&body, &ed25519_dalek::SigningKey::from_bytes(&[5; 32]), &ctx).unwrap()
    }

    /// A relay that swaps the model outside the envelope for another one is caught by the model
    /// the enclave signed into the receipt.
    #[test]
    fn a_swapped_model_is_refused() {
        let ran = receipt_for("qwen3.8:27b");
        assert!(ran_what_was_asked(Some("gpt-oss:20b"), &ran).is_err());
        assert!(ran_what_was_asked(None, &ran).is_err(), "none asked means the default");
        assert!(ran_what_was_asked(Some("qwen3.8:27b"), &ran).is_ok());
        let default = receipt_for("gpt-oss:20b");
        assert!(ran_what_was_asked(None, &default).is_ok());
        assert!(ran_what_was_asked(Some("svc-gpu:gpt-oss:20b"), &default).is_ok(), "the prefixed id is the same model");
        assert!(ran_what_was_asked(Some("gpt-oss-20b"), &default).is_ok(), "the client-library id too");
    }
}
