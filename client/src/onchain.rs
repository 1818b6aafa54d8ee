//! What a client checks on the chain itself, through an RPC node of its choosing
//! (`svc receipt --rpc`), for a relay in `solana` ledger mode (docs/log.md "Ledger writer"):
//! the receipt's commit and the newest anchor are transactions that landed without an error,
//! signed by the relay's ledger key, carrying this receipt's ciphertext hash and that anchor's
//! head hash. The relay's word is taken for nothing but where to look.

use chain::Chain;
use shared::address::Address;
use shared::keys::PromptHash;
use shared::tlog::wire::Anchor;

pub use shared::api::LedgerStatus;

use crate::api::Client;
use crate::error::ClientError;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OnChainError {
    #[error("the relay keeps an embedded ledger: nothing of it is on a chain")]
    Embedded,
    #[error("the commit has not landed on the chain yet (pending)")]
    Pending,
    #[error("the chain does not hold transaction {0}")]
    Missing(String),
    #[error("transaction {0} failed on the chain")]
    Failed(String),
    #[error("transaction {0} is not {1}")]
    NotIt(String, &'static str),
    #[error("RPC node: {0}")]
    Rpc(String),
}

impl Client {
    /// Where a receipt's commit is.
    pub async fn ledger_status(&self, address: &str) -> Result<LedgerStatus, ClientError> {
        self.get(&format!("/attestation/{address}/ledger")).await
    }
}

/// The wire bytes of `signature` as the chain holds it, if it landed without an error.
async fn landed<C: Chain>(chain: &C, signature: &str) -> Result<Vec<u8>, OnChainError> {
    match chain.transaction(signature).await.map_err(|e| OnChainError::Rpc(e.to_string()))? {
        None => Err(OnChainError::Missing(signature.into())),
        Some(t) if t.meta.as_ref().is_none_or(|m| m.err.is_some()) => Err(OnChainError::Failed(signature.into())),
        Some(t) => Ok(t.transaction),
    }
}

/// The receipt's commit on the chain: a commit of `prompt_hash` to `program_id`, paid and
/// signed by `ledger_key` (the relay's, as its log key and stored commits name it).
pub async fn check_commit<C: Chain>(
    chain: &C,
    status: &LedgerStatus,
    prompt_hash: &PromptHash,
    program_id: &Address,
    ledger_key: &[u8; 32],
) -> Result<String, OnChainError> {
    if status.ledger != "solana" {
        return Err(OnChainError::Embedded);
    }
    let signature =
        status.ledger_signature.clone().filter(|_| status.status == "landed").ok_or(OnChainError::Pending)?;
    let tx = landed(chain, &signature).await?;
    let commit = shared::ledger::parse_and_verify(&tx)
        .map_err(|_| OnChainError::NotIt(signature.clone(), "a signed receipt commit"))?;
    if commit.prompt_hash != *prompt_hash || commit.program_id != *program_id || commit.payer != *ledger_key {
        return Err(OnChainError::NotIt(signature, "this receipt's commit by this relay's ledger key"));
    }
    Ok(signature)
}

/// The anchor on the chain: a Memo of the anchor's head hash, signed by the log key.
pub async fn check_anchor<C: Chain>(chain: &C, anchor: &Anchor, log_key: &[u8; 32]) -> Result<String, OnChainError> {
    let signature = anchor.ledger_signature.clone().ok_or(OnChainError::Pending)?;
    let tx = landed(chain, &signature).await?;
    let memo = shared::ledger::anchor::parse_and_verify(&tx)
        .map_err(|_| OnChainError::NotIt(signature.clone(), "a signed anchor memo"))?;
    if memo.payer != *log_key || hex::encode(memo.sth_hash) != anchor.sth_hash {
        return Err(OnChainError::NotIt(signature, "this anchor's head by this log key"));
    }
    Ok(signature)
}
