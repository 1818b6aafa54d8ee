//! Deposits: where to send tokens to fund a key, and what the relay has seen arrive.

use chain::{Chain, RpcChain};
use ed25519_dalek::SigningKey;
use serde::{Deserialize, Serialize};
use shared::address::Address;
use shared::solana::{Message, Transaction, associated_token, token};

pub use shared::api::{DepositAddress, TokenAccount};

use crate::api::Client;
use crate::error::ClientError;

/// One row of `GET /api/v1/deposits`.
#[derive(Debug, Clone, Serialize, Deserialize)]
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
        self.get_with_key("/api/v1/deposits/address").await
    }

    /// The key's deposits, newest first.
    pub async fn deposits(&self, limit: u32) -> Result<Vec<Deposit>, ClientError> {
        Ok(self.get_with_key::<DepositList>(&format!("/api/v1/deposits?limit={limit}")).await?.deposits)
    }
}

/// Sends `amount` base units of `mint` from `payer`'s token account to `owner`'s (created in
/// the same transaction, as wallets do), waits for `confirmed`; returns the signature. The
/// mint's token program and decimals are read from the chain.
pub async fn send(
    chain: &RpcChain,
    payer: &SigningKey,
    owner: &Address,
    mint: &Address,
    amount: u64,
) -> Result<String, ClientError> {
    let mint_account = chain.account(mint).await?.ok_or(ClientError::BadKey("no such mint"))?;
    // A mint's decimals are byte 44 of its 82-byte state (SPL Token and Token-2022 alike).
    let decimals = *mint_account.data.get(44).ok_or(ClientError::BadKey("not a mint"))?;
    let program = mint_account.owner;
    let from = Address(payer.verifying_key().to_bytes());
    let source = associated_token::address(&from, mint, &program);
    let destination = associated_token::address(owner, mint, &program);
    let mut transfer = token::transfer_checked(&source, mint, &destination, &from, amount, decimals);
    transfer.program_id = program;
    let ixs = [associated_token::create_idempotent(&from, owner, mint, &program), transfer];
    let latest = chain.latest_blockhash().await?;
    let message = Message::compile(&from, &ixs, latest.blockhash).map_err(|e| ClientError::Malformed(e.to_string()))?;
    let mut tx = Transaction::new_unsigned(message);
    tx.sign(&[payer]).map_err(|e| ClientError::Malformed(e.to_string()))?;
    crate::wallets::send_confirmed(chain, &tx, latest.last_valid_block_height).await
}
