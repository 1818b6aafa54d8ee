//! The JSON shapes of the RPC answers this crate reads, and their conversion to typed values.
//! Unknown fields are ignored (nodes add fields); missing or mistyped ones are `Malformed`.

use serde::Deserialize;
use serde_json::Value;
use shared::address::Address;

use crate::{
    Account, ChainError, ChainTransaction, Commitment, SignatureInfo, SignatureStatus, TokenBalance, TransactionMeta,
};

/// The `{context, value}` wrapper of most reads.
#[derive(Deserialize)]
pub(crate) struct WithContext<T> {
    #[serde(default)]
    pub context: Context,
    pub value: T,
}

/// The slot a read was answered at.
#[derive(Deserialize, Default)]
pub(crate) struct Context {
    #[serde(default)]
    pub slot: u64,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct BlockhashValue {
    pub blockhash: String,
    pub last_valid_block_height: u64,
}

#[derive(Deserialize)]
pub(crate) struct AccountValue {
    lamports: u64,
    owner: String,
    data: (String, String),
    #[serde(default)]
    executable: bool,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct StatusValue {
    slot: u64,
    err: Option<Value>,
    confirmation_status: Option<Commitment>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SignatureValue {
    signature: String,
    slot: u64,
    err: Option<Value>,
    memo: Option<String>,
    confirmation_status: Option<Commitment>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TransactionValue {
    slot: u64,
    transaction: (String, String),
    meta: Option<MetaValue>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct MetaValue {
    err: Option<Value>,
    fee: u64,
    #[serde(default)]
    pre_balances: Vec<u64>,
    #[serde(default)]
    post_balances: Vec<u64>,
    #[serde(default)]
    pre_token_balances: Option<Vec<TokenBalanceValue>>,
    #[serde(default)]
    post_token_balances: Option<Vec<TokenBalanceValue>>,
    #[serde(default)]
    log_messages: Option<Vec<String>>,
    #[serde(default)]
    loaded_addresses: Option<LoadedAddresses>,
}

#[derive(Deserialize)]
struct LoadedAddresses {
    writable: Vec<String>,
    readonly: Vec<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct TokenBalanceValue {
    account_index: usize,
    mint: String,
    owner: Option<String>,
    ui_token_amount: UiTokenAmount,
}

#[derive(Deserialize)]
struct UiTokenAmount {
    amount: String,
    decimals: u8,
}

fn address(method: &'static str, text: &str) -> Result<Address, ChainError> {
    Address::parse(text).ok_or_else(|| ChainError::malformed(method, "an address is not base58 of 32 bytes"))
}

fn base64(method: &'static str, (data, encoding): &(String, String)) -> Result<Vec<u8>, ChainError> {
    if encoding != "base64" {
        return Err(ChainError::malformed(method, format!("data encoded as {encoding:?}, not base64")));
    }
    shared::b64::decode(data).map_err(|_| ChainError::malformed(method, "data is not base64"))
}

/// The error of a status or transaction, as the node's JSON text.
fn err_text(err: Option<Value>) -> Option<String> {
    err.filter(|e| !e.is_null()).map(|e| e.to_string())
}

pub(crate) fn blockhash(method: &'static str, v: BlockhashValue) -> Result<crate::LatestBlockhash, ChainError> {
    Ok(crate::LatestBlockhash {
        blockhash: address(method, &v.blockhash)?.0,
        last_valid_block_height: v.last_valid_block_height,
    })
}

impl AccountValue {
    pub(crate) fn into_account(self, method: &'static str) -> Result<Account, ChainError> {
        Ok(Account {
            lamports: self.lamports,
            owner: address(method, &self.owner)?,
            data: base64(method, &self.data)?,
            executable: self.executable,
        })
    }
}

impl From<StatusValue> for SignatureStatus {
    fn from(v: StatusValue) -> Self {
        SignatureStatus { slot: v.slot, err: err_text(v.err), confirmation_status: v.confirmation_status }
    }
}

impl From<SignatureValue> for SignatureInfo {
    fn from(v: SignatureValue) -> Self {
        SignatureInfo {
            signature: v.signature,
            slot: v.slot,
            err: err_text(v.err),
            memo: v.memo,
            confirmation_status: v.confirmation_status,
        }
    }
}

fn token_balances(method: &'static str, v: Option<Vec<TokenBalanceValue>>) -> Result<Vec<TokenBalance>, ChainError> {
    v.unwrap_or_default()
        .into_iter()
        .map(|b| {
            Ok(TokenBalance {
                account_index: b.account_index,
                mint: address(method, &b.mint)?,
                owner: b.owner.as_deref().map(|o| address(method, o)).transpose()?,
                amount: b
                    .ui_token_amount
                    .amount
                    .parse()
                    .map_err(|_| ChainError::malformed(method, "a token amount is not an integer"))?,
                decimals: b.ui_token_amount.decimals,
            })
        })
        .collect()
}

impl TransactionValue {
    pub(crate) fn into_transaction(self, method: &'static str) -> Result<ChainTransaction, ChainError> {
        let transaction = base64(method, &self.transaction)?;
        let parsed = shared::solana::Transaction::parse(&transaction)
            .map_err(|e| ChainError::malformed(method, format!("transaction does not parse: {e}")))?;
        let mut account_keys = parsed.message.static_account_keys().to_vec();
        let meta = match self.meta {
            None => None,
            Some(m) => {
                if let Some(loaded) = &m.loaded_addresses {
                    for text in loaded.writable.iter().chain(&loaded.readonly) {
                        account_keys.push(address(method, text)?);
                    }
                }
                Some(TransactionMeta {
                    err: err_text(m.err),
                    fee: m.fee,
                    pre_balances: m.pre_balances,
                    post_balances: m.post_balances,
                    pre_token_balances: token_balances(method, m.pre_token_balances)?,
                    post_token_balances: token_balances(method, m.post_token_balances)?,
                    log_messages: m.log_messages.unwrap_or_default(),
                })
            }
        };
        Ok(ChainTransaction { slot: self.slot, transaction, account_keys, meta })
    }
}
