//! Shield as the relay runs it (docs/wallets.md "Shield"): a session of mode `shield` whose
//! four transactions the enclave signs and the session worker lands, in this order:
//!
//! | state | what happens | next |
//! |---|---|---|
//! | `depositing` | the deposit (wallet → pool) is sent until the chain decides | `crediting`; `failed` (`deposit_failed`: nothing moved) |
//! | `crediting` | the enclave credits the deposit to the intermediate key | `mixing`, after a random delay |
//! | `mixing` | the enclave debits it and signs the hop (pool → intermediate key), stored with the book | `hopping` |
//! | `hopping` | the payout worker lands the hop (replaced if it cannot land) | `hopped`, after a random delay |
//! | `hopped` | the intermediate key's delivery is signed and sent | `delivered` |
//! | `delivered` | its close (rent and SOL back to the pool) is signed and sent | `settled` |
//!
//! Every step is redone safely: the enclave answers `nothing_to_do` for a step already done.

use serde_json::json;
use shared::address::Address;
use shared::privacy::WalletRequest;
use sqlx::Row;

use super::backend::PrivacyBackend;
use super::records::{Operation, Wallet};
use crate::agents::Agents;
use crate::agents::sessions::{Order, Pending, Session, state};
use crate::agents::step::Next;
use crate::http::error::RelayError;
use crate::state::AgentsState;
use crate::store::StoreError;

pub const MODE: &str = "shield";
/// What `estimatedSeconds` says (four transactions and two delays).
pub const SECONDS: u64 = 60;
/// Kinds of the transactions the session worker sends.
pub const KIND_DEPOSIT: &str = "deposit";
pub const KIND_DELIVER: &str = "shield_deliver";
pub const KIND_CLOSE: &str = "shield_close";

/// Starts a shield: the intermediate key and the signed deposit recorded on a new session,
/// with the `shield` audit entry and event, before anything sends it.
pub async fn start(
    api: &AgentsState,
    wallet: &Wallet,
    request: WalletRequest,
    (mint, amount, destination): (Address, u64, Address),
    kept: Option<&(String, String)>,
) -> Result<Session, RelayError> {
    let agents = api.configured()?;
    let (id, hop, deposit) = super::private::backend(api, agents).shield(request).await?;
    let hop_address = hop
        .public_key
        .as_deref()
        .and_then(Address::parse)
        .ok_or(RelayError::EnclaveAnswer("an intermediate key without its address"))?;
    let now = crate::unix_now();
    let session = Session {
        object_id: hop.id.clone(),
        ..super::private::moving_session(
            wallet,
            id,
            (MODE, state::DEPOSITING),
            (hop_address, Order::moving(wallet.address, (mint, amount), destination)),
            (KIND_DEPOSIT, deposit),
            now,
        )
    };
    if crate::enclaves::objects::load(&api.store, &hop.id).await?.is_none() {
        crate::enclaves::objects::insert(&api.store, &hop, now).await?;
    }
    let data = json!({"walletId": wallet.id, "sessionId": session.id, "mint": mint, "amount": session.order.amount,
                      "destinationPubkey": session.order.destination, "txSignature": session.funding_tx_sig});
    let op = Operation { kind: "shield", event_type: "wallet.shield", data };
    super::private::record_start(api, &session, &wallet.id, Some(op), kept.map(|k| ("shield", k))).await?;
    Ok(session)
}

/// One step of a shield session without a pending transaction (the worker lands those).
pub(crate) async fn step(api: &AgentsState, agents: &Agents, s: &mut Session) -> Result<Next, RelayError> {
    let backend = super::private::backend(api, agents);
    let hop = crate::enclaves::objects::load_named(&api.store, &s.object_id).await?;
    let delay = || agents.config.wallets.shield_delay();
    match s.state.as_str() {
        state::CREDITING => {
            let signature = super::private::funding_of(s)?;
            if let Err(e) = backend.shield_credit(&hop, &s.order.from_mint, &signature).await {
                return crate::agents::step::refused_credit(s, e);
            }
            s.state = state::MIXING.into();
            Ok(Next::Later(delay()))
        }
        state::MIXING => {
            // Recorded by an earlier attempt whose session save did not happen: the hop's row
            // says so (the enclave may have dropped the order from the book once it landed).
            if hop_payout(api, &s.id).await?.is_none() {
                let wallet = super::private::wallet_of(api, s).await?;
                backend.shield_hop(&wallet, &hop, &s.order.from_mint).await?;
                api.wallets.webhooks.wake.notify_one();
            }
            s.state = state::HOPPING.into();
            Ok(Next::Later(2))
        }
        state::HOPPING => {
            let (signature, landed) =
                hop_payout(api, &s.id).await?.ok_or(RelayError::Internal("a shield hop lacks its payout"))?;
            s.swap_tx_sig = Some(signature);
            match landed {
                true => {
                    s.state = state::HOPPED.into();
                    Ok(Next::Later(delay()))
                }
                false => Ok(Next::Later(2)),
            }
        }
        state::HOPPED | state::DELIVERED => {
            let close = s.state == state::DELIVERED;
            match backend.shield_leg(&hop, close).await? {
                Some(signed) => {
                    let kind = if close { KIND_CLOSE } else { KIND_DELIVER };
                    match close {
                        true => s.close_tx_sig = Some(signed.signature.clone()),
                        false => s.final_tx_sig = Some(signed.signature.clone()),
                    }
                    s.state = if close { state::CLOSING } else { state::DELIVERING }.into();
                    s.pending = Some(Pending {
                        kind: kind.into(),
                        transaction: signed.transaction,
                        signature: signed.signature,
                        last_valid_block_height: signed.last_valid_block_height as i64,
                    });
                }
                // Done before (a landed transaction this session did not see through).
                None if close => finish(s),
                None => s.state = state::DELIVERED.into(),
            }
            Ok(Next::Now)
        }
        _ => Ok(Next::Later(30)),
    }
}

/// Where a shield's transaction goes once the chain accepted it (`landed`) or cannot
/// (`landed` false: it is signed again, except the deposit, signed under the owner's one-time
/// signature: nothing moved, the owner asks again).
pub(crate) fn after_landing(s: &mut Session, kind: &str, landed: bool) -> Next {
    match (kind, landed) {
        (KIND_DEPOSIT, true) => s.state = state::CREDITING.into(),
        (KIND_DEPOSIT, false) => {
            s.state = state::FAILED.into();
            s.reason = Some("deposit_failed".into());
        }
        (KIND_DELIVER, true) => s.state = state::DELIVERED.into(),
        (KIND_DELIVER, false) => s.state = state::HOPPED.into(),
        (_, true) => finish(s),
        (_, false) => s.state = state::DELIVERED.into(),
    }
    Next::Now
}

fn finish(s: &mut Session) {
    s.state = state::SETTLED.into();
    s.actual_out = Some(s.order.amount);
    s.reason = None;
}

/// The hop's current payout signature and whether it landed (its withdrawal row), once
/// recorded.
async fn hop_payout(api: &AgentsState, order_id: &str) -> Result<Option<(String, bool)>, RelayError> {
    let row = sqlx::query("SELECT payout_sig, state FROM wallet_withdrawals WHERE order_id = $1")
        .bind(order_id)
        .fetch_optional(api.store.pool())
        .await
        .map_err(StoreError::from)?;
    let Some(row) = row else { return Ok(None) };
    let signature: String = row.try_get("payout_sig").map_err(StoreError::from)?;
    let state: String = row.try_get("state").map_err(StoreError::from)?;
    Ok(Some((signature, state == "landed")))
}
