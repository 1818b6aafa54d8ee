//! One private chat request: open the envelope, refuse replays, call the model, sign the
//! receipt, seal the reply (with the receipt inside).

use agent::model::{ChatMessage, ChatRequest};
use agent::tool_loop::{LoopOptions, run_tool_loop};
use rand_core::OsRng;
use shared::catalog::{self, PROVIDER};
use shared::envelope::{Envelope, PromptPlaintext};
use shared::gpu::node::NodeVerdict;
use shared::receipt::{Receipt, ReceiptBody, ReceiptContext};
use shared::served_by::ServedBy;
use shared::wire::{
    AgentReplyPlaintext, ChatCompletion, EncryptedAgentResponse, PrivacyGuarantee, PrivateRequest, ProcessResponse,
    ReplyPlaintext,
};
use zeroize::Zeroizing;

use crate::error::ApiError;
use crate::inference::models::ServedModel;
use crate::inference::replay::ReplayVerdict;
use crate::service::Enclave;

/// What the sealed reply of a chat holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplyFormat {
    /// `{reply, model, usage, receipt}` (DESIGN §4.2), for `/tee/process`.
    Reply,
    /// A complete OpenAI `chat.completion` object plus `receipt`, for `/api/v1/chat/completions`.
    ChatCompletion,
}

/// A request that passed every check before the model: decrypted, fresh, for a served model.
struct Opened<'a> {
    model_id: String,
    served: &'a ServedModel,
    envelope: Envelope,
    prompt: PromptPlaintext,
    hpke_ctx: shared::hpke::Context,
    max_tokens: Option<u32>,
}

impl Enclave {
    /// The routed model (public routing information: unknown ones are refused before any
    /// crypto).
    fn served(&self, request: &PrivateRequest) -> Result<(String, &ServedModel), ApiError> {
        let model_id = catalog::resolve(request.model.as_deref().unwrap_or(catalog::DEFAULT_MODEL));
        match self.models.get(&model_id) {
            Some(served) => Ok((model_id, served)),
            None => Err(ApiError::GpuNotConfigured(model_id.chars().take(64).collect())),
        }
    }

    /// The routed model's node proves itself before the envelope is opened, so a refused node
    /// costs the client no envelope (it may send the same one again).
    async fn attest_node(&self, request: &PrivateRequest) -> Result<Option<NodeVerdict>, ApiError> {
        self.served(request)?.1.attested().await
    }

    /// Checks the model, opens the envelope, refuses replays. Shared by chat and agent mode.
    fn open(&self, request: &PrivateRequest) -> Result<Opened<'_>, ApiError> {
        let (model_id, served) = self.served(request)?;

        let envelope = Envelope::parse(&request.encrypted_prompt).map_err(ApiError::InvalidEnvelope)?;
        let tee_public = self.keys.tee_public();
        if envelope.key_id.is_some_and(|id| id != shared::sha256(&tee_public)) {
            return Err(ApiError::DecryptFailed("envelope is sealed to another enclave key; fetch the current key"));
        }
        let (plaintext, hpke_ctx) = envelope
            .open(self.keys.x25519(), &tee_public)
            .map_err(|_| ApiError::DecryptFailed("envelope does not decrypt with this enclave's key"))?;
        let prompt = PromptPlaintext::parse(&plaintext).map_err(ApiError::InvalidPrompt)?;
        drop(plaintext);

