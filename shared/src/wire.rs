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
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct PublicKeyResponse {
    pub public_key: String,
    pub public_key_sha256: String,
    pub algorithm: String,
    pub tee_type: String,
}

/// The quote object inside attestation bodies.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
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
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
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
    /// Whether this boot holds a secrets bundle (informational: the quote does not cover it).
    #[serde(default)]
    pub provisioning: ProvisioningState,
    /// The GPU nodes this enclave sends prompts to and their last verdicts (informational: what
    /// each node must prove is in the measured configuration; docs/gpu.md).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gpu_nodes: Vec<GpuNodeStatus>,
}

/// One GPU node as the attestation document shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct GpuNodeStatus {
    /// The catalog models it serves.
    pub models: Vec<String>,
    /// Its pinned TLS key (hex SHA-256 of the SPKI).
    pub tls_spki_sha256: String,
    /// GPUs it must report.
    pub gpus: usize,
    /// The last verdict, while fresh; `None` before the first request or after a failure.
    pub verdict: Option<NodeVerdict>,
}

/// A GPU node that proved itself (`shared::gpu::node::verify`): shown in the attestation
/// document and named beside receipts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct NodeVerdict {
    /// The pinned TLS key the evidence is bound to (hex SHA-256 of its SPKI).
    pub tls_spki_sha256: String,
    /// SHA-256 of the node's quote (hex).
    pub quote_sha256: String,
    /// The GPU evidence digest the quote binds (hex).
    pub evidence_digest: String,
    /// `intel` or `dev:…`: whose root vouched for the node's quote.
    pub trust_root: String,
    pub tcb_status: Option<String>,
    /// `nvidia` or `dev:…`: whose root vouched for the GPUs.
    pub device_root: String,
    pub gpus: Vec<GpuVerdict>,
    pub verified_at: u64,
}

/// What a verified GPU runs (`shared::gpu::verify`), as the attestation document shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct GpuVerdict {
    /// The device: SHA-256 (hex) of its leaf certificate's public key, its own per GPU.
    pub device: String,
    pub driver: String,
    pub vbios: String,
    /// `project-projectSku-chipSku`, e.g. `1010-0200-882`.
    pub board: String,
    /// The firmware id (hex) the report and the leaf certificate share.
    pub fwid: String,
    /// Golden measurements compared and equal.
    pub measurements_matched: usize,
    /// The oldest stapled OCSP response's `producedAt` (Unix seconds).
    pub ocsp_produced_at: u64,
}

/// What the enclave says of its secrets bundle: never a secret.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ProvisioningState {
    pub provisioned: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bundle_version: Option<u64>,
    /// The provisioner key that signed the bundle, base58.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provisioner_key: Option<String>,
    /// The freshness witness's keys of the measured configuration (DESIGN §13), base58.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub witness_keys: Vec<String>,
}

/// `POST /tee/provision` (and the enclave's `/provision`): a signed secrets bundle sealed to
/// the enclave key as an envelope of purpose `Provision` (DESIGN §10). The relay forwards it
/// unread.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProvisionRequest {
    pub encrypted_bundle: String,
}

/// A sealed object as the relay stores it and hands it back (DESIGN §10): the enclave keeps no
/// disk, so objects that must outlive a boot live as these blobs in the relay's database.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct SealedObject {
    /// 32 hex characters.
    pub id: String,
    pub kind: String,
    pub version: u32,
    /// The blob, base64.
    pub blob: String,
    /// The object's public half, when it has one (a signing key's address, base58).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub public_key: Option<String>,
}

/// `POST /objects` of the enclave: make a new secret of `kind` and seal it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewObject {
    pub kind: String,
}

/// `POST /objects/open` and `/objects/rewrap` of the enclave: a stored blob.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoredBlob {
    pub blob: String,
}

/// What `/objects/open` says of an object it opened: its public half, proof it opened, and,
/// when it was sealed under an earlier KEK, the same object sealed under the current one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OpenedObject {
    pub id: String,
    pub kind: String,
    pub version: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub public_key: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rewrapped: Option<String>,
}

