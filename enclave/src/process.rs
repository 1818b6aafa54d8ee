//! One private chat request: open the envelope, refuse replays, call the model, sign the
//! receipt, seal the reply (with the receipt inside).

use std::collections::HashMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use agent::model::{ChatMessage, ChatRequest, Endpoint, ModelClient, RetryPolicy};
use agent::tool_loop::{LoopOptions, run_tool_loop};
use agent::toolset::ToolSet;
use rand_core::OsRng;
use shared::address::Address;
use shared::catalog::{self, PROVIDER};
use shared::envelope::{Envelope, PromptPlaintext};
use shared::receipt::{Receipt, ReceiptBody, ReceiptContext};
use shared::wire::{
    AgentReplyPlaintext, ChatCompletion, EncryptedAgentResponse, PrivacyGuarantee, ProcessRequest, ProcessResponse,
    ReplyPlaintext,
};
use zeroize::Zeroizing;

use crate::attestation::Attestation;
use crate::config::EnclaveConfig;
use crate::error::ProcessError;
use crate::keys::EnclaveKeys;
use crate::replay::{ReplayGuard, ReplayVerdict};

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

struct ServedModel {
    endpoint: Endpoint,
    /// Pinned TLS for this node (or plain http to loopback in development).
    client: ModelClient,
    max_tokens: u32,
}

/// Everything a request needs, built once at boot.
pub struct Enclave {
    pub keys: EnclaveKeys,
    pub attestation: Attestation,
    program_id: Address,
    models: HashMap<String, ServedModel>,
    replay: ReplayGuard,
    /// Exactly the five tools of encrypted mode (the crate is built with `private-tools` only).
    tools: ToolSet,
}

pub fn unix_now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

impl Enclave {
    pub fn new(
        config: &EnclaveConfig,
        keys: EnclaveKeys,
        attestation: Attestation,
    ) -> Result<Self, crate::config::ConfigError> {
        let retry = RetryPolicy { attempts: config.warmup_attempts.max(1), ..RetryPolicy::default() };
        let timeout = Duration::from_secs(config.model_timeout_secs);
        let mut models = HashMap::new();
        for (id, m) in &config.models {
            let endpoint =
                m.to_endpoint(id).map_err(|e| crate::config::ConfigError::Invalid(format!("model `{id}`: {e}")))?;
            let client = ModelClient::for_endpoint(&endpoint, timeout, retry)
                .map_err(|e| crate::config::ConfigError::Invalid(format!("model `{id}`: {e}")))?;
            models.insert(id.clone(), ServedModel { endpoint, client, max_tokens: m.max_tokens });
        }
        Ok(Enclave {
            keys,
            attestation,
            program_id: config.program_id()?,
            models,
            replay: ReplayGuard::new(config.timestamp_window_secs, config.max_untimed_envelopes),
            tools: ToolSet::private(&config.tools),
        })
    }

    /// Checks the model, opens the envelope, refuses replays. Shared by chat and agent mode.
    fn open(&self, request: &ProcessRequest) -> Result<Opened<'_>, ProcessError> {
        // The model is public routing information: refuse unknown ones before any crypto.
        let model_id = catalog::resolve(request.model.as_deref().unwrap_or(catalog::DEFAULT_MODEL));
        let served = self
            .models
            .get(&model_id)
            .ok_or_else(|| ProcessError::GpuNotConfigured(model_id.chars().take(64).collect()))?;

        let envelope = Envelope::parse(&request.encrypted_prompt).map_err(ProcessError::InvalidEnvelope)?;
        let tee_public = self.keys.tee_public();
        if envelope.key_id.is_some_and(|id| id != shared::sha256(&tee_public)) {
            return Err(ProcessError::DecryptFailed(
                "envelope is sealed to another enclave key; fetch the current key",
            ));
        }
        let (plaintext, hpke_ctx) = envelope
            .open(self.keys.x25519(), &tee_public)
            .map_err(|_| ProcessError::DecryptFailed("envelope does not decrypt with this enclave's key"))?;
        let prompt = PromptPlaintext::parse(&plaintext).map_err(ProcessError::InvalidPrompt)?;
        drop(plaintext);

