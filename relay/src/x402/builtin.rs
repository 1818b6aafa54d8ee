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
//! nothing but payments that passed the checks (it appears in no instruction).

use std::path::Path;
use std::time::Duration;

use chain::{Chain, ChainError, Commitment, Confirmation, RpcChain};
use ed25519_dalek::SigningKey;
use serde_json::{Value, json};
use shared::address::Address;
use zeroize::Zeroizing;

use super::facilitator::{FacilitatorError, Settled, Verdict};
use super::requirements::FeePayers;

/// How long a settlement waits for `confirmed` before its outcome is called unknown.
const CONFIRM_TIMEOUT: Duration = Duration::from_secs(60);
/// A blockhash is valid for 150 blocks after the one it names; a transaction not seen by
/// then (counted from the send) can no longer land.
const BLOCKHASH_VALIDITY: u64 = 151;

pub struct BuiltIn {
    fee_payer: SigningKey,
    chain: RpcChain,
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
    pub fn new(rpc_url: &str, fee_payer_key_file: &Path, timeout: Duration) -> Result<Self, String> {
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
            true => RpcChain::with_tls(rpc_url, timeout, agent::tools::web_pki_tls()),
            false => RpcChain::new(rpc_url, timeout),
        }
        .map_err(|e| format!("x402.rpcUrl: {e}"))?
        .with_commitment(Commitment::Confirmed);
        Ok(BuiltIn { fee_payer, chain })
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

    /// `/verify`: the static checks, then the balances on the chain.
    pub async fn verify(
        &self,
        version: u8,
        payload: &Value,
        requirements: &Value,
    ) -> Result<Verdict, FacilitatorError> {
        let accepted = match shared::x402::check(&Self::body(version, payload, requirements), &self.fee_payer().0) {
            Ok(a) => a,
            Err(refusal) => return Ok(Verdict::Invalid { reason: refusal.reason.to_string() }),
        };
        let unreachable = |_: ChainError| FacilitatorError::Unreachable;
        let held = self.chain.token_balance(&accepted.source).await.map_err(unreachable)?;
        if held.is_none_or(|h| h < accepted.amount) {
            return Ok(Verdict::Invalid { reason: "insufficient_funds".into() });
        }
        if self.chain.token_balance(&accepted.destination).await.map_err(unreachable)?.is_none() {
            return Ok(Verdict::Invalid { reason: "invalid_exact_svm_payload_recipient_mismatch".into() });
        }
        Ok(Verdict::Valid { payer: accepted.payer })
    }

    /// Checks the payment again and adds the fee payer's signature; nothing is sent yet.
    pub fn sign(&self, version: u8, payload: &Value, requirements: &Value) -> Result<Signed, String> {
        let accepted = shared::x402::check(&Self::body(version, payload, requirements), &self.fee_payer().0)
            .map_err(|r| r.reason.to_string())?;
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
