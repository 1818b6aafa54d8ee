//! The enclave exchange of every private route: post the one typed request, read the answer,
//! check the receipt is for the ciphertext that was forwarded, and commit it.

use axum::body::Bytes;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use shared::keys::PromptHash;
use shared::receipt::Receipt;
use shared::wire::codes::EnclaveCode;
use shared::wire::{EncryptedAgentResponse, OnchainAttestation, PrivateRequest, ProcessResponse, Usage};

use super::request::SealedRequest;
use crate::http::error::RelayError;
use crate::receipts::CommitError;
use crate::state::AppState;

/// What the enclave answers when it refuses (its `FailureBody`, read leniently).
#[derive(Deserialize)]
struct EnclaveRefusal {
    error: String,
    #[serde(default)]
    message: Option<String>,
}

/// Longest enclave refusal message passed on.
const MAX_MESSAGE: usize = 300;

/// The enclave's internal route for each private route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EnclaveRoute {
    /// Sealed `{reply, model, usage, receipt}`.
    Process,
    /// Sealed OpenAI `chat.completion`.
    ChatCompletions,
    /// Encrypted `/agent`: the tool loop with the five tools.
    Agent,
}

impl EnclaveRoute {
    pub fn path(self) -> &'static str {
        match self {
            EnclaveRoute::Process => "/process",
            EnclaveRoute::ChatCompletions => "/chat/completions",
            EnclaveRoute::Agent => "/agent",
        }
    }
}

/// An enclave answer that carries a receipt (and, where the relay can see them, tokens).
pub trait EnclaveReply: DeserializeOwned + Send + 'static {
    fn receipt(&self) -> &Receipt;
    /// Tokens, for per-token billing; encrypted `/agent` reports none to the relay.
    fn usage(&self) -> Usage;
}

impl EnclaveReply for ProcessResponse {
    fn receipt(&self) -> &Receipt {
        &self.receipt
    }
    fn usage(&self) -> Usage {
        self.usage
    }
}

impl EnclaveReply for EncryptedAgentResponse {
    fn receipt(&self) -> &Receipt {
        &self.receipt
    }
    fn usage(&self) -> Usage {
        Usage::default()
    }
}

fn unexpected() -> RelayError {
    RelayError::EnclaveAnswer("the enclave answered with an unexpected body")
}

/// Posts `request` to the enclave that holds `key_id` and returns its 200 body, or the refusal
/// it named (its status and a known code; anything else is `enclave_error`), or
/// `tee_unreachable`.
async fn post(
    app: &AppState,
    route: EnclaveRoute,
    request: &PrivateRequest,
    key_id: Option<[u8; 32]>,
) -> Result<Bytes, RelayError> {
    let enclave = app.enclaves.for_key(key_id).await?;
    let body = Bytes::from(serde_json::to_vec(request).map_err(|_| RelayError::Internal("a value did not serialize"))?);
    let answer = enclave.post_json(route.path(), body).await.map_err(|_| enclave.unreachable())?;
    if answer.status == 200 {
        return Ok(answer.body);
    }
    let refusal: EnclaveRefusal = serde_json::from_slice(&answer.body).map_err(|_| unexpected())?;
    let code = EnclaveCode::parse(&refusal.error);
    if code == Some(EnclaveCode::DecryptFailed) {
        // The enclave's key changed since the last refresh: renew the cached keys now, so the
        // client's refetch (contract §3 rule 4) gets the new one.
        app.enclaves.refresh().await;
    }
    let message =
        refusal.message.unwrap_or_else(|| "the enclave refused the request".into()).chars().take(MAX_MESSAGE).collect();
    let status = if (400..600).contains(&answer.status) { answer.status } else { 502 };
    Err(RelayError::Enclave { status, code, message })
}

/// Checks that `receipt` verifies and is for the ciphertext the relay forwarded, then commits
/// it. Nothing is stored unless it checks out.
pub async fn commit_receipt(
    app: &AppState,
    receipt: &Receipt,
    prompt_hash: &PromptHash,
) -> Result<OnchainAttestation, RelayError> {
    if receipt.verify(app.receipts.commits.program_id()).map(|v| v.body.prompt_hash) != Ok(*prompt_hash) {
        return Err(RelayError::EnclaveAnswer("the enclave returned a receipt that does not verify"));
    }
    match app.receipts.commits.commit(receipt, prompt_hash, crate::unix_now()).await {
        Ok(signature) => Ok(OnchainAttestation {
            address: receipt.address.clone(),
            encrypted_prompt_hash: receipt.encrypted_prompt_hash.clone(),
            explorer_url: app.receipts.commits.explorer_url(&app.public_url, &signature),
            signature,
            // In solana mode the commit is only queued for the chain so far.
            status: Some(if app.receipts.commits.queues_for_chain() { "pending" } else { "landed" }.into()),
        }),
        Err(CommitError::Duplicate) => Err(RelayError::DuplicateReceipt),
        Err(e) => {
            tracing::error!(error = %e, "receipt commit failed");
            Err(RelayError::Internal("a receipt commit failed"))
        }
    }
}

/// Forward, read the answer, check and commit its receipt.
pub async fn exchange<T: EnclaveReply>(
    app: &AppState,
    route: EnclaveRoute,
    request: &SealedRequest,
) -> Result<(T, OnchainAttestation), RelayError> {
    let body = post(app, route, &request.forward, request.key_id).await?;
    let answer: T = serde_json::from_slice(&body).map_err(|_| unexpected())?;
    let onchain = commit_receipt(app, answer.receipt(), &request.prompt_hash).await?;
    Ok((answer, onchain))
}
