//! Session workers: each takes one session at a time under a lease, does one step of its
//! state machine (docs/swaps.md), saves, and lets it go. A step that signs records the signed
//! transaction before anything sends it; sending it again is harmless (same bytes), so a relay
//! killed at any point resends or rebuilds when it, or another relay, takes the session again.
//!
//! Every mode's sessions are advanced here: a one-shot swap's steps are in this file, a managed
//! wallet's credit and shield steps in `wallets/`. This module sits above `swaps/` and
//! `wallets/`; they share only `agents/` below them.
//!
//! A signed transaction is abandoned only when the chain says it cannot land: it failed on
//! chain, or its blockhash expired unseen. Until then it is resent, never replaced, so a
//! session never has two live transactions.

use std::time::Duration;

use axum::extract::FromRef;

use chain::{Chain, ChainError, Commitment, Confirmation};
use shared::swap::{SignedStep, StepAnswer, StepRequest};
use shared::wire::codes::EnclaveCode;

use crate::agents::Agents;
use crate::agents::sessions::{self, Pending, Session, state};
use crate::agents::step::{MAX_BACKOFF_SECS, Next, backoff, fail_to, refusal, refused_credit};
use crate::http::error::RelayError;
use crate::state::AgentsState;
use crate::swaps::enclave;
use crate::wallets::shield;

/// How often an idle worker looks for work (a funded session wakes one at once).
const IDLE_POLL: Duration = Duration::from_millis(250);
/// Wait after an outage (the enclave, the chain or the database did not answer). Outages do
/// not count as attempts: only refusals and failed transactions lead to a refund.
const OUTAGE_RETRY_SECS: i64 = 2;

/// The kinds of transaction a session signs.
mod kind {
    pub const SWAP: &str = "swap";
    pub const DELIVER: &str = "deliver";
    pub const REFUND: &str = "refund";
    pub const ENCRYPT: &str = crate::wallets::private::KIND_ENCRYPT;
    pub const FUND: &str = crate::wallets::private::KIND_FUND;
}

/// Starts the session workers, and the managed wallets' workers, of a relay with the Agent
/// Privacy API configured.
pub fn start(app: &crate::state::App) {
    let api = AgentsState::from_ref(app);
    if let Some(agents) = &api.agents {
        for _ in 0..agents.config.workers.max(1) {
            tokio::spawn(run(api.clone()));
        }
        crate::wallets::start(&api);
    }
}

pub async fn run(api: AgentsState) {
    let Some(agents) = api.agents.as_ref() else { return };
    let lease = agents.config.lease_secs as i64;
    loop {
        match sessions::claim(&api.store, crate::unix_now(), lease).await {
            Ok(Some(session)) => {
                advance(&api, agents, session).await;
                continue;
            }
            Ok(None) => {}
            Err(e) => tracing::warn!(error = %e, "could not look for swap work"),
        }
        tokio::select! {
            _ = agents.wake.notified() => {}
            _ = tokio::time::sleep(IDLE_POLL) => {}
        }
    }
}

async fn advance(api: &AgentsState, agents: &Agents, mut s: Session) {
    let before = s.state.clone();
    let next = match step(api, agents, &mut s).await {
        Ok(next) => next,
        Err(e) => {
            // The enclave, the chain or the database did not answer: the same step again,
            // later. Nothing was recorded, so nothing is lost.
            tracing::warn!(session = %s.id, state = %s.state, error = %e, "swap step will be retried");
            Next::Later(OUTAGE_RETRY_SECS)
        }
    };
    let now = crate::unix_now();
    let retry_at = match next {
        Next::Now => 0,
        Next::Later(secs) => now + secs,
    };
    let saved = match &s.wallet_id {
        Some(wallet_id) if before != s.state => save_announced(api, &s, wallet_id, &before, now, retry_at).await,
        _ => sessions::save(api.store.pool(), &s, now, retry_at).await.map_err(RelayError::from),
    };
    match saved {
        Ok(true) if before != s.state => {
            tracing::info!(session = %s.id, from = %before, to = %s.state, "swap session moved");
            crate::failpoint::hit(&format!("swap:saved:{}", s.state));
        }
        Ok(true) => {}
        Ok(false) => tracing::warn!(session = %s.id, "lost the session's lease; its next holder redoes the step"),
        Err(e) => tracing::error!(session = %s.id, error = %e, "swap session not saved; the step is redone"),
    }
}

