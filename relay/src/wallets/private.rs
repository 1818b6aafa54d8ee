//! Encrypt and withdraw as the relay runs them over the privacy back end (docs/wallets.md).
//!
//! - Encrypt is a session of mode `encrypt`: the enclave checks the owner's signature and signs
//!   the transaction at once (in the request), the session records it before anything sends
//!   it, the session worker lands it and then has it credited. A transaction that cannot land
//!   fails the session; the tokens never left the wallet, and a new request (a new owner
//!   signature) starts again.
//! - Withdraw is answered in the request: the debit, the order and the payout are stored in one
//!   database transaction before the payout is sent; the payout worker resends pending payouts
//!   until one lands, asking the enclave for a new payout of the same order when the last one
//!   can no longer land.

use std::time::Duration;

use chain::{Chain, ChainError, Commitment, Confirmation};
use serde_json::json;
use shared::address::Address;
use shared::privacy::{OwnerAuth, SignedTx, WalletRequest};
use sqlx::Row;

use super::backend::{EnclavePoolBackend, PrivacyBackend, Withdrawal};
use super::records::{self, Wallet};
use crate::agents::Agents;
use crate::agents::sessions::{self, Order, Pending, Session, state};
use crate::http::error::RelayError;
use crate::state::AgentsState;
use crate::store::StoreError;

pub const MODE_ENCRYPT: &str = "encrypt";
pub const KIND_ENCRYPT: &str = "encrypt";
/// What `estimatedSeconds` says for an encrypt (one transaction).
pub const ENCRYPT_SECONDS: u64 = 10;
/// How often the payout worker looks for pending payouts.
const PAYOUT_POLL: Duration = Duration::from_secs(2);

pub fn backend<'a>(api: &'a AgentsState, agents: &'a Agents) -> EnclavePoolBackend<'a> {
    EnclavePoolBackend {
        store: &api.store,
        enclaves: &api.enclaves,
        books_lock: &api.wallets.books,
        witness: Some(&api.wallets.witness),
        witness_wait: Duration::from_secs(agents.config.wallets.witness_wait_secs),
    }
}

/// The request as the enclave takes it: the wallet's sealed key, the caller's exact body and
/// the owner's signature headers, if sent.
pub async fn wallet_request(
    api: &AgentsState,
    wallet: &Wallet,
    body: &[u8],
    auth: Option<OwnerAuth>,
) -> Result<WalletRequest, RelayError> {
    let object = crate::enclaves::objects::load_named(&api.store, &wallet.object_id).await?;
    Ok(WalletRequest { wallet: object.blob, body: shared::b64::encode(body), auth })
}

/// Starts an encrypt: the signed transaction recorded on a new session (its id the request's),
/// which the worker sends.
pub async fn start_encrypt(
    api: &AgentsState,
    wallet: &Wallet,
    request: WalletRequest,
    (mint, amount): (Address, u64),
    kept: Option<&(String, String)>,
) -> Result<Session, RelayError> {
    let agents = api.configured()?;
    let (id, signed): (String, SignedTx) = backend(api, agents).encrypt(request).await?;
    let pool = super::backend::pool_address(&api.store)
        .await?
        .as_deref()
        .and_then(Address::parse)
        .ok_or(RelayError::Internal("the pool's address is not recorded"))?;
    let now = crate::unix_now();
    let order = Order::moving(wallet.address, (mint, amount), pool);
    let session = moving_session(
        wallet,
        id,
        (MODE_ENCRYPT, state::ENCRYPTING),
        (wallet.address, order),
        (KIND_ENCRYPT, signed),
        now,
    );
    // The `encrypt` audit entry is written with the credit.
    record_start(api, &session, &wallet.id, None, kept.map(|k| ("encrypt", k))).await?;
    Ok(session)
}