        match self.replay.check(envelope.enc, envelope.nonce, prompt.timestamp, unix_now()) {
            ReplayVerdict::Fresh => {}
            ReplayVerdict::Replayed => return Err(ProcessError::Replayed),
            ReplayVerdict::Stale => return Err(ProcessError::Stale),
            ReplayVerdict::TimestampRequired => return Err(ProcessError::TimestampRequired),
        }
        let max_tokens =
            [prompt.max_tokens, request.max_tokens].into_iter().flatten().fold(served.max_tokens, u32::min);
        let max_tokens = Some(max_tokens);
        Ok(Opened { model_id, served, envelope, prompt, hpke_ctx, max_tokens })
    }

    pub async fn process(
        &self,
        request: &ProcessRequest,
        format: ReplyFormat,
    ) -> Result<ProcessResponse, ProcessError> {
        let Opened { model_id, served, envelope, prompt, hpke_ctx, max_tokens } = self.open(request)?;
        let chat = ChatRequest { temperature: prompt.temperature, max_tokens, messages: prompt.into_messages() };
        let reply = served.client.chat(&served.endpoint, &chat).await.map_err(ProcessError::Model)?;
        drop(chat);

        let receipt = self.issue_receipt(&envelope, &model_id)?;
        let sealed = match format {
            ReplyFormat::Reply => serde_json::to_vec(&ReplyPlaintext {
                reply: reply.content,
                model: model_id.clone(),
                usage: reply.usage,
                receipt: receipt.clone(),
            }),
            ReplyFormat::ChatCompletion => serde_json::to_vec(&ChatCompletion::new(
                reply.content,
                &model_id,
                reply.usage,
                receipt.clone(),
                unix_now(),
            )),
        };
        let reply_bytes = Zeroizing::new(sealed.map_err(|_| ProcessError::Internal)?);
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
    pub async fn agent(&self, request: &ProcessRequest) -> Result<EncryptedAgentResponse, ProcessError> {
        let Opened { model_id, served, envelope, prompt, hpke_ctx, max_tokens } = self.open(request)?;
        let options = LoopOptions { max_tokens, temperature: prompt.temperature };
        let messages: Vec<ChatMessage> = prompt.into_messages().iter().map(ChatMessage::from).collect();
        let outcome = run_tool_loop(&served.client, &served.endpoint, &self.tools, messages, options)
            .await
            .map_err(ProcessError::Model)?;
        let receipt = self.issue_receipt(&envelope, &model_id)?;
        let tool_calls_count = outcome.tool_calls.len() as u32;
        let reply_plaintext = AgentReplyPlaintext {
            reply: outcome.reply,
            tool_calls: outcome.tool_calls,
            usage: outcome.usage,
            iterations: outcome.iterations,
            model: model_id.clone(),
            receipt: receipt.clone(),
        };
        let reply_bytes = Zeroizing::new(serde_json::to_vec(&reply_plaintext).map_err(|_| ProcessError::Internal)?);
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

    fn issue_receipt(&self, envelope: &Envelope, model_id: &str) -> Result<Receipt, ProcessError> {
        let body = ReceiptBody {
            prompt_hash: envelope.ciphertext_hash(),
            tee_pubkey: self.keys.tee_public(),
            nonce: envelope.nonce,
            client_pubkey: envelope.enc,
            model: model_id.into(),
            provider: PROVIDER.into(),
        };
        let ctx = ReceiptContext {
            program_id: self.program_id,
            timestamp: unix_now(),
            tdx_quote_hash: self.attestation.binding_quote_hash,
        };
        Receipt::issue(&body, self.keys.signer(), &ctx).map_err(|_| ProcessError::Internal)
    }
}
