//! Confirmation by polling signature statuses, with backoff bounded so a slow chain is not
//! hammered and a fast one is not kept waiting.

use std::time::Duration;

use tokio::time::Instant;

use crate::{Chain, ChainError, Commitment};

const FIRST_POLL: Duration = Duration::from_millis(20);
const MAX_POLL: Duration = Duration::from_millis(1000);

/// How a wait for a signature ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Confirmation {
    /// Reached the commitment asked for.
    Confirmed,
    /// Landed with an error (the node's JSON text of it).
    Failed(String),
    /// Never seen, and its blockhash is no longer valid: it cannot land any more.
    Expired,
    /// Neither within the time given; it may still land.
    TimedOut,
}

/// Polls until `signature` reaches `commitment`; see [`Chain::confirm`]. An unreachable node
/// is retried until the deadline; other errors are returned.
pub async fn confirm<C: Chain>(
    chain: &C,
    signature: &str,
    last_valid_block_height: u64,
    commitment: Commitment,
    timeout: Duration,
) -> Result<Confirmation, ChainError> {
    let deadline = Instant::now() + timeout;
    let signatures = [signature.to_string()];
    let mut wait = FIRST_POLL;
    loop {
        match poll(chain, &signatures, last_valid_block_height, commitment).await {
            Ok(Some(done)) => return Ok(done),
            Ok(None) | Err(ChainError::Unreachable(_)) => {}
            Err(e) => return Err(e),
        }
        let now = Instant::now();
        if now >= deadline {
            return Ok(Confirmation::TimedOut);
        }
        tokio::time::sleep(wait.min(deadline - now)).await;
        wait = (wait * 2).min(MAX_POLL);
    }
}

async fn poll<C: Chain>(
    chain: &C,
    signatures: &[String],
    last_valid_block_height: u64,
    commitment: Commitment,
) -> Result<Option<Confirmation>, ChainError> {
    let status = chain.signature_statuses(signatures).await?.into_iter().next().flatten();
    match status {
        Some(s) if s.err.is_some() => Ok(Some(Confirmation::Failed(s.err.unwrap_or_default()))),
        // A status without a level is only reported for very old, rooted transactions.
        Some(s) if s.confirmation_status.is_none_or(|level| level >= commitment) => Ok(Some(Confirmation::Confirmed)),
        // Landed but not yet at the level asked: it can no longer expire.
        Some(_) => Ok(None),
        None if chain.block_height().await? > last_valid_block_height => {
            // Read the status once more: it may have landed between the two reads.
            let again = chain.signature_statuses(signatures).await?.into_iter().next().flatten();
            Ok(if again.is_none() { Some(Confirmation::Expired) } else { None })
        }
        None => Ok(None),
    }
}