        match self.replay.check(envelope.enc, envelope.nonce, prompt.timestamp, shared::time::unix_now()) {
            ReplayVerdict::Fresh => {}
            ReplayVerdict::Replayed => return Err(ApiError::Replayed),
            ReplayVerdict::Stale => return Err(ApiError::Stale),
            ReplayVerdict::TimestampRequired => return Err(ApiError::TimestampRequired),
        }
        // Sealed values win (issue 18 finding 5): a sealed model must be the routed one, and a
        // sealed token limit replaces the outer one, which a relay could lower.
        if prompt.model.as_deref().is_some_and(|m| catalog::resolve(m) != model_id) {
            return Err(ApiError::ModelMismatch);
        }
        let asked = prompt.max_tokens.or(request.max_tokens);
        let max_tokens = Some(asked.map_or(served.max_tokens, |n| n.min(served.max_tokens)));
        Ok(Opened { model_id, served, envelope, prompt, hpke_ctx, max_tokens })
    }

    pub async fn process(&self, request: &PrivateRequest, format: ReplyFormat) -> Result<ProcessResponse, ApiError> {
        let node = self.attest_node(request).await?;
        let Opened { model_id, served, envelope, prompt, hpke_ctx, max_tokens } = self.open(request)?;
        let chat = ChatRequest { temperature: prompt.temperature, max_tokens, messages: prompt.into_messages() };
        let reply = match served.client.chat(&served.endpoint, &chat).await {
            Ok(reply) => reply,
            Err(e) => {
                served.after_failed_call(&e);
                return Err(ApiError::Model(e));
            }
        };
        drop(chat);

        let receipt = self.issue_receipt(&envelope, &model_id)?;
        let served_by = self.served_by(&receipt, node.as_ref())?;
        let sealed = match format {
            ReplyFormat::Reply => serde_json::to_vec(&ReplyPlaintext {
                reply: reply.content,
                model: model_id.clone(),
                usage: reply.usage,
                receipt: receipt.clone(),
                served_by,
            }),
            ReplyFormat::ChatCompletion => serde_json::to_vec(&ChatCompletion {
                served_by,
                ..ChatCompletion::new(reply.content, &model_id, reply.usage, receipt.clone(), shared::time::unix_now())
            }),
        };
        let reply_bytes = Zeroizing::new(sealed.map_err(|_| ApiError::Internal)?);
        let encrypted_response = shared::reply::seal(&hpke_ctx, &envelope.enc, &reply_bytes, &mut OsRng);

        Ok(ProcessResponse {
            success: true,
            encrypted_response,
            model: model_id,
            provider: PROVIDER.into(),
            usage: reply.usage,
            attestation: self.attestation.binding.clone(),
            receipt,
            onchain_attestation: None,
        })
    }

    /// Encrypted agent mode: the tool loop with exactly the five private tools, here, on the
    /// decrypted prompt; the reply, tool calls, usage and receipt leave sealed. No system
    /// prompt is added (skill shaping is a plaintext-path feature).
    pub async fn agent(&self, request: &PrivateRequest) -> Result<EncryptedAgentResponse, ApiError> {
        let node = self.attest_node(request).await?;
        let Opened { model_id, served, envelope, prompt, hpke_ctx, max_tokens } = self.open(request)?;
        let options = LoopOptions { max_tokens, temperature: prompt.temperature };
        let messages: Vec<ChatMessage> = prompt.into_messages().iter().map(ChatMessage::from).collect();
        let outcome =
            match run_tool_loop(&served.client, &served.endpoint, self.tools()?.as_ref(), messages, options).await {
                Ok(outcome) => outcome,
                Err(e) => {
                    served.after_failed_call(&e);
                    return Err(ApiError::Model(e));
                }
            };
        let receipt = self.issue_receipt(&envelope, &model_id)?;
        let tool_calls_count = outcome.tool_calls.len() as u32;
        let reply_plaintext = AgentReplyPlaintext {
            served_by: self.served_by(&receipt, node.as_ref())?,
            reply: outcome.reply,
            tool_calls: outcome.tool_calls,
            usage: outcome.usage,
            iterations: outcome.iterations,
            model: model_id.clone(),
            receipt: receipt.clone(),
        };
        let reply_bytes = Zeroizing::new(serde_json::to_vec(&reply_plaintext).map_err(|_| ApiError::Internal)?);
        drop(reply_plaintext);
        let encrypted_response = shared::reply::seal(&hpke_ctx, &envelope.enc, &reply_bytes, &mut OsRng);
        Ok(EncryptedAgentResponse {
            success: true,
            encrypted: true,
            encrypted_response,
            tool_calls_count,
            attestation: self.attestation.binding.clone(),
            privacy_guarantee: PrivacyGuarantee { backend_saw_plaintext: false, tools_executed_in_tee: true },
            model: model_id,
            provider: PROVIDER.into(),
            receipt,
            onchain_attestation: None,
        })
    }

    /// The signed statement of which node served `receipt`'s request (none for a loopback
    /// development server).
    fn served_by(&self, receipt: &Receipt, node: Option<&NodeVerdict>) -> Result<Option<ServedBy>, ApiError> {
        node.map(|v| ServedBy::issue(receipt, v, self.keys.signer()).map_err(|_| ApiError::Internal)).transpose()
    }

    fn issue_receipt(&self, envelope: &Envelope, model_id: &str) -> Result<Receipt, ApiError> {
        let body = ReceiptBody {
            prompt_hash: envelope.ciphertext_hash(),
            tee_pubkey: shared::keys::TeeKey(self.keys.tee_public()),
            nonce: envelope.nonce,
            client_pubkey: envelope.client_key(),
            model: model_id.into(),
            provider: PROVIDER.into(),
        };
        let ctx = ReceiptContext {
            program_id: self.program_id,
            timestamp: shared::time::unix_now(),
            tdx_quote_hash: self.attestation.binding_quote_hash,
        };
        Receipt::issue(&body, self.keys.signer(), &ctx).map_err(|_| ApiError::Internal)
    }
}
