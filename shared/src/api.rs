//! Answers of the public API that the relay serves and clients read: one definition for both,
//! so the two cannot drift apart (the relay's OpenAPI document describes these, with the
//! `openapi` feature). Never in the enclave.

use serde::{Deserialize, Serialize};

use crate::address::Address;
use crate::amount::Amount;

/// `POST /agents/v1/wallets` (contract §2.9), plus the webhook secret (shown this once).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct WalletCreated {
    pub wallet_id: String,
    /// The wallet's address: a key the enclave made and sealed.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub priv_address: Address,
    pub network: String,
    pub funding_hint: String,
    /// `whsec_…`: verifies the `webhook-signature` of this wallet's events. Not shown again.
    pub webhook_secret: String,
    pub webhook_url: String,
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>))]
    pub owner_pubkey: Option<Address>,
    /// The enclave's signed word on `walletId`, `privAddress` and `ownerPubkey`: check it
    /// against the attested enclave key before funding the address (docs/wallets.md).
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub certificate: crate::privacy::WalletCertificate,
}

/// `POST /agents/v1/wallets/{id}/fund-intent` (contract §4.3).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct WalletFundIntent {
    /// Unsigned base64 transaction; the payer signs and sends it.
    pub tx: String,
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub mint: Address,
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub amount: Amount,
    /// The wallet's address (`privAddress`).
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub to: Address,
    /// The wallet's token account of the mint, which the transaction creates when needed.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub token_account: Address,
    pub last_valid_block_height: u64,
}

/// `GET /api/v1/deposits/address`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct DepositAddress {
    pub key_id: String,
    /// The wallet to send to (its token account of the mint receives the tokens). A key only
    /// the enclave holds.
    pub owner: String,
    pub network: String,
    pub token_accounts: Vec<TokenAccount>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct TokenAccount {
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub mint: Address,
    pub currency: String,
    /// The owner's associated token account of the mint.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub token_account: Address,
    /// Base units below which a deposit is not credited.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub min_amount: Amount,
}

/// `GET /attestation/{address}/ledger`: where a receipt's commit is.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct LedgerStatus {
    /// base58 of the receipt's address
    pub address: String,
    /// The commit in this relay's commit log (`onchainAttestation.signature`).
    pub commit_signature: String,
    /// `embedded` or `solana` (docs/log.md "Ledger writer").
    pub ledger: String,
    /// `landed` or `pending` (queued for the chain, or sent and not yet confirmed).
    pub status: String,
    /// The transaction on the ledger: the commit itself in embedded mode, the chain
    /// transaction in solana mode once it landed.
    pub ledger_signature: Option<String>,
    /// Unix seconds it landed (the commit's own time in embedded mode).
    pub landed_at: Option<i64>,
}

/// `GET /tee/witness/appends`: the book appends waiting for the freshness witness.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Appends {
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<Object>))]
    pub appends: Vec<crate::witness::AppendRequest>,
}