/// The `attestation` object of a `/tee/process` response: the binding quote, whose
/// `report_data` = sha256(tee_pubkey ‖ enclave_pubkey).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
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
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub total_tokens: u64,
}

/// The one request shape of every private route, as the relay forwards it to the enclave
/// (`/tee/process`, chat completions, the x402 route, encrypted `/agent`). Clients send it to
/// `/tee/process`; the other routes' bodies carry the same fields.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct PrivateRequest {
    pub encrypted_prompt: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// An outer cap on generated tokens (the x402 route's `maxTokens`): the enclave uses the
    /// sealed prompt's own `maxTokens` when it has one, else this, and never more than the
    /// model's limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
}

/// `POST /tee/process` success body. The relay adds `onchainAttestation`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
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
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct OnchainAttestation {
    pub address: String,
    pub encrypted_prompt_hash: String,
    pub signature: String,
    pub explorer_url: String,
    /// `landed`, or `pending` until a relay writing to the chain sees the commit land there
    /// (`GET /attestation/{address}/ledger` follows it). Absent from relays before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
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
    /// The GPU node that served the request, signed beside the receipt (absent for a local
    /// development model server).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub served_by: Option<crate::served_by::ServedBy>,
}

/// A complete OpenAI `chat.completion` object (the sealed reply of
/// `/api/v1/chat/completions`), plus the enclave's `receipt` so the relay cannot swap it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ChatCompletion {
    pub id: String,
    pub object: String,
    pub created: u64,
    pub model: String,
    pub choices: Vec<ChatCompletionChoice>,
    pub usage: OpenAiUsage,
    pub receipt: Receipt,
    /// The GPU node that served the request, signed beside the receipt (absent for a local
    /// development model server).
    #[serde(rename = "servedBy", default, skip_serializing_if = "Option::is_none")]
    pub served_by: Option<crate::served_by::ServedBy>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ChatCompletionChoice {
    pub index: u32,
    pub message: ChatCompletionMessage,
    pub finish_reason: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ChatCompletionMessage {
    pub role: String,
    pub content: String,
}

/// Token counts in OpenAI's snake_case.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
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
            served_by: None,
        }
    }
}

/// One executed tool call, as `toolCalls` reports it (contract §2.3): in call order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ToolCall {
    pub tool: String,
    pub args: serde_json::Value,
    pub result: serde_json::Value,
}

/// `privacyGuarantee` of encrypted `/agent` (contract §2.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PrivacyGuarantee {
    #[serde(rename = "backendSawPlaintext")]
    pub backend_saw_plaintext: bool,
    #[serde(rename = "toolsExecutedInTEE")]
    pub tools_executed_in_tee: bool,
}

/// Encrypted-mode `/agent` as the enclave answers it; the relay adds `freeMessagesRemaining`,
/// `billing` and `onchainAttestation`. `receipt` is also inside the sealed reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
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
    /// The GPU node that served the request, signed beside the receipt (absent for a local
    /// development model server).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub served_by: Option<crate::served_by::ServedBy>,
}

/// Error body of routes with a `success` field (`/tee/process`, `/agent`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FailureBody {
    pub success: bool,
    pub error: String,
    pub message: String,
}

/// Every error code the services answer with, in one table (docs/decisions.md explains each).
/// The contract's own codes come first; the rest are this project's.
pub mod codes {
    // Contract §7.
    pub const BAD_REQUEST: &str = "bad_request";
    pub const MISSING_REQUIRED_FIELDS: &str = "missing_required_fields";
    pub const GPU_NOT_CONFIGURED: &str = "gpu_not_configured";
    pub const TEE_UNREACHABLE: &str = "tee_unreachable";
    pub const FREE_TRIAL_EXHAUSTED: &str = "free_trial_exhausted";
    pub const TDX_QUOTE_UNAVAILABLE: &str = super::TDX_QUOTE_UNAVAILABLE;