/// Saves a wallet's session that changed state with its `session.<state>` webhook event, in
/// one database transaction (docs/wallets.md "Webhooks").
async fn save_announced(
    api: &AgentsState,
    s: &Session,
    wallet_id: &str,
    before: &str,
    now: i64,
    retry_at: i64,
) -> Result<bool, RelayError> {
    use crate::wallets::records;
    let text = |v: &Option<String>| v.clone().unwrap_or_default();
    let data = serde_json::json!({
        "sessionId": s.id, "walletId": wallet_id, "mode": s.mode, "state": s.state, "previousState": before,
        "reason": s.reason, "fundingTxSig": text(&s.funding_tx_sig), "swapTxSig": text(&s.swap_tx_sig),
        "finalTxSig": text(&s.final_tx_sig), "refundTxSig": text(&s.refund_tx_sig), "closeTxSig": text(&s.close_tx_sig),
        "actualOut": s.actual_out.map(|a| a.to_string()).unwrap_or_default(),
    });
    let event_type = format!("session.{}", s.state);
    records::retried(|| async {
        let mut tx = api.store.begin().await?;
        if !sessions::save(&mut *tx, s, now, retry_at).await? {
            return Ok(false);
        }
        records::write_event(&mut tx, wallet_id, &event_type, &data, crate::wallets::now_ms()).await?;
        tx.commit().await?;
        Ok(true)
    })
    .await
}

async fn step(api: &AgentsState, agents: &Agents, s: &mut Session) -> Result<Next, RelayError> {
    if s.pending.is_some() {
        return land(agents, s).await;
    }
    if s.mode == shield::MODE {
        return shield::step(api, agents, s).await;
    }
    match s.state.as_str() {
        state::AWAITING_FUNDING => expire(agents, s).await,
        state::FUNDED => swap(api, agents, s).await,
        state::SWAPPED => deliver(api, s).await,
        state::DELIVERED => attest(api, s).await,
        state::REFUNDING => refund(api, s).await,
        state::CREDITING => match crate::wallets::private::credit(api, s).await {
            Ok(()) => Ok(Next::Now),
            Err(e) => refused_credit(s, e),
        },
        // SWAPPING and DELIVERING always have a pending transaction; anything else is not
        // ours to move.
        _ => Ok(Next::Later(MAX_BACKOFF_SECS)),
    }
}

/// The enclave's step on this session's sealed key.
async fn ask(
    api: &AgentsState,
    s: &Session,
    request: impl FnOnce(String) -> StepRequest,
) -> Result<StepAnswer, RelayError> {
    let object = crate::enclaves::objects::load_named(&api.store, &s.object_id).await?;
    enclave::step(&api.enclaves, &request(object.blob)).await
}

/// Records a transaction the enclave signed, to be sent by the next step.
fn record(s: &mut Session, kind: &str, answer: StepAnswer) -> Result<(), RelayError> {
    let StepAnswer::Signed(SignedStep { transaction, signature, last_valid_block_height: height, .. }) = answer else {
        return Err(RelayError::EnclaveAnswer("the enclave's step answer is not a signed transaction"));
    };
    crate::failpoint::hit(&format!("swap:{kind}:signed"));
    match kind {
        kind::SWAP => s.swap_tx_sig = Some(signature.clone()),
        kind::DELIVER => s.final_tx_sig = Some(signature.clone()),
        _ => s.refund_tx_sig = Some(signature.clone()),
    }
    s.pending = Some(Pending { kind: kind.into(), transaction, signature, last_valid_block_height: height as i64 });
    Ok(())
}

/// An unfunded session past its expiry. Once the funding handed out can no longer land, a
/// session key that holds input anyway (funded, never executed) is refunded; else it failed.
async fn expire(agents: &Agents, s: &mut Session) -> Result<Next, RelayError> {
    let height = agents.chain.block_height().await.map_err(RelayError::Chain)?;
    if height <= s.funding_valid_height as u64 {
        return Ok(Next::Later(2));
    }
    let held = agents
        .chain
        .token_balance(&shared::swap::funding::token_account(&s.ephemeral, &s.order.from_mint))
        .await
        .map_err(RelayError::Chain)?;
    let next = if held.unwrap_or(0) > 0 { state::REFUNDING } else { state::FAILED };
    Ok(fail_to(s, next, sessions::EXPIRED))
}

