//! The built-in facilitator: the `exact` scheme on Solana settled by this relay on its own
//! chain connection, with the behaviour of a facilitator's `/verify` and `/settle`
//! (`../shared/notes/protocols.md` §1.5) and no HTTP hop.
//!
//! Verify: the scheme's static checks (`shared::x402::check`), then the chain: the payer's
//! token account holds the amount and the pay-to token account exists. Settle: checks again,
//! adds the fee payer's signature, sends, and waits for `confirmed`. A send the chain refuses
//! maps to the reference reasons (`insufficient_funds`, `invalid_transaction_state` for an
//! expired blockhash, `duplicate_settlement` for a transaction already landed), and a
//! transaction that landed with an error is a failure: in each case no tokens moved.
//!
//! The fee payer key pays the network fee of each settlement; it holds SOL only and signs
//! nothing but payments that passed the checks (it appears in no instruction). Because the
//! payer writes the compute budget and the fee payer pays it, a payment whose unit limit ×
//! unit price comes to more than `x402.maxPriorityFeeLamports` (default 10,000) is refused,
//! as is a unit limit above what the scheme's instructions need (`shared::x402`): without
//! these one payment could cost the fee payer thousands of times its signature fee.

use std::path::Path;
use std::time::Duration;

use chain::{Chain, ChainError, Commitment, Confirmation, RpcChain};
use ed25519_dalek::SigningKey;
use serde_json::{Value, json};
use shared::address::Address;
use shared::x402::Accepted;
use zeroize::Zeroizing;

use super::facilitator::{FacilitatorError, Settled, Verdict};
use super::requirements::FeePayers;

/// The reason code of a payment whose compute budget would cost the fee payer more than the cap.
const PRIORITY_FEE_TOO_HIGH: &str = "invalid_exact_svm_payload_transaction_priority_fee_too_high";

/// What to tell the payer about a static refusal, where the code alone does not say it.
fn detail(reason: &str) -> Option<String> {
    (reason == "invalid_exact_svm_payload_transaction_instructions_compute_limit_too_high").then(|| {
        format!(
            "the payment's compute unit limit is above {}, more than the exact scheme's instructions need",
            shared::x402::MAX_COMPUTE_UNIT_LIMIT
        )
    })
}

/// How long a settlement waits for `confirmed` before its outcome is called unknown.
const CONFIRM_TIMEOUT: Duration = Duration::from_secs(60);
/// A blockhash is valid for 150 blocks after the one it names; a transaction not seen by
/// then (counted from the send) can no longer land.
const BLOCKHASH_VALIDITY: u64 = 151;

pub struct BuiltIn {
    fee_payer: SigningKey,
    chain: RpcChain,
    max_priority_fee_lamports: u64,
}

/// Why a payment is refused: the reference reason code, and what to tell the payer.
struct Refused {
    reason: String,
    detail: Option<String>,
}

/// A transaction the built-in facilitator signed and is about to send: recorded (durably, by
/// the caller) before it is sent, so its outcome can be looked up after a crash.
pub struct Signed {
    pub signature: String,
    wire: Vec<u8>,
    payer: String,
    network: String,
}

impl BuiltIn {
    /// Reads the fee payer's keypair file (Solana CLI format: a JSON array of 64 numbers, the
    /// secret then the public key) and connects to `rpc_url`.
    pub fn new(
        rpc_url: &str,
        fee_payer_key_file: &Path,
        max_priority_fee_lamports: u64,
        timeout: Duration,
    ) -> Result<Self, String> {
        let text = Zeroizing::new(
            std::fs::read_to_string(fee_payer_key_file)
                .map_err(|e| format!("x402.feePayerKeyFile {}: {e}", fee_payer_key_file.display()))?,
        );
        let bytes: Zeroizing<Vec<u8>> = Zeroizing::new(
            serde_json::from_str(&text).map_err(|_| "x402.feePayerKeyFile: expected a JSON array of 64 numbers")?,
        );
        let (secret, public) = match bytes.len() {
            64 => bytes.split_at(32),
            _ => return Err("x402.feePayerKeyFile: expected a JSON array of 64 numbers".into()),
        };
        let secret: Zeroizing<[u8; 32]> = Zeroizing::new(secret.try_into().map_err(|_| "x402.feePayerKeyFile")?);
        let fee_payer = SigningKey::from_bytes(&secret);
        if fee_payer.verifying_key().to_bytes() != public {
            return Err("x402.feePayerKeyFile: the public half does not match the secret".into());
        }
        let chain = match rpc_url.starts_with("https://") {
            true => RpcChain::with_tls(rpc_url, timeout, chain::web_pki()),
            false => RpcChain::new(rpc_url, timeout),
        }
        .map_err(|e| format!("x402.rpcUrl: {e}"))?
        .with_commitment(Commitment::Confirmed);
        Ok(BuiltIn { fee_payer, chain, max_priority_fee_lamports })
    }

    pub fn fee_payer(&self) -> Address {
        Address(self.fee_payer.verifying_key().to_bytes())
    }

    /// The same fee payer for both versions.
    pub fn fee_payers(&self) -> FeePayers {
        let key = self.fee_payer().to_string();
        FeePayers { v1: key.clone(), v2: key }
    }

    fn body(version: u8, payload: &Value, requirements: &Value) -> Value {
        json!({"x402Version": version, "paymentPayload": payload, "paymentRequirements": requirements})
    }

