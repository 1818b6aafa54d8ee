//! Receipts, version v2 (contract §2.6, DESIGN.md §4.5): the signed message, ed25519
//! signing and verification, and the lookup JSON.

use ed25519_dalek::{Signer, SigningKey};
use serde::{Deserialize, Serialize};

use crate::address::{Address, receipt_address};
use crate::b64;
#[cfg(feature = "ledger")]
use crate::keys::EnclaveKey;
use crate::keys::{ClientKey, PromptHash, TeeKey};

pub const VERSION: &str = "v2";
pub const MESSAGE_PREFIX: &[u8] = b"SVC-ATTEST-v2";

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ReceiptError {
    #[error("`{0}` is longer than 255 bytes")]
    FieldTooLong(&'static str),
    #[error("receipt version `{0}` is not v2")]
    WrongVersion(String),
    #[error("receipt field `{0}` is malformed")]
    Malformed(&'static str),
    #[error("receipt address does not match the ciphertext hash under this program id")]
    AddressMismatch,
    #[error("receipt signature does not verify against enclavePubkey")]
    BadSignature,
}

/// The values a receipt signs, in their raw form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReceiptBody {
    /// sha256 of the decoded HPKE ciphertext.
    pub prompt_hash: PromptHash,
    /// The enclave's X25519 key the envelope was sealed to.
    pub tee_pubkey: TeeKey,
    pub nonce: [u8; 16],
    /// HPKE `enc` of the envelope.
    pub client_pubkey: ClientKey,
    pub model: String,
    pub provider: String,
}

impl ReceiptBody {
    /// The exact signed byte string of contract §2.6.
    pub fn signed_message(&self) -> Result<Vec<u8>, ReceiptError> {
        let model = u8::try_from(self.model.len()).map_err(|_| ReceiptError::FieldTooLong("model"))?;
        let provider = u8::try_from(self.provider.len()).map_err(|_| ReceiptError::FieldTooLong("provider"))?;
        let mut m = Vec::with_capacity(MESSAGE_PREFIX.len() + 112 + 2 + self.model.len() + self.provider.len());
        m.extend_from_slice(MESSAGE_PREFIX);
        m.extend_from_slice(&self.prompt_hash.0);
        m.extend_from_slice(&self.tee_pubkey.0);
        m.extend_from_slice(&self.nonce);
        m.extend_from_slice(&self.client_pubkey.0);
        m.push(model);
        m.extend_from_slice(self.model.as_bytes());
        m.push(provider);
        m.extend_from_slice(self.provider.as_bytes());
        Ok(m)
    }
}

/// What the enclave knows beyond the signed body when it issues a receipt.
#[derive(Debug, Clone)]
pub struct ReceiptContext {
    pub program_id: Address,
    pub timestamp: u64,
    /// sha256 of the binding quote, or `None` when the enclave has no quote.
    pub tdx_quote_hash: Option<[u8; 32]>,
}

/// The receipt lookup JSON (DESIGN.md §4.5), also carried inside every encrypted reply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Receipt {
    pub version: String,
    pub address: String,
    pub encrypted_prompt_hash: String,
    pub tee_pubkey: String,
    pub nonce: String,
    pub client_pubkey: String,
    pub enclave_pubkey: String,
    pub enclave_sig_r: String,
    pub enclave_sig_s: String,
    pub model: String,
    pub provider: String,
    pub timestamp: u64,
    pub backend_saw_plaintext: bool,
    pub tee_processed: bool,
    pub tdx_quote_hash: String,
}

