//! One private chat request: open the envelope, refuse replays, call the model, sign the
//! receipt, seal the reply (with the receipt inside).

use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use agent::model::{ChatMessage, ChatRequest, Endpoint, ModelClient, RetryPolicy};
use agent::tool_loop::{LoopOptions, run_tool_loop};
use agent::tools::ToolsConfig;
use agent::toolset::ToolSet;
use rand_core::OsRng;
use shared::address::Address;
use shared::catalog::{self, PROVIDER};
use shared::envelope::{Envelope, PromptPlaintext};
use shared::gpu::node::NodeVerdict;
use shared::receipt::{Receipt, ReceiptBody, ReceiptContext};
use shared::served_by::ServedBy;
use shared::wire::{
    AgentReplyPlaintext, ChatCompletion, EncryptedAgentResponse, PrivacyGuarantee, PrivateRequest, ProcessResponse,
    ProvisionRequest, ProvisioningState, ReplyPlaintext,
};
use zeroize::Zeroizing;

use crate::attestation::Attestation;
use crate::config::EnclaveConfig;
use crate::custody::Custody;
use crate::error::ProcessError;
use crate::funds::{Env, Funds};
use crate::gpu_node::NodeGate;
use crate::keys::EnclaveKeys;
use crate::replay::{ReplayGuard, ReplayVerdict};
use crate::swap::{SwapError, Swaps, SwapsConfig};
use shared::swap::{OpenedSession, SessionTerms, StepAnswer, StepRequest};

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
    /// What the node must prove first; `None` only for a loopback development server.
    gate: Option<Arc<NodeGate>>,
}

impl ServedModel {
    /// The node's verdict before any plaintext goes to it (`None`: a loopback development
    /// server, which has nothing to prove).
    async fn attested(&self) -> Result<Option<NodeVerdict>, ProcessError> {
        match &self.gate {
            Some(gate) => Ok(Some(gate.verdict(&self.client, &self.endpoint).await?)),
            None => Ok(None),
        }
    }

    /// After a failed model call the node attests again before the next prompt.
    fn after_failed_call(&self, error: &agent::model::ModelError) {
        use agent::model::ModelError::{Timeout, Unreachable};
        if let (Some(gate), Unreachable | Timeout) = (&self.gate, error) {
            gate.forget();
        }
    }
}

/// Everything a request needs, built once at boot.
pub struct Enclave {
    pub keys: EnclaveKeys,
    pub attestation: Attestation,
    pub custody: Custody,
    program_id: Address,
    models: HashMap<String, ServedModel>,
    replay: ReplayGuard,
    /// Exactly the five tools of encrypted mode, rebuilt when a bundle brings credentials.
    tools: RwLock<Arc<ToolSet>>,
    tools_config: ToolsConfig,
    /// Swaps, once a bundle (the KEK, the router's key) arrived and if configured.
    swaps: RwLock<Option<Arc<Swaps>>>,
    swaps_config: Option<SwapsConfig>,
    /// Managed wallets' pool (the privacy back end); needs swaps (its chain).
    funds: Funds,
}

impl Enclave {
    pub fn new(
        config: &EnclaveConfig,
        keys: EnclaveKeys,
        attestation: Attestation,
    ) -> Result<Self, crate::config::ConfigError> {
        let retry = RetryPolicy { attempts: config.warmup_attempts.max(1), ..RetryPolicy::default() };
        let timeout = Duration::from_secs(config.model_timeout_secs);
        let reattest = Duration::from_secs(config.gpu_reattest_secs);
        let mut gates = HashMap::new();
        for node in &config.gpu_nodes {
            gates.insert(node.pin()?, Arc::new(NodeGate::new(node, reattest)?));
        }
        let mut models = HashMap::new();
        for (id, m) in &config.models {
            let endpoint =
                m.to_endpoint(id).map_err(|e| crate::config::ConfigError::Invalid(format!("model `{id}`: {e}")))?;
            let client = ModelClient::for_endpoint(&endpoint, timeout, retry)
                .map_err(|e| crate::config::ConfigError::Invalid(format!("model `{id}`: {e}")))?;
            let gate = endpoint.tls_pin.and_then(|pin| gates.get(&pin).cloned());
            models.insert(id.clone(), ServedModel { endpoint, client, max_tokens: m.max_tokens, gate });
        }
        Ok(Enclave {
            keys,
            attestation,
            custody: Custody::new(config.provisioners()?),
            program_id: config.program_id()?,
            models,
            replay: ReplayGuard::new(config.timestamp_window_secs, config.max_untimed_envelopes),
            tools: RwLock::new(Arc::new(ToolSet::private(&config.tools, None))),
            tools_config: config.tools.clone(),
            swaps: RwLock::new(None),
            swaps_config: config.swaps.clone(),
            funds: Funds::new(config.swaps.as_ref(), config.witnesses()?),
        })
    }

