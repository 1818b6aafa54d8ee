//! Deposits: where to send tokens to fund a key, and what the relay has seen arrive.

use serde::Deserialize;

use crate::api::Client;
use crate::error::ClientError;

/// `GET /api/v1/deposits/address`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DepositAddress {
    pub key_id: String,
    /// The wallet whose token accounts receive deposits; its key is sealed in the enclave.
    pub owner: String,
    pub network: String,
    pub token_accounts: Vec<TokenAccount>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenAccount {
    pub mint: String,
    pub currency: String,
    pub token_account: String,
    pub min_amount: String,
}

/// One row of `GET /api/v1/deposits`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Deposit {
    pub signature: String,
    pub ix: i64,
    pub mint: String,
    pub currency: Option<String>,
    pub amount: String,
    /// `seen`, `finalized`, `credited` or `ignored`.
    pub state: String,
    pub reason: Option<String>,
    pub slot: i64,
    pub created_at: i64,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
struct DepositList {
    deposits: Vec<Deposit>,
}

impl Client {
    /// The key's deposit address (made by the enclave on first ask).
    pub async fn deposit_address(&self) -> Result<DepositAddress, ClientError> {
        self.get("/api/v1/deposits/address").await
    }

    /// The key's deposits, newest first.
    pub async fn deposits(&self, limit: u32) -> Result<Vec<Deposit>, ClientError> {
        Ok(self.get::<DepositList>(&format!("/api/v1/deposits?limit={limit}")).await?.deposits)
    }
}
