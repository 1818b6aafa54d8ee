//! Managed wallets (Mode A, docs/wallets.md): create, fund (the relay's fund-intent, checked
//! here, signed by the payer and sent), public balances and the audit log.

use std::time::Duration;

use chain::{Chain, Commitment, Confirmation, RpcChain};
use ed25519_dalek::SigningKey;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use shared::address::Address;
use shared::solana::programs::TOKEN_PROGRAM;
use shared::solana::{Message, Transaction, VersionedMessage, associated_token, token};

use crate::api::Client;
use crate::error::ClientError;

/// `POST /agents/v1/wallets`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Created {
    pub wallet_id: String,
    pub priv_address: String,
    pub network: String,
    pub funding_hint: String,
    /// Shown once: keep it to verify the wallet's webhooks.
    pub webhook_secret: String,
    pub webhook_url: String,
    pub owner_pubkey: Option<String>,
}

/// `POST /agents/v1/wallets/{id}/fund-intent`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FundIntent {
    pub tx: String,
    pub mint: String,
    pub amount: String,
    pub to: String,
    pub token_account: String,
    pub last_valid_block_height: u64,
}

impl Client {
    async fn send_with_key<T: DeserializeOwned>(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<T, ClientError> {
        let mut request = self.http.request(method, format!("{}{path}", self.base));
        if let Some(key) = &self.api_key {
            request = request.bearer_auth(key);
        }
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.map_err(|_| ClientError::RelayUnreachable(self.base.clone()))?;
        self.read(response).await
    }

    /// Creates a wallet whose events go to `webhook_url`.
    pub async fn create_wallet(&self, webhook_url: &str, owner_pubkey: Option<&str>) -> Result<Created, ClientError> {
        let body = json!({"webhookUrl": webhook_url, "ownerPubkey": owner_pubkey});
        self.send_with_key(reqwest::Method::POST, "/agents/v1/wallets", Some(body)).await
    }

    pub async fn fund_intent(
        &self,
        wallet_id: &str,
        mint: &str,
        amount: &str,
        payer: &str,
    ) -> Result<FundIntent, ClientError> {
        let body = json!({"mint": mint, "amount": amount, "payerPubkey": payer});
        self.send_with_key(
            reqwest::Method::POST,
            &format!("/agents/v1/wallets/{}/fund-intent", seg(wallet_id)),
            Some(body),
        )
        .await
    }

    /// `{balances: [{mint, state, raw}]}`.
    pub async fn wallet_balance(&self, wallet_id: &str, mints: &[String]) -> Result<Value, ClientError> {
        let path = format!("/agents/v1/wallets/{}/balance?mints={}", seg(wallet_id), mints.join(","));
        self.send_with_key(reqwest::Method::GET, &path, None).await
    }

    /// One page of the audit log, newest first.
    pub async fn wallet_audit(&self, wallet_id: &str, limit: u32, offset: u32) -> Result<Value, ClientError> {
        let path = format!("/agents/v1/wallets/{}/audit?limit={limit}&offset={offset}", seg(wallet_id));
        self.send_with_key(reqwest::Method::GET, &path, None).await
    }

    /// The wallet's webhook events and delivery attempts.
    pub async fn wallet_webhooks(&self, wallet_id: &str) -> Result<Value, ClientError> {
        self.send_with_key(reqwest::Method::GET, &format!("/agents/v1/wallets/{}/webhooks", seg(wallet_id)), None).await
    }
}

/// A path segment: a wallet id is a uuid; anything else is percent-encoded byte by byte.
fn seg(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Checks that `intent.tx` is exactly what the payer asked for (create the wallet's token
/// account if needed, then move `amount` of `mint` from the payer to `intent.to`, nothing
/// else, the payer the only signer) by rebuilding it with the same blockhash; returns it.
pub fn check_intent(
    intent: &FundIntent,
    payer: &Address,
    mint: &Address,
    amount: u64,
    decimals: u8,
) -> Result<Transaction, ClientError> {
    let bad =
        |why: &str| ClientError::Malformed(format!("the fund-intent transaction is not the one asked for: {why}"));
    let bytes = shared::b64::decode(&intent.tx).map_err(|_| bad("not base64"))?;
    let tx = Transaction::parse(&bytes).map_err(|_| bad("not a transaction"))?;
    let to = Address::parse(&intent.to).ok_or_else(|| bad("`to` is not an address"))?;
    if intent.mint != mint.to_string() || intent.amount != amount.to_string() {
        return Err(bad("another mint or amount"));
    }
    let blockhash = *tx.message.recent_blockhash();
    let instructions = [
        associated_token::create_idempotent(payer, &to, mint, &TOKEN_PROGRAM),
        token::transfer_checked(
            &associated_token::address(payer, mint, &TOKEN_PROGRAM),
            mint,
            &associated_token::address(&to, mint, &TOKEN_PROGRAM),
            payer,
            amount,
            decimals,
        ),
    ];
    let expected = Message::compile(payer, &instructions, blockhash).map_err(|_| bad("cannot rebuild"))?;
    if tx.message != VersionedMessage::Legacy(expected) {
        return Err(bad("its instructions differ"));
    }
    Ok(tx)
}

/// The mint's decimals, read from the chain (byte 44 of a mint's state).
pub async fn mint_decimals(chain: &RpcChain, mint: &Address) -> Result<u8, ClientError> {
    let account = chain
        .account(mint)
        .await
        .map_err(|e| ClientError::Malformed(format!("the chain: {e}")))?
        .ok_or(ClientError::BadKey("no such mint"))?;
    account.data.get(44).copied().ok_or(ClientError::BadKey("not a mint"))
}

/// Signs the checked transaction with the payer, sends it, waits for `confirmed`.
pub async fn sign_and_send(
    chain: &RpcChain,
    mut tx: Transaction,
    payer: &SigningKey,
    last_valid_block_height: u64,
) -> Result<String, ClientError> {
    let chain_error = |e: chain::ChainError| ClientError::Malformed(format!("the chain: {e}"));
    tx.sign(&[payer]).map_err(|e| ClientError::Malformed(e.to_string()))?;
    let signature = chain.send_transaction(&tx.serialize()).await.map_err(chain_error)?;
    match chain.confirm(&signature, last_valid_block_height, Commitment::Confirmed, Duration::from_secs(60)).await {
        Ok(Confirmation::Confirmed) => Ok(signature),
        Ok(other) => Err(ClientError::Malformed(format!("the transfer did not land: {other:?}"))),
        Err(e) => Err(chain_error(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn intent(payer: &Address, to: &Address, mint: &Address, amount: u64, decimals: u8) -> FundIntent {
        let ixs = [
            associated_token::create_idempotent(payer, to, mint, &TOKEN_PROGRAM),
            token::transfer_checked(
                &associated_token::address(payer, mint, &TOKEN_PROGRAM),
                mint,
                &associated_token::address(to, mint, &TOKEN_PROGRAM),
                payer,
                amount,
                decimals,
            ),
        ];
        let tx = Transaction::new_unsigned(Message::compile(payer, &ixs, [4; 32]).unwrap());
        FundIntent {
            tx: shared::b64::encode(tx.serialize()),
            mint: mint.to_string(),
            amount: amount.to_string(),
            to: to.to_string(),
            token_account: associated_token::address(to, mint, &TOKEN_PROGRAM).to_string(),
            last_valid_block_height: 1,
        }
    }

    #[test]
    fn only_the_transfer_asked_for_passes() {
        let (payer, to, mint, other) = (Address([1; 32]), Address([2; 32]), Address([3; 32]), Address([9; 32]));
        let good = intent(&payer, &to, &mint, 5_000, 6);
        assert!(check_intent(&good, &payer, &mint, 5_000, 6).is_ok());
        // Another amount, decimals, mint or payer than asked: refused.
        assert!(check_intent(&good, &payer, &mint, 5_001, 6).is_err());
        assert!(check_intent(&good, &payer, &mint, 5_000, 9).is_err());
        assert!(check_intent(&good, &other, &mint, 5_000, 6).is_err());
        // A transaction that pays someone else than the `to` it names: refused.
        let mut swapped = intent(&payer, &other, &mint, 5_000, 6);
        swapped.to = to.to_string();
        assert!(check_intent(&swapped, &payer, &mint, 5_000, 6).is_err());
        // A larger transfer behind the same answer fields: refused.
        let mut larger = intent(&payer, &to, &mint, 50_000, 6);
        larger.amount = "5000".into();
        assert!(check_intent(&larger, &payer, &mint, 5_000, 6).is_err());
    }
}
