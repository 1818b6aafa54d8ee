//! `GET /api/v1/deposits/address` and `GET /api/v1/deposits` (scope `account`).

use std::collections::HashMap;
use std::sync::Arc;

use axum::Json;
use axum::extract::{Query, State};
use serde::Serialize;

use shared::api::{DepositAddress, TokenAccount};

use super::Deposits;
use super::addresses;
use super::records::{self, DepositRecord};
use crate::accounts::keys::{Account, Authorized};
use crate::http::error::{ErrorBody, RelayError};

#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DepositList {
    pub key_id: String,
    pub deposits: Vec<DepositRecord>,
}

fn enabled(deposits: &Deposits) -> Result<(), RelayError> {
    match deposits.config.enabled() {
        true => Ok(()),
        false => Err(RelayError::NotFound("deposits are not configured on this relay")),
    }
}

#[utoipa::path(get, path = "/api/v1/deposits/address", tag = "billing",
    summary = "The key's deposit address: a wallet whose key only the enclave holds, and its token account per accepted mint",
    security(("ApiKey" = [])),
    responses((status = 200, body = DepositAddress), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
              (status = 404, description = "Deposits are not configured", body = ErrorBody), (status = "default", body = ErrorBody)))]
pub async fn address(
    State(deposits): State<Arc<Deposits>>,
    Authorized { caller, .. }: Authorized<Account>,
) -> Result<Json<DepositAddress>, RelayError> {
    let key_id = caller.key_id;
    enabled(&deposits)?;
    let owner = addresses::owner_of(&deposits, &key_id).await?;
    let token_accounts = deposits
        .config
        .accepted()
        .into_iter()
        .map(|(mint, m)| TokenAccount {
            mint,
            currency: m.currency.clone(),
            token_account: shared::swap::funding::token_account(&owner, &mint),
            min_amount: shared::amount::Amount(m.min_amount),
        })
        .collect();
    let network = deposits.config.network.clone().unwrap_or_else(|| "mainnet".into());
    Ok(Json(DepositAddress { key_id, owner: owner.to_string(), network, token_accounts }))
}

#[utoipa::path(get, path = "/api/v1/deposits", tag = "billing", summary = "The key's deposits, newest first, with their state",
    security(("ApiKey" = [])), params(("limit" = Option<u32>, Query, description = "1 to 200 (default 50)", minimum = 1, maximum = 200)),
    responses((status = 200, body = DepositList), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
              (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = "default", body = ErrorBody)))]
pub async fn list(
    State(deposits): State<Arc<Deposits>>,
    Authorized { caller, .. }: Authorized<Account>,
    Query(query): Query<HashMap<String, String>>,
) -> Result<Json<DepositList>, RelayError> {
    let key_id = caller.key_id;
    enabled(&deposits)?;
    let limit = match query.get("limit") {
        None => 50,
        Some(l) => l
            .parse::<i64>()
            .ok()
            .filter(|l| (1..=200).contains(l))
            .ok_or_else(|| RelayError::BadRequest("limit must be an integer between 1 and 200".into()))?,
    };
    let deposits = records::of_key(&deposits.store, &key_id, limit).await?;
    Ok(Json(DepositList { key_id, deposits }))
}
