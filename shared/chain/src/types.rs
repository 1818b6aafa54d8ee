//! What the chain answers, as typed values (keys as `Address`, amounts as integers).

use serde::{Deserialize, Serialize};
use shared::address::Address;
use shared::solana::Hash;

/// How settled a read or a status must be. Ordered: processed < confirmed < finalized.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Commitment {
    Processed,
    #[default]
    Confirmed,
    Finalized,
}

impl Commitment {
    pub fn as_str(self) -> &'static str {
        match self {
            Commitment::Processed => "processed",
            Commitment::Confirmed => "confirmed",
            Commitment::Finalized => "finalized",
        }
    }
}

/// A blockhash to build with, and the last block height at which a transaction using it lands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LatestBlockhash {
    pub blockhash: Hash,
    pub last_valid_block_height: u64,
}

/// An account's state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    pub lamports: u64,
    pub owner: Address,
    pub data: Vec<u8>,
    pub executable: bool,
}

/// A signature's status (`getSignatureStatuses`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignatureStatus {
    pub slot: u64,
    /// The transaction error as JSON text (`{"InstructionError":[0,{"Custom":1}]}`), if it failed.
    pub err: Option<String>,
    pub confirmation_status: Option<Commitment>,
}

/// One entry of `getSignaturesForAddress`, newest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignatureInfo {
    pub signature: String,
    pub slot: u64,
    pub err: Option<String>,
    /// As the node writes it, e.g. `[19] order:42 hello memo`.
    pub memo: Option<String>,
    pub confirmation_status: Option<Commitment>,
}

/// A token balance before or after a transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenBalance {
    /// Index into the transaction's account keys.
    pub account_index: usize,
    pub mint: Address,
    pub owner: Option<Address>,
    pub amount: u64,
    pub decimals: u8,
}

/// What the node recorded of a transaction's execution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransactionMeta {
    /// The transaction error as JSON text, if it failed.
    pub err: Option<String>,
    pub fee: u64,
    pub pre_balances: Vec<u64>,
    pub post_balances: Vec<u64>,
    pub pre_token_balances: Vec<TokenBalance>,
    pub post_token_balances: Vec<TokenBalance>,
    pub log_messages: Vec<String>,
}

/// A landed transaction (`getTransaction`, base64).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChainTransaction {
    pub slot: u64,
    /// The wire bytes (signatures and message): `shared::solana::Transaction::parse` reads them.
    pub transaction: Vec<u8>,
    /// Static keys then those loaded from lookup tables (writable, then read-only): what
    /// `account_index` and the balance vectors index.
    pub account_keys: Vec<Address>,
    pub meta: Option<TransactionMeta>,
}
