//! `POST /agent`: the plaintext path (the relay runs it and sees the prompt) and encrypted
//! mode (sealed to the verified enclave; the tool loop runs inside it).

use serde_json::{Value, json};
use shared::envelope::PromptPlaintext;
use shared::wire::{AgentReplyPlaintext, EncryptedAgentResponse, OnchainAttestation, ToolCall, Usage};

use crate::api::Client;
use crate::chat::{Answer, check_answer};
use crate::error::ClientError;

#[derive(Debug, Clone, Default)]
pub struct AgentOptions {
    pub model: Option<String>,
    /// `false` = one plain completion.
    pub use_tools: Option<bool>,
    pub chat_id: Option<String>,
    /// Guided reasoning (BRAID).
    pub braid: bool,
    pub include_trace: bool,
    pub force_grd_id: Option<String>,
}

/// A decrypted encrypted-mode answer whose receipt passed every check.
#[derive(Debug, Clone)]
pub struct PrivateAgentOutcome {
    pub reply: String,
    pub tool_calls: Vec<ToolCall>,
    pub usage: Usage,
    pub iterations: u32,
    pub model: String,
    pub onchain: OnchainAttestation,
    /// The relay's view: how many tools ran (it never sees which or with what).
    pub tool_calls_count: u32,
    pub free_messages_remaining: Option<u64>,
    pub privacy_guarantee: shared::wire::PrivacyGuarantee,
    /// `encrypted: true` as the relay reported it.
    pub encrypted: bool,
}

impl Client {
    /// Plaintext `/agent`; returns the response body (contract §2.3) as it came.
    pub async fn agent(&self, prompt: &str, options: &AgentOptions) -> Result<Value, ClientError> {
        let mut body = json!({"prompt": prompt});
        if let Some(model) = &options.model {
            body["model"] = json!(model);
        }
        if let Some(use_tools) = options.use_tools {
            body["useTools"] = json!(use_tools);
        }
        if let Some(chat_id) = &options.chat_id {
            body["chatId"] = json!(chat_id);
        }
        if options.braid {
            body["reasoning"] = json!("braid");
            let mut braid = json!({"includeTrace": options.include_trace});
            if let Some(id) = &options.force_grd_id {
                braid["forceGrdId"] = json!(id);
            }
            body["braidOptions"] = braid;
        }
        self.post_agent(&body).await
    }

    /// Encrypted `/agent`: sealed to the verified enclave key; the reply is opened here and its
    /// receipt checked against what was sent. Retries once after a stale key.
    pub async fn agent_private(&self, prompt: &str, model: Option<&str>) -> Result<PrivateAgentOutcome, ClientError> {
        match self.agent_private_once(prompt, model).await {
            Err(e) if e.means_stale_key() => {
                self.drop_cached_key();
                self.agent_private_once(prompt, model).await
            }
            other => other,
        }
    }

    async fn agent_private_once(&self, prompt: &str, model: Option<&str>) -> Result<PrivateAgentOutcome, ClientError> {
        let mut plaintext = PromptPlaintext::from_prompt(prompt, shared::time::unix_now());
        plaintext.model = Some(model.unwrap_or(shared::catalog::DEFAULT_MODEL).into());
        let sent = self.seal_prompt(&plaintext).await?;
        // `prompt` is required by the contract (§2.2): an empty one rides beside the envelope.
        let mut body = json!({"prompt": "", "encryptedPrompt": sent.envelope.to_json_string()});
        if let Some(model) = model {
            body["model"] = json!(model);
        }
        let value = self.post_agent(&body).await?;
        if value.get("success") != Some(&Value::Bool(true)) {
            let code = value.get("error").and_then(Value::as_str).unwrap_or("unknown").to_string();
            let message = value.get("message").and_then(Value::as_str).unwrap_or_default().to_string();
            return Err(ClientError::Refused { status: 200, code, message, retry_after: None });
        }
        let free = value.get("freeMessagesRemaining").and_then(Value::as_u64);
        let response: EncryptedAgentResponse =
            serde_json::from_value(value).map_err(|e| ClientError::Malformed(e.to_string()))?;
        let opened = shared::reply::open(&sent.context, &sent.envelope.enc, &response.encrypted_response)
            .map_err(|_| ClientError::ReplyUndecryptable)?;
        let inner: AgentReplyPlaintext =
            serde_json::from_slice(&opened).map_err(|e| ClientError::Malformed(e.to_string()))?;
        if inner.tool_calls.len() != response.tool_calls_count as usize {
            return Err(ClientError::Mismatch("toolCallsCount differs from the sealed tool calls"));
        }
        let answer = Answer {
            outer_receipt: &response.receipt,
            inner_receipt: &inner.receipt,
            outer_model: &response.model,
            inner_model: &inner.model,
            attestation: &response.attestation,
            onchain: response.onchain_attestation.as_ref(),
            served_by: inner.served_by.as_ref(),
        };
        let onchain = check_answer(&sent, &answer, &self.program_id)?;
        crate::chat::ran_what_was_asked(model, &inner.receipt)?;
        Ok(PrivateAgentOutcome {
            reply: inner.reply,
            tool_calls: inner.tool_calls,
            usage: inner.usage,
            iterations: inner.iterations,
            model: inner.model,
            onchain,
            tool_calls_count: response.tool_calls_count,
            free_messages_remaining: free,
            privacy_guarantee: response.privacy_guarantee,
            encrypted: response.encrypted,
        })
    }

    async fn post_agent(&self, body: &Value) -> Result<Value, ClientError> {
        let mut http = self.http.post(format!("{}/agent", self.base)).json(body);
        if let Some(key) = &self.api_key {
            http = http.bearer_auth(key);
        }
        let response = http.send().await.map_err(|_| ClientError::RelayUnreachable(self.base.clone()))?;
        self.read(response).await
    }
}