    /// Installs a secrets bundle (DESIGN §10) and gives the tools its credentials.
    pub fn provision(&self, request: &ProvisionRequest) -> Result<ProvisioningState, ProcessError> {
        let held = self.custody.provision(&request.encrypted_bundle, &self.keys)?;
        self.funds.provisioned(&held);
        let tools = Arc::new(ToolSet::private(&self.tools_config, Some(&held.credentials)));
        *self.tools.write().map_err(|_| ProcessError::Internal)? = tools;
        if let Some(config) = &self.swaps_config {
            let router_key = held.credentials.get("jupiter").map(|k| k.to_string());
            let rpc_key = held.credentials.get("solanaRpc").map(|k| k.as_str());
            let swaps = Swaps::new(config, router_key, rpc_key, self.program_id).map_err(|e| {
                tracing::error!(error = %e, "swaps not started");
                ProcessError::Internal
            })?;
            *self.swaps.write().map_err(|_| ProcessError::Internal)? = Some(Arc::new(swaps));
        }
        tracing::info!(version = held.version, provisioner = %held.provisioner, "provisioned");
        Ok(self.provisioning_state())
    }

    /// What the enclave says of its custody: the bundle it holds and the witness it heeds.
    pub fn provisioning_state(&self) -> ProvisioningState {
        ProvisioningState { witness_keys: self.funds.witness_keys(), ..self.custody.state() }
    }

    fn tools(&self) -> Result<Arc<ToolSet>, ProcessError> {
        Ok(self.tools.read().map_err(|_| ProcessError::Internal)?.clone())
    }

    /// The swap service: 501 when not configured, 503 until provisioned.
    fn swaps(&self) -> Result<Arc<Swaps>, ProcessError> {
        if self.swaps_config.is_none() {
            return Err(SwapError::NotConfigured.into());
        }
        let held = self.swaps.read().map_err(|_| ProcessError::Internal)?.clone();
        held.ok_or(ProcessError::Custody(crate::custody::CustodyError::NotProvisioned))
    }

    /// A new one-shot session (DESIGN §11).
    pub async fn open_session(&self, terms: SessionTerms) -> Result<OpenedSession, ProcessError> {
        Ok(self.swaps()?.open_oneshot(&self.custody, &self.keys, terms).await?)
    }

    /// One step of a session.
    pub async fn swap_step(&self, request: StepRequest) -> Result<StepAnswer, ProcessError> {
        Ok(self.swaps()?.step(&self.custody, &self.keys, request, shared::time::unix_now()).await?)
    }

    /// A new managed-wallet key, sealed with its id and owner.
    pub fn new_wallet(
        &self,
        request: &shared::privacy::NewWallet,
    ) -> Result<shared::privacy::CreatedWallet, ProcessError> {
        self.swaps()?;
        Ok(crate::funds::new_wallet(&self.custody, &self.keys, request)?)
    }

    /// The pool's key (the relay asks once and keeps the sealed object).
    pub fn new_pool(&self) -> Result<shared::wire::SealedObject, ProcessError> {
        self.swaps()?;
        Ok(crate::funds::new_pool(&self.custody)?)
    }

    /// One step of the pool: encrypt, credit, withdraw, balance, reserves.
    pub async fn privacy_step(
        &self,
        request: shared::privacy::PrivacyRequest,
    ) -> Result<shared::privacy::PrivacyAnswer, ProcessError> {
        let swaps = self.swaps()?;
        let env = Env {
            swaps: &swaps,
            custody: &self.custody,
            keys: &self.keys,
            now: self.funds.clock(shared::time::unix_now()),
        };
        Ok(self.funds.step(&env, request).await?)
    }