/// A session of `wallet`'s that moves tokens unchanged (an encrypt or a shield, `order`) from
/// `from` (the wallet, or a shield's intermediate key), in its first state, with the
/// transaction the enclave signed for it recorded (as its funding and as pending, `kind`)
/// before anything sends it.
pub(crate) fn moving_session(
    wallet: &Wallet,
    id: String,
    (mode, first): (&str, &str),
    (from, order): (Address, Order),
    (kind, signed): (&str, SignedTx),
    now: i64,
) -> Session {
    Session {
        wallet_id: Some(wallet.id.clone()),
        owner: Some(wallet.key_id.clone()),
        expires_at: now + 3600,
        funding_valid_height: signed.last_valid_block_height as i64,
        object_id: wallet.object_id.clone(),
        commitment_json: "{}".into(),
        funding_tx_sig: Some(signed.signature.clone()),
        pending: Some(Pending {
            kind: kind.into(),
            transaction: signed.transaction,
            signature: signed.signature,
            last_valid_block_height: signed.last_valid_block_height as i64,
        }),
        funded_at: Some(now),
        ..Session::new(id, (mode, first), order, from, now)
    }
}

/// The `mode` of a managed swap's session, and the kind of its funding transaction.
pub const MODE_MANAGED: &str = "managed";
pub const KIND_FUND: &str = "fund";

/// Starts a managed swap: the session the back end opened and its signed funding recorded (the
/// session row, its sealed key, the `swap` audit entry and event) before the worker sends it.
/// From the funding on, the session is a one-shot session paid by the wallet: same states,
/// same receipt, refunds to the wallet.
pub async fn start_swap(
    api: &AgentsState,
    wallet: &Wallet,
    request: WalletRequest,
    slippage_bps: u16,
    kept: Option<&(String, String)>,
) -> Result<Session, RelayError> {
    let agents = api.configured()?;
    let (opened, funding) = backend(api, agents).swap(request).await?;
    let not_this_wallets = || RelayError::EnclaveAnswer("the enclave's managed swap session is not this wallet's");
    let terms = opened.commitment.verify().map_err(|_| not_this_wallets())?;
    if terms.payer != wallet.address {
        return Err(not_this_wallets());
    }
    let ephemeral = Address::parse(&opened.commitment.ephemeral_pubkey)
        .ok_or(RelayError::EnclaveAnswer("the enclave's session key is not base58"))?;
    let now = crate::unix_now();
    let order = Order::of_terms(&terms, slippage_bps, terms.min_out);
    let session = Session {
        wallet_id: Some(wallet.id.clone()),
        owner: Some(wallet.key_id.clone()),
        expires_at: terms.expires_at as i64,
        funding_valid_height: funding.last_valid_block_height as i64,
        object_id: opened.object.id.clone(),
        commitment_json: serde_json::to_string(&opened.commitment)
            .map_err(|_| RelayError::Internal("a value did not serialize"))?,
        funding_tx_sig: Some(funding.signature.clone()),
        pending: Some(Pending {
            kind: KIND_FUND.into(),
            transaction: funding.transaction,
            signature: funding.signature.clone(),
            last_valid_block_height: funding.last_valid_block_height as i64,
        }),
        funded_at: Some(now),
        ..Session::new(
            opened.commitment.terms.session_id.clone(),
            (MODE_MANAGED, state::FUNDING),
            order,
            ephemeral,
            now,
        )
    };
    if crate::enclaves::objects::load(&api.store, &opened.object.id).await?.is_none() {
        crate::enclaves::objects::insert(&api.store, &opened.object, now).await?;
    }
    // The session (which holds the signed funding) and its audit entry, at once.
    let o = &session.order;
    let data = json!({"walletId": wallet.id, "sessionId": session.id, "fromMint": o.from_mint, "toMint": o.to_mint,
                      "amount": o.amount, "destination": o.destination, "minOut": o.min_out,
                      "txSignature": funding.signature});
    let op = records::Operation { kind: "swap", event_type: "wallet.swap", data };
    record_start(api, &session, &wallet.id, Some(op), kept.map(|k| ("swap", k))).await?;
    Ok(session)
}

/// The answer a started session gets (and keeps under its owner nonce).
pub fn session_answer(session: &Session, estimated_seconds: u64) -> serde_json::Value {
    json!({"sessionId": session.id, "status": "running", "estimatedSeconds": estimated_seconds})
}