    /// The scheme's static checks, then this facilitator's cap on the fee it pays.
    fn accept(&self, version: u8, payload: &Value, requirements: &Value) -> Result<Accepted, Refused> {
        let accepted = shared::x402::check(&Self::body(version, payload, requirements), &self.fee_payer().0)
            .map_err(|r| Refused { reason: r.reason.into(), detail: detail(r.reason) })?;
        if accepted.priority_fee_lamports > self.max_priority_fee_lamports {
            return Err(Refused {
                reason: PRIORITY_FEE_TOO_HIGH.into(),
                detail: Some(format!(
                    "the payment's compute budget (unit limit × unit price) comes to {} lamports; this facilitator pays at most {}",
                    accepted.priority_fee_lamports, self.max_priority_fee_lamports
                )),
            });
        }
        Ok(accepted)
    }

    /// `/verify`: the static checks and the fee cap, then the balances on the chain.
    pub async fn verify(
        &self,
        version: u8,
        payload: &Value,
        requirements: &Value,
    ) -> Result<Verdict, FacilitatorError> {
        let accepted = match self.accept(version, payload, requirements) {
            Ok(a) => a,
            Err(Refused { reason, detail }) => return Ok(Verdict::Invalid { reason, detail }),
        };
        let unreachable = |_: ChainError| FacilitatorError::Unreachable;
        let held = self.chain.token_balance(&accepted.source).await.map_err(unreachable)?;
        if held.is_none_or(|h| h < accepted.amount) {
            return Ok(Verdict::Invalid { reason: "insufficient_funds".into(), detail: None });
        }
        if self.chain.token_balance(&accepted.destination).await.map_err(unreachable)?.is_none() {
            let reason = "invalid_exact_svm_payload_recipient_mismatch".into();
            return Ok(Verdict::Invalid { reason, detail: None });
        }
        Ok(Verdict::Valid { payer: accepted.payer })
    }

    /// Checks the payment again and adds the fee payer's signature; nothing is sent yet.
    pub fn sign(&self, version: u8, payload: &Value, requirements: &Value) -> Result<Signed, String> {
        let accepted = self.accept(version, payload, requirements).map_err(|r| r.reason)?;
        let mut tx = accepted.transaction;
        tx.sign(&[&self.fee_payer]).map_err(|_| "invalid_exact_svm_payload_missing_fee_payer".to_string())?;
        Ok(Signed { signature: tx.id(), wire: tx.serialize(), payer: accepted.payer, network: accepted.network })
    }

    /// `/settle` of a signed payment: sends it and waits until it is confirmed.
    pub async fn settle(&self, signed: &Signed) -> Result<Settled, FacilitatorError> {
        let failure = |reason: &str| Ok(Settled::Failure { reason: reason.to_string() });
        let height = self.chain.block_height().await.map_err(|_| FacilitatorError::Unreachable)?;
        match self.chain.send_transaction(&signed.wire).await {
            Ok(_) => crate::failpoint::hit("x402:sent"),
            Err(ChainError::InsufficientFunds(_)) => return failure("insufficient_funds"),
            Err(ChainError::BlockhashNotFound) => return failure("invalid_transaction_state"),
            Err(ChainError::AlreadyProcessed) => return failure("duplicate_settlement"),
            Err(ChainError::Unreachable(_)) => return Err(FacilitatorError::Unreachable),
            Err(e) => {
                tracing::info!(error = %e, "x402 settlement refused by the chain");
                return failure("invalid_transaction_state");
            }
        }
        self.outcome(signed, height + BLOCKHASH_VALIDITY).await
    }

    /// Waits for a sent payment's outcome.
    pub async fn outcome(&self, signed: &Signed, last_valid_block_height: u64) -> Result<Settled, FacilitatorError> {
        let done = self
            .chain
            .confirm(&signed.signature, last_valid_block_height, Commitment::Confirmed, CONFIRM_TIMEOUT)
            .await
            .map_err(|_| FacilitatorError::Unreachable)?;
        match done {
            Confirmation::Confirmed => Ok(Settled::Success {
                transaction: signed.signature.clone(),
                network: signed.network.clone(),
                payer: signed.payer.clone(),
            }),
            Confirmation::Failed(error) => {
                tracing::info!(%error, "x402 settlement landed with an error; nothing moved");
                let reason =
                    if error.contains("\"Custom\":1}") { "insufficient_funds" } else { "invalid_transaction_state" };
                Ok(Settled::Failure { reason: reason.into() })
            }
            Confirmation::Expired => Ok(Settled::Failure { reason: "invalid_transaction_state".into() }),
            // It may still land: the caller keeps the payment used and the signature recorded.
            Confirmation::TimedOut => Err(FacilitatorError::Unreachable),
        }
    }

    /// What became of a payment recorded as sent by a relay that stopped before it knew:
    /// `Some(true)` landed, `Some(false)` failed or can no longer land, `None` not yet known.
    pub async fn landed(&self, signature: &str, recorded_at: i64, now: i64) -> Result<Option<bool>, ChainError> {
        let status = self.chain.signature_statuses(&[signature.to_string()]).await?.into_iter().next().flatten();
        Ok(match status {
            Some(s) => Some(s.err.is_none()),
            // A blockhash lives about a minute on mainnet; two minutes without a trace is final.
            None if now - recorded_at > 120 => Some(false),
            None => None,
        })
    }
}