    /// Every GPU node and the models it serves, for the attestation document.
    pub fn gpu_nodes(&self) -> Vec<shared::wire::GpuNodeStatus> {
        let mut nodes: Vec<(&Arc<NodeGate>, Vec<String>)> = Vec::new();
        for (id, served) in &self.models {
            let Some(gate) = &served.gate else { continue };
            match nodes.iter_mut().find(|(g, _)| Arc::ptr_eq(g, gate)) {
                Some((_, models)) => models.push(id.clone()),
                None => nodes.push((gate, vec![id.clone()])),
            }
        }
        nodes
            .into_iter()
            .map(|(gate, mut models)| {
                models.sort();
                gate.status(models)
            })
            .collect()
    }

    /// The routed model (public routing information: unknown ones are refused before any
    /// crypto).
    fn served(&self, request: &PrivateRequest) -> Result<(String, &ServedModel), ProcessError> {
        let model_id = catalog::resolve(request.model.as_deref().unwrap_or(catalog::DEFAULT_MODEL));
        match self.models.get(&model_id) {
            Some(served) => Ok((model_id, served)),
            None => Err(ProcessError::GpuNotConfigured(model_id.chars().take(64).collect())),
        }
    }

    /// The routed model's node proves itself before the envelope is opened, so a refused node
    /// costs the client no envelope (it may send the same one again).
    async fn attest_node(&self, request: &PrivateRequest) -> Result<Option<NodeVerdict>, ProcessError> {
        self.served(request)?.1.attested().await
    }

    /// Checks the model, opens the envelope, refuses replays. Shared by chat and agent mode.
    fn open(&self, request: &PrivateRequest) -> Result<Opened<'_>, ProcessError> {
        let (model_id, served) = self.served(request)?;

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

        match self.replay.check(envelope.enc, envelope.nonce, prompt.timestamp, shared::time::unix_now()) {
            ReplayVerdict::Fresh => {}
            ReplayVerdict::Replayed => return Err(ProcessError::Replayed),
            ReplayVerdict::Stale => return Err(ProcessError::Stale),
            ReplayVerdict::TimestampRequired => return Err(ProcessError::TimestampRequired),
        }
        // Sealed values win (issue 18 finding 5): a sealed model must be the routed one, and a
        // sealed token limit replaces the outer one, which a relay could lower.
        if prompt.model.as_deref().is_some_and(|m| catalog::resolve(m) != model_id) {
            return Err(ProcessError::ModelMismatch);
        }
        let asked = prompt.max_tokens.or(request.max_tokens);
        let max_tokens = Some(asked.map_or(served.max_tokens, |n| n.min(served.max_tokens)));
        Ok(Opened { model_id, served, envelope, prompt, hpke_ctx, max_tokens })
    }

    pub async fn process(
        &self,
        request: &PrivateRequest,
        format: ReplyFormat,
    ) -> Result<ProcessResponse, ProcessError> {
        let node = self.attest_node(request).await?;
        let Opened { model_id, served, envelope, prompt, hpke_ctx, max_tokens } = self.open(request)?;
        let chat = ChatRequest { temperature: prompt.temperature, max_tokens, messages: prompt.into_messages() };
        let reply = match served.client.chat(&served.endpoint, &chat).await {
            Ok(reply) => reply,
            Err(e) => {
                served.after_failed_call(&e);
                return Err(ProcessError::Model(e));
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
    pub async fn agent(&self, request: &PrivateRequest) -> Result<EncryptedAgentResponse, ProcessError> {
        let node = self.attest_node(request).await?;
        let Opened { model_id, served, envelope, prompt, hpke_ctx, max_tokens } = self.open(request)?;
        let options = LoopOptions { max_tokens, temperature: prompt.temperature };
        let messages: Vec<ChatMessage> = prompt.into_messages().iter().map(ChatMessage::from).collect();
        let outcome =
            match run_tool_loop(&served.client, &served.endpoint, self.tools()?.as_ref(), messages, options).await {
                Ok(outcome) => outcome,
                Err(e) => {
                    served.after_failed_call(&e);
                    return Err(ProcessError::Model(e));
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

    /// The signed statement of which node served `receipt`'s request (none for a loopback
    /// development server).
    fn served_by(&self, receipt: &Receipt, node: Option<&NodeVerdict>) -> Result<Option<ServedBy>, ProcessError> {
        node.map(|v| ServedBy::issue(receipt, v, self.keys.signer()).map_err(|_| ProcessError::Internal)).transpose()
    }

    fn issue_receipt(&self, envelope: &Envelope, model_id: &str) -> Result<Receipt, ProcessError> {
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
        Receipt::issue(&body, self.keys.signer(), &ctx).map_err(|_| ProcessError::Internal)
    }
}