/// Records a wallet's new session, which holds its first signed transaction, with the
/// operation's audit entry and event, and (owner-signed) the answer kept under its nonce, in
/// one database transaction; then wakes a worker to send it. Nothing is sent before this
/// commits. The same session again (a retry the enclave answered with the same transaction)
/// is not recorded twice.
pub(super) async fn record_start(
    api: &AgentsState,
    session: &Session,
    wallet_id: &str,
    op: Option<records::Operation>,
    kept: Option<(&str, &(String, String))>,
) -> Result<(), RelayError> {
    let seconds = match session.mode.as_str() {
        MODE_ENCRYPT => ENCRYPT_SECONDS,
        super::shield::MODE => super::shield::SECONDS,
        _ => api.configured()?.config.expected_seconds,
    };
    let answer = session_answer(session, seconds);
    let recorded = records::retried(|| async {
        let mut tx = api.store.begin().await?;
        let exists = sqlx::query("SELECT id FROM swap_sessions WHERE id = $1")
            .bind(&session.id)
            .fetch_optional(&mut *tx)
            .await?;
        if exists.is_some() {
            return Ok(false);
        }
        sessions::insert(&mut *tx, session).await?;
        if let Some(op) = &op {
            records::write_operation(&mut tx, wallet_id, op, super::now_ms()).await?;
        }
        if let Some((operation, (nonce, body_sha256))) = kept {
            let kept = super::requests::Kept {
                wallet_id,
                nonce,
                operation,
                body_sha256,
                request_id: &session.id,
                answer: &answer,
            };
            kept.insert(&mut tx).await?;
        }
        tx.commit().await?;
        Ok(true)
    })
    .await?;
    if recorded {
        api.configured()?.wake.notify_one();
    }
    Ok(())
}

/// The wallet a wallet's session moves from.
pub(crate) async fn wallet_of(api: &AgentsState, s: &Session) -> Result<Wallet, RelayError> {
    let id = s.wallet_id.as_deref().ok_or(RelayError::Internal("a wallet session lacks its wallet"))?;
    records::get(&api.store, id).await?.ok_or(RelayError::Internal("a session's wallet vanished"))
}

/// The signature of a wallet session's first transaction, recorded when it started.
pub(crate) fn funding_of(s: &Session) -> Result<String, RelayError> {
    s.funding_tx_sig.clone().ok_or(RelayError::Internal("a session lacks its funding signature"))
}

/// The worker's step of an encrypt session whose transaction landed: the credit, with the
/// audit entry and event written with the book.
pub async fn credit(api: &AgentsState, s: &mut Session) -> Result<(), RelayError> {
    let agents = api.configured()?;
    let wallet = wallet_of(api, s).await?;
    let signature = funding_of(s)?;
    let data = json!({"walletId": wallet.id, "sessionId": s.id, "mint": s.order.from_mint, "amount": s.order.amount,
                      "txSignature": signature});
    backend(api, agents).credit(&wallet, &s.order.from_mint, &signature, data).await?;
    s.final_tx_sig = Some(signature);
    s.actual_out = Some(s.order.amount);
    s.state = state::SETTLED.into();
    s.reason = None;
    api.wallets.webhooks.wake.notify_one();
    Ok(())
}

/// A withdrawal: debited and recorded, then sent and awaited for a bounded time (the payout
/// worker carries on if it has not landed by then).
pub async fn withdraw(
    api: &AgentsState,
    wallet: &Wallet,
    mint: &Address,
    request: WalletRequest,
    kept: Option<(String, String)>,
) -> Result<(Withdrawal, bool), RelayError> {
    let agents = api.configured()?;
    let withdrawal = backend(api, agents).withdraw(wallet, mint, request, kept).await?;
    api.wallets.webhooks.wake.notify_one();
    crate::failpoint::hit("privacy:withdraw:recorded");
    let wait = Duration::from_secs(agents.config.timeout_secs.max(1));
    let order = &withdrawal.order;
    let landed = matches!(land(api, agents, &order.mint, &order.order_id, &withdrawal.payout, wait).await, Ok(true));
    Ok((withdrawal, landed))
}

