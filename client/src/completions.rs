//! Sealed OpenAI chat completions (`POST /api/v1/chat/completions`): the messages are sealed to
//! the verified enclave, the relay answers an OpenAI `chat.completion` whose content is the
//! sealed reply, and the opened reply is a complete `chat.completion` with the enclave's
//! receipt inside. Every check of [`crate::chat`] applies.

use serde::Deserialize;
use shared::envelope::{Message, PromptPlaintext};
use shared::receipt::Receipt;
use shared::wire::{BindingAttestation, ChatCompletion, OnchainAttestation};

use crate::api::Client;
use crate::chat::{Answer, check_answer};
use crate::error::ClientError;

/// What a completion asks for.
#[derive(Debug, Clone, Default)]
pub struct CompletionRequest {
    pub model: String,
    pub messages: Vec<Message>,
    pub max_tokens: Option<u32>,
    pub temperature: Option<f32>,
}

/// The relay's answer: what the checks need of it.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Sealed {
    model: String,
    choices: Vec<SealedChoice>,
    receipt: Receipt,
    attestation: BindingAttestation,
    onchain_attestation: Option<OnchainAttestation>,
}

#[derive(Deserialize)]
struct SealedChoice {
    message: SealedMessage,
}

#[derive(Deserialize)]
struct SealedMessage {
    content: String,
}

/// An opened completion whose receipt passed every check.
#[derive(Debug, Clone)]
pub struct CompletionOutcome {
    /// The enclave's `chat.completion`, receipt included.
    pub completion: ChatCompletion,
    pub onchain: OnchainAttestation,
}

impl Client {
    /// One sealed completion; after a stale key (see [`ClientError::means_stale_key`]) the key is
    /// refetched, verified again, and the call retried once.
    pub async fn chat_completion(&self, request: &CompletionRequest) -> Result<CompletionOutcome, ClientError> {
        match self.chat_completion_once(request).await {
            Err(e) if e.means_stale_key() => {
                self.drop_cached_key();
                self.chat_completion_once(request).await
            }
            other => other,
        }
    }

    async fn chat_completion_once(&self, request: &CompletionRequest) -> Result<CompletionOutcome, ClientError> {
        let plaintext = PromptPlaintext {
            prompt: None,
            messages: Some(request.messages.clone()),
            // Sealed as well as sent outside: the enclave refuses a relay's other model.
            model: Some(request.model.clone()),
            max_tokens: request.max_tokens,
            temperature: request.temperature,
            timestamp: Some(shared::time::unix_now()),
        };
        let sent = self.seal_prompt(&plaintext).await?;
        let body = serde_json::json!({"model": request.model, "encryptedPrompt": sent.envelope.to_json_string()});
        let mut http = self.http.post(format!("{}/api/v1/chat/completions", self.base)).json(&body);
        if let Some(key) = &self.api_key {
            http = http.bearer_auth(key);
        }
        let response = http.send().await.map_err(|_| ClientError::RelayUnreachable(self.base.clone()))?;
        let sealed: Sealed = self.read(response).await?;
        let content = sealed
            .choices
            .first()
            .map(|c| c.message.content.as_str())
            .ok_or(ClientError::Malformed("no choice".into()))?;
        let encrypted = serde_json::from_str(content).map_err(|e| ClientError::Malformed(e.to_string()))?;
        let opened = shared::reply::open(&sent.context, &sent.envelope.enc, &encrypted)
            .map_err(|_| ClientError::ReplyUndecryptable)?;
        let completion: ChatCompletion =
            serde_json::from_slice(&opened).map_err(|e| ClientError::Malformed(e.to_string()))?;
        // The receipt names the bare catalog id; completions name it with the provider prefix.
        let (outer_model, inner_model) =
            (shared::catalog::resolve(&sealed.model), shared::catalog::resolve(&completion.model));
        let answer = Answer {
            outer_receipt: &sealed.receipt,
            inner_receipt: &completion.receipt,
            outer_model: &outer_model,
            inner_model: &inner_model,
            attestation: &sealed.attestation,
            onchain: sealed.onchain_attestation.as_ref(),
            served_by: completion.served_by.as_ref(),
        };
        let onchain = check_answer(&sent, &answer, &self.program_id)?;
        crate::chat::ran_what_was_asked(Some(&request.model), &completion.receipt)?;
        Ok(CompletionOutcome { completion, onchain })
    }
}
