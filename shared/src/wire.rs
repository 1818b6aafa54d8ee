//! JSON bodies of the contract's routes, with the contract's exact field names.

use serde::{Deserialize, Serialize};

use crate::receipt::Receipt;
use crate::reply::EncryptedResponse;

/// `teeType` (contract §2.5).
pub const TEE_TYPE: &str = "TDX-HOSTED";
/// `tdxQuoteError` when the enclave has no quote provider (contract §7 rule 4).
pub const TDX_QUOTE_UNAVAILABLE: &str = "tdx_quote_unavailable";

/// `GET /tee/public-key` (contract §2.5).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PublicKeyResponse {
    pub public_key: String,
    pub public_key_sha256: String,
    pub algorithm: String,
    pub tee_type: String,
}

/// The quote object inside attestation bodies.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TdxQuote {
    /// The quote bytes, base64.
    pub quote: String,
    /// Which provider produced it: `tdx_guest` (configfs-tsm on TDX) or `dev` (test PKI).
    pub provider: String,
    /// Collateral JSON for the quote, when the provider has it (the dev provider does).
    /// Collateral is signed by the root chain, so carrying it through the relay is safe.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collateral: Option<String>,
}

/// `GET /tee/attestation` (contract §2.4b).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AttestationResponse {
    pub tee_public_key: String,
    pub tee_public_key_sha256: String,
    /// 64 bytes hex: sha256(X25519 key) zero-padded.
    pub report_data_hex: String,
    pub tdx_quote: Option<TdxQuote>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tdx_quote_error: Option<String>,
    /// RFC 3339, UTC.
    pub generated_at: String,
    /// The enclave's ed25519 receipt key, base64 (bound by the per-request quote).
    pub enclave_public_key: String,
    /// sha256(teePublicKey ‖ enclavePublicKey) zero-padded: the binding quote's report_data.
    pub binding_report_data_hex: String,
    /// The binding quote (the same one every `/tee/process` response carries).
    pub binding_tdx_quote: Option<TdxQuote>,
    /// Echo of `?nonce=` (hex), when asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nonce: Option<String>,
    /// ed25519 by `enclavePublicKey` over `SVC-ATTEST-NONCE-v1 ‖ nonce ‖ teePublicKey`, base64.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nonce_signature: Option<String>,
}

/// The `attestation` object of a `/tee/process` response: the binding quote, whose
/// `report_data` = sha256(tee_pubkey ‖ enclave_pubkey).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BindingAttestation {
    pub tee_public_key: String,
    pub enclave_public_key: String,
    pub report_data_hex: String,
    pub tdx_quote: Option<TdxQuote>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tdx_quote_error: Option<String>,
    /// Hex sha256 of the quote bytes; empty when there is no quote.
    pub tdx_quote_hash: String,
}

/// Token counts (camelCase, as in contract §2.3).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub total_tokens: u64,
}

/// `POST /tee/process` request (shape not shown by the contract; see docs/decisions.md).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProcessRequest {
    pub encrypted_prompt: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// An outer cap on generated tokens (the x402 route's `maxTokens`): the enclave uses the
    /// smallest of this, the sealed prompt's own `maxTokens` and the model's limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
}

/// `POST /tee/process` success body. The relay adds `onchainAttestation`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProcessResponse {
    pub success: bool,
    pub encrypted_response: EncryptedResponse,
    pub model: String,
    pub provider: String,
    pub usage: Usage,
    pub attestation: BindingAttestation,
    pub receipt: Receipt,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub onchain_attestation: Option<OnchainAttestation>,
}

/// `onchainAttestation` (contract §2.6).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OnchainAttestation {
    pub address: String,
    pub encrypted_prompt_hash: String,
    pub signature: String,
    pub explorer_url: String,
}

/// The decrypted `encryptedResponse` of a chat: the receipt rides inside so a relay cannot
/// strip or swap it unnoticed (DESIGN.md §4.2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReplyPlaintext {
    pub reply: String,
    pub model: String,
    pub usage: Usage,
    pub receipt: Receipt,
}

/// A complete OpenAI `chat.completion` object (the sealed reply of
/// `/api/v1/chat/completions`), plus the enclave's `receipt` so the relay cannot swap it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatCompletion {
    pub id: String,
    pub object: String,
    pub created: u64,
    pub model: String,
    pub choices: Vec<ChatCompletionChoice>,
    pub usage: OpenAiUsage,
    pub receipt: Receipt,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatCompletionChoice {
    pub index: u32,
    pub message: ChatCompletionMessage,
    pub finish_reason: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatCompletionMessage {
    pub role: String,
    pub content: String,
}

/// Token counts in OpenAI's snake_case.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpenAiUsage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub total_tokens: u64,
}