async fn swap(api: &AgentsState, agents: &Agents, s: &mut Session) -> Result<Next, RelayError> {
    match ask(api, s, |blob| StepRequest::Swap { blob }).await {
        Ok(answer) => {
            record(s, kind::SWAP, answer)?;
            s.state = state::SWAPPING.into();
            Ok(Next::Now)
        }
        // The input is gone: a swap landed that was not recorded as landed. Deliver sweeps
        // whatever the key holds.
        Err(e) if refusal(&e) == Some(EnclaveCode::NothingToDo) => {
            s.state = state::SWAPPED.into();
            Ok(Next::Now)
        }
        Err(e) => match refusal(&e) {
            Some(
                code @ (EnclaveCode::RouterError
                | EnclaveCode::SlippageExceeded
                | EnclaveCode::RouterTransactionRefused),
            ) => {
                s.attempts += 1;
                let code = code.as_str();
                tracing::info!(session = %s.id, code, attempt = s.attempts, "the router's swap was refused");
                if s.attempts >= i64::from(agents.config.max_attempts) {
                    return Ok(fail_to(s, state::REFUNDING, code));
                }
                Ok(Next::Later(backoff(s.attempts)))
            }
            _ => Err(e),
        },
    }
}

async fn deliver(api: &AgentsState, s: &mut Session) -> Result<Next, RelayError> {
    match ask(api, s, |blob| StepRequest::Deliver { blob }).await {
        Ok(answer) => {
            record(s, kind::DELIVER, answer)?;
            s.state = state::DELIVERING.into();
            Ok(Next::Now)
        }
        Err(e) if refusal(&e) == Some(EnclaveCode::NothingToDo) => {
            Ok(fail_to(s, state::REFUNDING, "nothing_to_deliver"))
        }
        Err(e) => Err(e),
    }
}

async fn refund(api: &AgentsState, s: &mut Session) -> Result<Next, RelayError> {
    match ask(api, s, |blob| StepRequest::Refund { blob }).await {
        Ok(answer) => {
            record(s, kind::REFUND, answer)?;
            Ok(Next::Now)
        }
        // Nothing left to give back (an expired session whose funding never came, or a
        // refund that landed): the session ends, its reason kept.
        Err(e) if refusal(&e) == Some(EnclaveCode::NothingToDo) => {
            s.state = state::FAILED.into();
            Ok(Next::Now)
        }
        Err(e) => Err(e),
    }
}