    // HTTP-level refusals of any route.
    pub const UNAUTHORIZED: &str = "unauthorized";
    pub const FORBIDDEN: &str = "forbidden";
    pub const NOT_FOUND: &str = "not_found";
    pub const METHOD_NOT_ALLOWED: &str = "method_not_allowed";
    pub const PAYLOAD_TOO_LARGE: &str = "payload_too_large";
    pub const UNSUPPORTED_MEDIA_TYPE: &str = "unsupported_media_type";
    pub const RATE_LIMITED: &str = "rate_limited";
    pub const INSUFFICIENT_BALANCE: &str = "insufficient_balance";
    pub const INTERNAL: &str = "internal_error";
    /// The request's body did not arrive in time (the relay's `server.bodyReadSecs`).
    pub const REQUEST_TIMEOUT: &str = "request_timeout";
    /// The relay's database does not answer (restarting, unreachable): retry shortly.
    pub const DATABASE_UNAVAILABLE: &str = "database_unavailable";

    // Request fields (`/agent` and the x402 route).
    pub const INVALID_FIELD: &str = "invalid_field";
    pub const MISSING_PROMPT: &str = "missing_prompt";
    pub const UNKNOWN_REASONING: &str = "unknown_reasoning";
    pub const INVALID_BRAID_OPTIONS: &str = "invalid_braid_options";

    // The enclave's refusals, and the relay's view of the enclave.
    pub const INVALID_ENVELOPE: &str = "invalid_envelope";
    pub const DECRYPT_FAILED: &str = "decrypt_failed";
    pub const INVALID_PROMPT: &str = "invalid_prompt";
    pub const REPLAY_DETECTED: &str = "replay_detected";
    pub const STALE_TIMESTAMP: &str = "stale_timestamp";
    pub const MODEL_ERROR: &str = "model_error";
    pub const CONTEXT_LENGTH_EXCEEDED: &str = "context_length_exceeded";
    pub const ENCLAVE_ERROR: &str = "enclave_error";
    /// The model outside the envelope is not the sealed one (a relay altered the request).
    pub const MODEL_MISMATCH: &str = "model_mismatch";
    /// The model's GPU node did not prove itself (its quote or a GPU's evidence failed, or it
    /// did not answer): no plaintext was sent to it.
    pub const GPU_NOT_ATTESTED: &str = "gpu_not_attested";
    /// The enclave is at its configured limit of requests in flight; retry shortly.
    pub const ENCLAVE_BUSY: &str = "enclave_busy";
    /// The enclave's request time limit passed.
    pub const ENCLAVE_TIMEOUT: &str = "enclave_timeout";

    // Custody: provisioning and sealed objects (DESIGN §10).
    pub const NOT_PROVISIONED: &str = "not_provisioned";
    pub const UNKNOWN_PROVISIONER: &str = "unknown_provisioner";
    pub const BAD_BUNDLE_SIGNATURE: &str = "bad_bundle_signature";
    pub const WRONG_ENCLAVE_KEY: &str = "wrong_enclave_key";
    pub const STALE_BUNDLE: &str = "stale_bundle";
    pub const MALFORMED_BUNDLE: &str = "malformed_bundle";
    pub const SEALED_OBJECT_INVALID: &str = "sealed_object_invalid";
    pub const UNKNOWN_OBJECT_KIND: &str = "unknown_object_kind";

    // Swaps (DESIGN §11).
    pub const SWAPS_NOT_CONFIGURED: &str = "swaps_not_configured";
    pub const FUNDING_NOT_FOUND: &str = "funding_not_found";
    pub const FUNDING_FAILED: &str = "funding_failed";
    pub const FUNDING_WRONG_PAYER: &str = "funding_wrong_payer";
    pub const FUNDING_NOT_FOR_THIS_SESSION: &str = "funding_not_for_this_session";
    pub const FUNDING_WRONG_MINT: &str = "funding_wrong_mint";
    pub const FUNDING_WRONG_AMOUNT: &str = "funding_wrong_amount";
    pub const FUNDING_ALREADY_USED: &str = "funding_already_used";
    pub const ROUTER_TRANSACTION_REFUSED: &str = "router_transaction_refused";
    pub const SLIPPAGE_EXCEEDED: &str = "slippage_exceeded";
    pub const ROUTER_UNREACHABLE: &str = "router_unreachable";
    pub const ROUTER_ERROR: &str = "router_error";
    pub const CHAIN_UNREACHABLE: &str = "chain_unreachable";
    pub const NOTHING_TO_DO: &str = "nothing_to_do";
    pub const INVALID_MINT: &str = "invalid_mint";
    pub const INVALID_AMOUNT: &str = "invalid_amount";
    pub const AMOUNT_OUT_OF_BOUNDS: &str = "amount_out_of_bounds";
    pub const SESSION_EXPIRED: &str = "session_expired";
    pub const INVALID_STATE: &str = "invalid_state";