/// Sends a recorded payout (again) and waits for the chain's verdict, then records it. True
/// when it landed. One that can no longer land is replaced by a new payout of the same order
/// (sent on the worker's next round).
async fn land(
    api: &AgentsState,
    agents: &Agents,
    mint: &Address,
    order_id: &str,
    payout: &SignedTx,
    wait: Duration,
) -> Result<bool, RelayError> {
    let bytes = shared::b64::decode(&payout.transaction)
        .map_err(|_| RelayError::Internal("a stored transaction is not base64"))?;
    match agents.chain.send_transaction(&bytes).await {
        Ok(_) | Err(ChainError::AlreadyProcessed) => {}
        Err(ChainError::Unreachable(e)) => return Err(RelayError::Chain(ChainError::Unreachable(e))),
        Err(e) => tracing::info!(order = order_id, error = %e, "payout refused by the node; asking for its status"),
    }
    let verdict =
        chain::confirm(&agents.chain, &payout.signature, payout.last_valid_block_height, Commitment::Confirmed, wait)
            .await
            .map_err(RelayError::Chain)?;
    match verdict {
        Confirmation::Confirmed => {
            sqlx::query(
                "UPDATE wallet_withdrawals SET state = 'landed', updated_at = $1 WHERE order_id = $2 AND payout_sig = $3",
            )
            .bind(crate::unix_now())
            .bind(order_id)
            .bind(&payout.signature)
            .execute(api.store.pool())
            .await
            .map_err(StoreError::from)?;
            Ok(true)
        }
        Confirmation::TimedOut => Ok(false),
        Confirmation::Failed(_) | Confirmation::Expired => {
            tracing::warn!(order = order_id, ?verdict, "a payout cannot land; asking the enclave for a new one");
            match backend(api, agents).repay(mint, order_id).await {
                Ok(Some(_)) => Ok(false),
                Ok(None) => Ok(true),
                // Its payout can still land after all (seen by the enclave's node): wait.
                Err(RelayError::Enclave { code: Some(shared::wire::codes::EnclaveCode::NothingToDo), .. }) => Ok(false),
                Err(e) => Err(e),
            }
        }
    }
}

/// Whether the order's payout was seen landed.
pub async fn order_landed(api: &AgentsState, order_id: &str) -> Result<bool, RelayError> {
    let row = sqlx::query("SELECT state FROM wallet_withdrawals WHERE order_id = $1")
        .bind(order_id)
        .fetch_optional(api.store.pool())
        .await
        .map_err(StoreError::from)?;
    let state: Option<String> = row.map(|r| r.try_get("state")).transpose().map_err(StoreError::from)?;
    Ok(state.as_deref() == Some("landed"))
}

/// How often stored book steps are looked at for an answer to carry on (a relay that died
/// mid-step, a witness that answered late).
const STEPS_POLL: Duration = Duration::from_secs(2);

/// Finishes book steps the witness answered after their request gave up or the relay died.
pub async fn run_book_steps(api: AgentsState) {
    let Some(agents) = api.agents.as_ref() else { return };
    loop {
        if let Err(e) = backend(&api, agents).recover().await {
            tracing::warn!(error = %e, "could not look at stored book steps");
        }
        let _ = tokio::time::timeout(STEPS_POLL, api.wallets.witness.answered.notified()).await;
    }
}

/// Resends pending payouts until each has a verdict (a relay killed after recording one).
pub async fn run_payouts(api: AgentsState) {
    let Some(agents) = api.agents.as_ref() else { return };
    loop {
        tokio::time::sleep(PAYOUT_POLL).await;
        let rows = sqlx::query(
            "SELECT order_id, mint, payout_tx, payout_sig, last_valid_height FROM wallet_withdrawals \
             WHERE state = 'pending' AND updated_at <= $1 ORDER BY updated_at LIMIT 16",
        )
        .bind(crate::unix_now() - 2)
        .fetch_all(api.store.pool())
        .await;
        let rows = match rows {
            Ok(rows) => rows,
            Err(e) => {
                tracing::warn!(error = %e, "could not look for pending payouts");
                continue;
            }
        };
        for row in rows {
            let read = || -> Result<(String, Address, SignedTx), StoreError> {
                Ok((
                    row.try_get("order_id")?,
                    Address::parse(&row.try_get::<String, _>("mint")?).ok_or(StoreError::Corrupt("a payout's mint"))?,
                    SignedTx {
                        transaction: row.try_get("payout_tx")?,
                        signature: row.try_get("payout_sig")?,
                        last_valid_block_height: row.try_get::<i64, _>("last_valid_height")? as u64,
                    },
                ))
            };
            let (order_id, mint, payout) = match read() {
                Ok(read) => read,
                Err(e) => {
                    tracing::error!(error = %e, "a pending payout's row does not read");
                    continue;
                }
            };
            if let Err(e) = land(&api, agents, &mint, &order_id, &payout, Duration::from_secs(5)).await {
                tracing::warn!(order = %order_id, error = %e, "payout not sent yet");
            }
        }
    }
}