/// Sends the recorded transaction (again) and waits for the chain's verdict.
async fn land(agents: &Agents, s: &mut Session) -> Result<Next, RelayError> {
    let pending = s.pending.clone().ok_or(RelayError::Internal("a session lacks its pending transaction"))?;
    let bytes = shared::b64::decode(&pending.transaction)
        .map_err(|_| RelayError::Internal("a stored transaction is not base64"))?;
    let wait = Duration::from_secs(agents.config.timeout_secs.min(agents.config.lease_secs / 2).max(1));
    let wait = match agents.chain.send_transaction(&bytes).await {
        Ok(_) | Err(ChainError::AlreadyProcessed) => wait,
        // Refused before broadcast (a failed simulation, a stale blockhash): it may still be
        // on chain from an earlier send, so ask, briefly.
        Err(ChainError::Unreachable(e)) => return Err(RelayError::Chain(ChainError::Unreachable(e))),
        Err(e) => {
            tracing::info!(session = %s.id, kind = %pending.kind, error = %e, "transaction refused by the node");
            Duration::from_secs(1)
        }
    };
    crate::failpoint::hit(&format!("swap:{}:sent", pending.kind));
    // The enclave credits a deposit into the pool only once it is finalized (DESIGN §13).
    let commitment = match pending.kind.as_str() {
        kind::ENCRYPT | shield::KIND_DEPOSIT => Commitment::Finalized,
        _ => Commitment::Confirmed,
    };
    let verdict =
        chain::confirm(&agents.chain, &pending.signature, pending.last_valid_block_height as u64, commitment, wait)
            .await
            .map_err(RelayError::Chain)?;
    if matches!(pending.kind.as_str(), shield::KIND_DEPOSIT | shield::KIND_DELIVER | shield::KIND_CLOSE) {
        return Ok(match verdict {
            Confirmation::TimedOut => Next::Later(1),
            landed => {
                s.pending = None;
                shield::after_landing(s, &pending.kind, matches!(landed, Confirmation::Confirmed))
            }
        });
    }
    match verdict {
        Confirmation::Confirmed => {
            s.pending = None;
            s.attempts = 0;
            s.state = match pending.kind.as_str() {
                kind::SWAP => state::SWAPPED,
                kind::DELIVER => state::DELIVERED,
                kind::ENCRYPT => state::CREDITING,
                kind::FUND => state::FUNDED,
                _ => state::FAILED,
            }
            .into();
            Ok(Next::Now)
        }
        Confirmation::Failed(_) | Confirmation::Expired => {
            tracing::info!(session = %s.id, kind = %pending.kind, ?verdict, "transaction did not land; rebuilding");
            s.pending = None;
            // An encrypt or a managed swap's funding is signed under the owner's one-time
            // signature: it is not rebuilt. The tokens never left the wallet; the owner asks again.
            match pending.kind.as_str() {
                kind::ENCRYPT => return Ok(fail_to(s, state::FAILED, "encrypt_failed")),
                kind::FUND => return Ok(fail_to(s, state::FAILED, "funding_failed")),
                _ => {}
            }
            s.attempts += 1;
            let exhausted = s.attempts >= i64::from(agents.config.max_attempts);
            match pending.kind.as_str() {
                kind::SWAP => {
                    s.swap_tx_sig = None;
                    if exhausted {
                        return Ok(fail_to(s, state::REFUNDING, "swap_failed"));
                    }
                    s.state = state::FUNDED.into();
                }
                kind::DELIVER => {
                    s.final_tx_sig = None;
                    if exhausted {
                        return Ok(fail_to(s, state::REFUNDING, "delivery_failed"));
                    }
                    s.state = state::SWAPPED.into();
                }
                // A refund is rebuilt until one lands.
                _ => s.refund_tx_sig = None,
            }
            Ok(Next::Later(backoff(s.attempts)))
        }
        Confirmation::TimedOut => Ok(Next::Later(1)),
    }
}

/// The enclave checks the delivery on chain and signs the receipt; the relay commits it.
async fn attest(api: &AgentsState, s: &mut Session) -> Result<Next, RelayError> {
    if s.attestation_tx_sig.is_none() {
        let (Some(funding), Some(last)) = (s.funding_tx_sig.clone(), s.final_tx_sig.clone()) else {
            return Err(RelayError::Internal("a settled session lacks its transactions"));
        };
        let answer =
            ask(api, s, |blob| StepRequest::Attest { blob, funding_tx_sig: funding, final_tx_sig: last }).await?;
        let StepAnswer::Attested { receipt, .. } = answer else {
            return Err(RelayError::EnclaveAnswer("the enclave's attest answer is not a receipt"));
        };
        if receipt.session_id != s.id || receipt.verify(api.receipts.commits.program_id()).is_err() {
            return Err(RelayError::EnclaveAnswer("the enclave's swap receipt does not verify"));
        }
        let commit = api.receipts.commits.commit_swap(&receipt, crate::unix_now()).await.map_err(|e| {
            tracing::error!(session = %s.id, error = %e, "swap receipt not committed");
            RelayError::Internal("a swap receipt was not committed")
        })?;
        crate::failpoint::hit("swap:receipt:committed");
        // The commit stored the receipt on the row; keep this copy in step with it.
        let stored =
            sessions::get(&api.store, &s.id).await?.ok_or(RelayError::Internal("a session vanished while worked"))?;
        s.receipt_json = stored.receipt_json;
        s.attestation_address = stored.attestation_address;
        s.attestation_tx_sig = Some(commit);
    }
    let receipt: shared::swap::SwapReceipt = serde_json::from_str(s.receipt_json.as_deref().unwrap_or_default())
        .map_err(|_| RelayError::Internal("a stored JSON value does not parse"))?;
    let actual_out = shared::amount::Amount::parse(&receipt.actual_out)
        .ok_or(RelayError::Internal("a stored receipt's actualOut is not an amount"))?;
    s.actual_out = Some(actual_out);
    s.state = state::SETTLED.into();
    s.reason = None;
    Ok(Next::Now)
}