    // Managed wallets' privacy operations (DESIGN §11, docs/wallets.md).
    /// The wallet has an owner and the request carries no owner signature.
    pub const OWNER_SIGNATURE_REQUIRED: &str = "owner_signature_required";
    /// The owner signature does not verify over this request.
    pub const OWNER_SIGNATURE_INVALID: &str = "owner_signature_invalid";
    pub const INSUFFICIENT_PRIVATE_BALANCE: &str = "insufficient_private_balance";
    /// Encrypt: the wallet's public token account holds less than the amount.
    pub const INSUFFICIENT_PUBLIC_BALANCE: &str = "insufficient_public_balance";
    /// The pool would owe more than it holds: the operation is refused.
    pub const RESERVES_SHORT: &str = "reserves_short";
    /// A newer book exists (two operations on one mint at once): read it and retry.
    pub const BOOK_STALE: &str = "book_stale";
    /// The enclave booted recently and signs no payout until earlier ones have settled.
    pub const POOL_WARMING_UP: &str = "pool_warming_up";
    /// The pool key holds too little SOL to pay fees and rent: the operator funds it.
    pub const POOL_UNFUNDED: &str = "pool_unfunded";
    // Funds against a hostile host (DESIGN §13).
    /// The book is not the head the freshness witness acknowledged (an older one, or a sibling).
    pub const BOOK_ROLLBACK: &str = "book_rollback";
    /// The freshness witness did not answer: nothing moved, nothing is lost; retry.
    pub const WITNESS_UNAVAILABLE: &str = "witness_unavailable";
    /// The same owner request (nonce and body) is being carried out: ask again for its answer.
    pub const REQUEST_IN_PROGRESS: &str = "request_in_progress";
    /// An owner nonce already carried another request (another body).
    pub const IDEMPOTENCY_KEY_REUSED: &str = "idempotency_key_reused";
    /// The owner signed the request before this enclave was provisioned (its bundle's issuedAt).
    pub const REQUEST_PREDATES_BOOT: &str = "request_predates_boot";

    // x402 (the protocol's own reason codes, where it has them).
    pub const PAYMENT_REQUIRED: &str = "payment_required";
    pub const DUPLICATE_SETTLEMENT: &str = "duplicate_settlement";
    pub const INVALID_PAYMENT_REQUIREMENTS: &str = "invalid_payment_requirements";
    pub const X402_NOT_CONFIGURED: &str = "x402_not_configured";
    pub const FACILITATOR_UNREACHABLE: &str = "facilitator_unreachable";
    pub const FACILITATOR_ERROR: &str = "facilitator_error";