impl Receipt {
    /// Signs `body` with the enclave key and fills in the lookup JSON.
    pub fn issue(body: &ReceiptBody, key: &SigningKey, ctx: &ReceiptContext) -> Result<Self, ReceiptError> {
        let signature = key.sign(&body.signed_message()?).to_bytes();
        Ok(Receipt {
            version: VERSION.into(),
            address: receipt_address(&body.prompt_hash, &ctx.program_id).to_string(),
            encrypted_prompt_hash: hex::encode(body.prompt_hash.0),
            tee_pubkey: b64::encode(body.tee_pubkey.0),
            nonce: b64::encode(body.nonce),
            client_pubkey: b64::encode(body.client_pubkey.0),
            enclave_pubkey: b64::encode(key.verifying_key().as_bytes()),
            enclave_sig_r: b64::encode(&signature[..32]),
            enclave_sig_s: b64::encode(&signature[32..]),
            model: body.model.clone(),
            provider: body.provider.clone(),
            timestamp: ctx.timestamp,
            backend_saw_plaintext: false,
            tee_processed: true,
            tdx_quote_hash: ctx.tdx_quote_hash.map(hex::encode).unwrap_or_default(),
        })
    }

    /// Decodes every field strictly, re-derives the address under `program_id` and checks the
    /// signature. Returns the decoded body and the enclave's signing key on success.
    #[cfg(feature = "ledger")]
    pub fn verify(&self, program_id: &Address) -> Result<VerifiedReceipt, ReceiptError> {
        if self.version != VERSION {
            return Err(ReceiptError::WrongVersion(self.version.chars().take(16).collect()));
        }
        let prompt_hash = PromptHash(
            decode_hex32(&self.encrypted_prompt_hash).ok_or(ReceiptError::Malformed("encryptedPromptHash"))?,
        );
        let body = ReceiptBody {
            prompt_hash,
            tee_pubkey: TeeKey(b64::decode_array(&self.tee_pubkey).ok_or(ReceiptError::Malformed("teePubkey"))?),
            nonce: b64::decode_array(&self.nonce).ok_or(ReceiptError::Malformed("nonce"))?,
            client_pubkey: ClientKey(
                b64::decode_array(&self.client_pubkey).ok_or(ReceiptError::Malformed("clientPubkey"))?,
            ),
            model: self.model.clone(),
            provider: self.provider.clone(),
        };
        let enclave_pubkey =
            EnclaveKey(b64::decode_array(&self.enclave_pubkey).ok_or(ReceiptError::Malformed("enclavePubkey"))?);
        let r: [u8; 32] = b64::decode_array(&self.enclave_sig_r).ok_or(ReceiptError::Malformed("enclaveSigR"))?;
        let s: [u8; 32] = b64::decode_array(&self.enclave_sig_s).ok_or(ReceiptError::Malformed("enclaveSigS"))?;
        if !self.tdx_quote_hash.is_empty() && decode_hex32(&self.tdx_quote_hash).is_none() {
            return Err(ReceiptError::Malformed("tdxQuoteHash"));
        }
        let expected = receipt_address(&prompt_hash, program_id);
        if Address::parse(&self.address) != Some(expected) {
            return Err(ReceiptError::AddressMismatch);
        }
        let key = ed25519_dalek::VerifyingKey::from_bytes(&enclave_pubkey.0)
            .map_err(|_| ReceiptError::Malformed("enclavePubkey"))?;
        let mut sig = [0u8; 64];
        sig[..32].copy_from_slice(&r);
        sig[32..].copy_from_slice(&s);
        // verify_strict: refuses small-order keys and non-canonical signatures.
        key.verify_strict(&body.signed_message()?, &ed25519_dalek::Signature::from_bytes(&sig))
            .map_err(|_| ReceiptError::BadSignature)?;
        Ok(VerifiedReceipt { body, enclave_pubkey, address: expected })
    }
}

/// A receipt whose signature and address checked out.
#[cfg(feature = "ledger")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifiedReceipt {
    pub body: ReceiptBody,
    pub enclave_pubkey: EnclaveKey,
    pub address: Address,
}

/// Lowercase 64-character hex to 32 bytes.
pub fn decode_hex32(s: &str) -> Option<[u8; 32]> {
    if s.len() != 64 || s.bytes().any(|b| b.is_ascii_uppercase()) {
        return None;
    }
    let mut out = [0u8; 32];
    hex::decode_to_slice(s, &mut out).ok()?;
    Some(out)
}

// The tests verify what they issue.
#[cfg(all(test, feature = "ledger"))]
mod tests;