impl From<Usage> for OpenAiUsage {
    fn from(u: Usage) -> Self {
        OpenAiUsage {
            prompt_tokens: u.prompt_tokens,
            completion_tokens: u.completion_tokens,
            total_tokens: u.total_tokens,
        }
    }
}

impl ChatCompletion {
    /// The completion for one reply; its id is derived from the receipt address (unique per
    /// request, and lets a client find the receipt from the id alone).
    pub fn new(content: String, model: &str, usage: Usage, receipt: Receipt, created: u64) -> Self {
        ChatCompletion {
            id: format!("chatcmpl-{}", receipt.address),
            object: "chat.completion".into(),
            created,
            model: crate::catalog::prefixed(model),
            choices: vec![ChatCompletionChoice {
                index: 0,
                message: ChatCompletionMessage { role: "assistant".into(), content },
                finish_reason: "stop".into(),
            }],
            usage: usage.into(),
            receipt,
        }
    }
}

/// One executed tool call, as `toolCalls` reports it (contract §2.3): in call order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub tool: String,
    pub args: serde_json::Value,
    pub result: serde_json::Value,
}

/// `privacyGuarantee` of encrypted `/agent` (contract §2.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PrivacyGuarantee {
    #[serde(rename = "backendSawPlaintext")]
    pub backend_saw_plaintext: bool,
    #[serde(rename = "toolsExecutedInTEE")]
    pub tools_executed_in_tee: bool,
}

/// Encrypted-mode `/agent` as the enclave answers it; the relay adds `freeMessagesRemaining`,
/// `billing` and `onchainAttestation`. `receipt` is also inside the sealed reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EncryptedAgentResponse {
    pub success: bool,
    pub encrypted: bool,
    pub encrypted_response: EncryptedResponse,
    pub tool_calls_count: u32,
    pub attestation: BindingAttestation,
    pub privacy_guarantee: PrivacyGuarantee,
    pub model: String,
    pub provider: String,
    pub receipt: Receipt,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub onchain_attestation: Option<OnchainAttestation>,
}

/// The sealed reply of encrypted `/agent`: everything the plaintext path would have said,
/// plus the receipt (so the relay cannot swap it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentReplyPlaintext {
    pub reply: String,
    pub tool_calls: Vec<ToolCall>,
    pub usage: Usage,
    pub iterations: u32,
    pub model: String,
    pub receipt: Receipt,
}

/// Error body of routes with a `success` field (`/tee/process`, `/agent`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailureBody {
    pub success: bool,
    pub error: String,
    pub message: String,
}

/// Error body of routes without a `success` field (contract §4: `{error: <code>}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorBody {
    pub error: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// 502 body when the relay cannot reach the enclave (contract §4.2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TeeUnreachable {
    pub error: String,
    pub message: String,
    pub tee_endpoint: String,
}

/// Error codes this project uses beyond the contract's (docs/decisions.md lists them all).
pub mod codes {
    pub const BAD_REQUEST: &str = "bad_request";
    pub const UNAUTHORIZED: &str = "unauthorized";
    pub const FORBIDDEN: &str = "forbidden";
    pub const NOT_FOUND: &str = "not_found";
    pub const TEE_UNREACHABLE: &str = "tee_unreachable";
    pub const GPU_NOT_CONFIGURED: &str = "gpu_not_configured";
    pub const INVALID_ENVELOPE: &str = "invalid_envelope";
    pub const DECRYPT_FAILED: &str = "decrypt_failed";
    pub const INVALID_PROMPT: &str = "invalid_prompt";
    pub const REPLAY_DETECTED: &str = "replay_detected";
    pub const STALE_TIMESTAMP: &str = "stale_timestamp";
    pub const MODEL_ERROR: &str = "model_error";
    pub const ENCLAVE_ERROR: &str = "enclave_error";
    pub const INTERNAL: &str = "internal_error";
    pub const PAYLOAD_TOO_LARGE: &str = "payload_too_large";
    pub const CONTEXT_LENGTH_EXCEEDED: &str = "context_length_exceeded";
    pub const INSUFFICIENT_BALANCE: &str = "insufficient_balance";

    /// The enclave's codes a relay passes on; anything else becomes `enclave_error`.
    pub fn known(code: &str) -> Option<&'static str> {
        [
            BAD_REQUEST,
            GPU_NOT_CONFIGURED,
            INVALID_ENVELOPE,
            DECRYPT_FAILED,
            INVALID_PROMPT,
            REPLAY_DETECTED,
            STALE_TIMESTAMP,
            MODEL_ERROR,
            CONTEXT_LENGTH_EXCEEDED,
            INTERNAL,
        ]
        .into_iter()
        .find(|c| *c == code)
    }
}