    /// Defines [`EnclaveCode`] from one list: each variant and its code, both ways.
    macro_rules! enclave_codes {
        ($($variant:ident = $code:ident,)*) => {
            /// The codes an enclave answers with, and the only ones a relay passes on (anything
            /// else becomes `enclave_error`). The enclave's error mapping can name no other code,
            /// so the two sides cannot drift apart.
            #[derive(Debug, Clone, Copy, PartialEq, Eq)]
            pub enum EnclaveCode { $($variant,)* }

            impl EnclaveCode {
                pub const fn as_str(self) -> &'static str {
                    match self { $(EnclaveCode::$variant => $code,)* }
                }

                /// The enclave code `code` is, if it is one.
                pub fn parse(code: &str) -> Option<Self> {
                    [$(EnclaveCode::$variant,)*].into_iter().find(|c| c.as_str() == code)
                }
            }
        };
    }

    enclave_codes! {
        BadRequest = BAD_REQUEST,
        GpuNotConfigured = GPU_NOT_CONFIGURED,
        GpuNotAttested = GPU_NOT_ATTESTED,
        InvalidEnvelope = INVALID_ENVELOPE,
        DecryptFailed = DECRYPT_FAILED,
        InvalidPrompt = INVALID_PROMPT,
        ReplayDetected = REPLAY_DETECTED,
        StaleTimestamp = STALE_TIMESTAMP,
        ModelError = MODEL_ERROR,
        ContextLengthExceeded = CONTEXT_LENGTH_EXCEEDED,
        Internal = INTERNAL,
        ModelMismatch = MODEL_MISMATCH,
        EnclaveBusy = ENCLAVE_BUSY,
        EnclaveTimeout = ENCLAVE_TIMEOUT,
        NotProvisioned = NOT_PROVISIONED,
        UnknownProvisioner = UNKNOWN_PROVISIONER,
        BadBundleSignature = BAD_BUNDLE_SIGNATURE,
        WrongEnclaveKey = WRONG_ENCLAVE_KEY,
        StaleBundle = STALE_BUNDLE,
        MalformedBundle = MALFORMED_BUNDLE,
        SealedObjectInvalid = SEALED_OBJECT_INVALID,
        UnknownObjectKind = UNKNOWN_OBJECT_KIND,
        SwapsNotConfigured = SWAPS_NOT_CONFIGURED,
        FundingNotFound = FUNDING_NOT_FOUND,
        FundingFailed = FUNDING_FAILED,
        FundingWrongPayer = FUNDING_WRONG_PAYER,
        FundingNotForThisSession = FUNDING_NOT_FOR_THIS_SESSION,
        FundingWrongMint = FUNDING_WRONG_MINT,
        FundingWrongAmount = FUNDING_WRONG_AMOUNT,
        RouterTransactionRefused = ROUTER_TRANSACTION_REFUSED,
        SlippageExceeded = SLIPPAGE_EXCEEDED,
        RouterError = ROUTER_ERROR,
        ChainUnreachable = CHAIN_UNREACHABLE,
        NothingToDo = NOTHING_TO_DO,
        InvalidField = INVALID_FIELD,
        OwnerSignatureRequired = OWNER_SIGNATURE_REQUIRED,
        OwnerSignatureInvalid = OWNER_SIGNATURE_INVALID,
        InsufficientPrivateBalance = INSUFFICIENT_PRIVATE_BALANCE,
        InsufficientPublicBalance = INSUFFICIENT_PUBLIC_BALANCE,
        ReservesShort = RESERVES_SHORT,
        BookStale = BOOK_STALE,
        PoolWarmingUp = POOL_WARMING_UP,
        PoolUnfunded = POOL_UNFUNDED,
        BookRollback = BOOK_ROLLBACK,
        IdempotencyKeyReused = IDEMPOTENCY_KEY_REUSED,
        RequestPredatesBoot = REQUEST_PREDATES_BOOT,
        RequestInProgress = REQUEST_IN_PROGRESS,
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn an_enclave_code_reads_back_and_a_relay_code_is_none() {
            for code in [EnclaveCode::BadRequest, EnclaveCode::BookRollback, EnclaveCode::RequestInProgress] {
                assert_eq!(EnclaveCode::parse(code.as_str()), Some(code));
            }
            assert_eq!(EnclaveCode::Internal.as_str(), "internal_error");
            assert_eq!(EnclaveCode::parse("book_rollback"), Some(EnclaveCode::BookRollback));
            // The relay's own codes are not the enclave's to send.
            for relay_only in [INSUFFICIENT_BALANCE, RATE_LIMITED, ENCLAVE_ERROR, "Book_Rollback", ""] {
                assert_eq!(EnclaveCode::parse(relay_only), None, "{relay_only}");
            }
        }
    }
}
