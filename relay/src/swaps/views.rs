//! `GET /agents/v1/sessions/{id}` (contract §2.10) and `GET /agents/v1/attestations/{sessionId}`
//! (a settled session's enclave-signed receipt, its ledger address and explorer links).
//!
//! Public, as the contract shows them: a session id is a random uuid, known to whoever started
//! the session. Strings not known yet (signatures before they exist, `actualOut` before
//! settlement) are empty strings, so every contract field keeps its type; `walletId` is null
//! for one-shot sessions.

use axum::Json;
use axum::extract::{Path, State};
use serde::Serialize;
use shared::address::Address;
use shared::amount::Amount;
use shared::swap::SwapReceipt;

use super::params;
use crate::agents::sessions::{self, Session, state};
use crate::http::error::{ErrorBody, RelayError};
use crate::state::AgentsState;

/// Contract §2.10, then what a client needs to act on a session that did not settle.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionView {
    pub id: String,
    pub mode: String,
    pub state: String,
    #[schema(value_type = String)]
    pub ephemeral_pubkey: Address,
    pub wallet_id: Option<String>,
    #[schema(value_type = String)]
    pub from_mint: Address,
    #[schema(value_type = String)]
    pub to_mint: Address,
    #[schema(value_type = String)]
    pub amount_base_units: Amount,
    pub actual_out: String,
    #[schema(value_type = String)]
    pub destination_pubkey: Address,
    pub funding_tx_sig: String,
    pub final_tx_sig: String,
    pub attestation_pda: String,
    /// Why a session failed (`expired`, or the code of the step that failed; a refunded
    /// session says what was refunded in `refundTxSig`).
    pub reason: Option<String>,
    pub refund_tx_sig: String,
    pub swap_tx_sig: String,
    /// A shield's fourth transaction (its intermediate key's close); empty otherwise.
    pub close_tx_sig: String,
    #[schema(value_type = String)]
    pub expected_out: Amount,
    #[schema(value_type = String)]
    pub min_out: Amount,
    pub bucketed: bool,
    pub expires_at: String,
    pub created_at: String,
    pub updated_at: String,
}

impl From<&Session> for SessionView {
    fn from(s: &Session) -> Self {
        let text = |v: &Option<String>| v.clone().unwrap_or_default();
        let time = |t: i64| shared::time::rfc3339(t.max(0) as u64);
        SessionView {
            id: s.id.clone(),
            mode: s.mode.clone(),
            state: s.state.clone(),
            ephemeral_pubkey: s.ephemeral,
            wallet_id: s.wallet_id.clone(),
            from_mint: s.order.from_mint,
            to_mint: s.order.to_mint,
            amount_base_units: s.order.amount,
            actual_out: s.actual_out.map(|a| a.to_string()).unwrap_or_default(),
            destination_pubkey: s.order.destination,
            funding_tx_sig: text(&s.funding_tx_sig),
            final_tx_sig: text(&s.final_tx_sig),
            attestation_pda: text(&s.attestation_address),
            reason: s.reason.clone(),
            refund_tx_sig: text(&s.refund_tx_sig),
            swap_tx_sig: text(&s.swap_tx_sig),
            close_tx_sig: text(&s.close_tx_sig),
            expected_out: s.order.expected_out,
            min_out: s.order.min_out,
            bucketed: s.bucketed,
            expires_at: time(s.expires_at),
            created_at: time(s.created_at),
            updated_at: time(s.updated_at),
        }
    }
}

async fn load(api: &AgentsState, id: &str) -> Result<Session, RelayError> {
    let id = params::session_id(id)?;
    api.configured()?;
    sessions::get(&api.store, &id).await?.ok_or(RelayError::NotFound("no such session"))
}

#[utoipa::path(get, path = "/agents/v1/sessions/{id}", tag = "agents", summary = "A swap session (contract §2.10); poll until settled or failed",
    params(("id" = String, Path, description = "The session id (uuid)")),
    responses((status = 200, body = SessionView), (status = 404, body = ErrorBody), (status = 501, body = ErrorBody),
              (status = "default", body = ErrorBody)))]
pub async fn session(State(api): State<AgentsState>, Path(id): Path<String>) -> Result<Json<SessionView>, RelayError> {
    Ok(Json(SessionView::from(&load(&api, &id).await?)))
}

/// A settled session's proof.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AttestationView {
    pub session_id: String,
    /// The receipt's ledger address (`session_v1` seeds under the program id).
    pub attestation_pda: String,
    /// The commit of the receipt in the relay's ledger.
    pub attestation_tx_sig: String,
    /// Signed by the enclave key the client attested; `svc swap status` verifies it.
    pub receipt: SwapReceipt,
    pub swap: Snapshot,
    pub explorer: Links,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Snapshot {
    pub from_mint: String,
    pub to_mint: String,
    pub amount_in: String,
    pub actual_out: String,
    pub destination_pubkey: String,
    pub funding_tx_sig: String,
    pub final_tx_sig: String,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Links {
    pub funding_tx: String,
    pub final_tx: String,
    pub attestation: String,
}

#[utoipa::path(get, path = "/agents/v1/attestations/{sessionId}", tag = "agents",
    summary = "A settled session's enclave-signed receipt, its ledger address and explorer links",
    params(("sessionId" = String, Path, description = "The session id (uuid)")),
    responses((status = 200, body = AttestationView), (status = 404, body = ErrorBody), (status = 501, body = ErrorBody),
              (status = "default", body = ErrorBody)))]
pub async fn attestation(
    State(api): State<AgentsState>,
    Path(id): Path<String>,
) -> Result<Json<AttestationView>, RelayError> {
    let s = load(&api, &id).await?;
    let (Some(json), Some(address), Some(commit)) = (&s.receipt_json, &s.attestation_address, &s.attestation_tx_sig)
    else {
        let message = match s.state.as_str() {
            state::FAILED => "the session failed: it has no receipt",
            _ => "the session has not settled yet",
        };
        return Err(RelayError::NotFound(message));
    };
    let receipt: SwapReceipt =
        serde_json::from_str(json).map_err(|_| RelayError::Internal("a stored JSON value does not parse"))?;
    let agents = api.configured()?;
    let link = |signature: &str| agents.config.explorer_tx_url.replace("{signature}", signature);
    Ok(Json(AttestationView {
        session_id: s.id.clone(),
        attestation_pda: address.clone(),
        attestation_tx_sig: commit.clone(),
        swap: Snapshot {
            from_mint: receipt.from_mint.clone(),
            to_mint: receipt.to_mint.clone(),
            amount_in: receipt.amount_in.clone(),
            actual_out: receipt.actual_out.clone(),
            destination_pubkey: receipt.destination.clone(),
            funding_tx_sig: receipt.funding_tx_sig.clone(),
            final_tx_sig: receipt.final_tx_sig.clone(),
        },
        explorer: Links {
            funding_tx: link(&receipt.funding_tx_sig),
            final_tx: link(&receipt.final_tx_sig),
            attestation: api.receipts.commits.explorer_url(&api.public_url, commit),
        },
        receipt,
    }))
}
