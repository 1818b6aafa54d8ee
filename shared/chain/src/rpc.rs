//! `RpcChain`: the `Chain` trait over Solana JSON-RPC 2.0 (HTTP POST, one call a request).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use shared::address::Address;
use shared::solana::programs::{TOKEN_2022_PROGRAM, TOKEN_PROGRAM};

use crate::send_error::classify;
use crate::wire::{
    AccountValue, BlockhashValue, SignatureValue, StatusValue, TransactionValue, WithContext, blockhash,
};
use crate::{
    Account, Chain, ChainError, ChainTransaction, Commitment, LatestBlockhash, SignatureInfo, SignatureStatus,
};

/// Answers larger than this are refused (a node or a proxy should never send one).
const MAX_ANSWER: usize = 8 << 20;
/// `getSignatureStatuses` takes at most 256 signatures a call.
const MAX_STATUSES: usize = 256;
/// Where a token account's amount sits (after mint and owner), little-endian.
const TOKEN_AMOUNT: std::ops::Range<usize> = 64..72;

#[derive(Clone)]
pub struct RpcChain {
    http: reqwest::Client,
    url: Arc<str>,
    commitment: Commitment,
    next_id: Arc<AtomicU64>,
}

#[derive(Deserialize)]
struct RpcError {
    code: i64,
    message: String,
    data: Option<Value>,
}

fn transport(e: reqwest::Error) -> ChainError {
    // Without the URL: it may carry an API key.
    ChainError::Unreachable(e.without_url().to_string())
}

impl RpcChain {
    /// A client for `url` (plain HTTP, or HTTPS once given roots with [`RpcChain::with_tls`]),
    /// with a per-request `timeout`, reading at commitment `confirmed`.
    pub fn new(url: &str, timeout: Duration) -> Result<Self, ChainError> {
        Self::build(url, reqwest::Client::builder().timeout(timeout))
    }

    /// As [`RpcChain::new`], with a preconfigured rustls configuration (pinned key or web PKI).
    pub fn with_tls(url: &str, timeout: Duration, tls: rustls::ClientConfig) -> Result<Self, ChainError> {
        Self::build(url, reqwest::Client::builder().timeout(timeout).use_preconfigured_tls(tls))
    }

    fn build(url: &str, builder: reqwest::ClientBuilder) -> Result<Self, ChainError> {
        reqwest::Url::parse(url).map_err(|_| ChainError::Invalid("RPC URL does not parse"))?;
        let http = builder.build().map_err(|_| ChainError::Invalid("HTTP client configuration refused"))?;
        Ok(RpcChain { http, url: url.into(), commitment: Commitment::Confirmed, next_id: Arc::default() })
    }

    /// Reads (and preflight) at `commitment` instead of `confirmed`.
    pub fn with_commitment(mut self, commitment: Commitment) -> Self {
        self.commitment = commitment;
        self
    }

    pub fn commitment(&self) -> Commitment {
        self.commitment
    }

    /// The slot the node has reached at this client's commitment (`getSlot`). Not on the
    /// `Chain` trait: what the enclave and the relay ask needs no slot; a router stand-in
    /// reports it as a quote's `contextSlot`.
    pub async fn slot(&self) -> Result<u64, ChainError> {
        self.call("getSlot", json!([self.config()])).await
    }

    /// An account and the slot the node read it at.
    async fn account_at(&self, address: &Address) -> Result<(Option<Account>, u64), ChainError> {
        const METHOD: &str = "getAccountInfo";
        let config = json!({"encoding": "base64", "commitment": self.commitment.as_str()});
        let v: WithContext<Option<AccountValue>> = self.call(METHOD, json!([address.to_string(), config])).await?;
        Ok((v.value.map(|a| a.into_account(METHOD)).transpose()?, v.context.slot))
    }

    /// What a token account holds (as [`Chain::token_balance`]) and the slot the node read it at:
    /// every transaction the node had at this client's commitment by that slot is in it.
    pub async fn token_balance_at(&self, address: &Address) -> Result<(Option<u64>, u64), ChainError> {
        // Read from the account itself: works for both token programs, and a missing account is
        // `None` rather than an error text to match.
        let (account, slot) = self.account_at(address).await?;
        let Some(account) = account else { return Ok((None, slot)) };
        if account.owner != TOKEN_PROGRAM && account.owner != TOKEN_2022_PROGRAM {
            return Ok((None, slot));
        }
        if account.data.len() < shared::solana::token::ACCOUNT_LEN {
            return Ok((None, slot));
        }
        let amount = account.data.get(TOKEN_AMOUNT).and_then(|b| b.try_into().ok()).map(u64::from_le_bytes);
        Ok((amount, slot))
    }

    /// One JSON-RPC call; `result` deserialized as `T`.
    async fn call<T: DeserializeOwned>(&self, method: &'static str, params: Value) -> Result<T, ChainError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let mut response = self.http.post(&*self.url).json(&body).send().await.map_err(transport)?;
        let status = response.status();
        let mut bytes = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(transport)? {
            if bytes.len() + chunk.len() > MAX_ANSWER {
                return Err(ChainError::malformed(method, "answer too large"));
            }
            bytes.extend_from_slice(&chunk);
        }
        // Read as a map: a `null` result (an unknown transaction) must differ from no result.
        let mut answer: serde_json::Map<String, Value> = match serde_json::from_slice(&bytes) {
            Ok(a) => a,
            Err(_) if !status.is_success() => return Err(ChainError::Unreachable(format!("HTTP {status}"))),
            Err(_) => return Err(ChainError::malformed(method, "not a JSON-RPC answer")),
        };
        if answer.get("id") != Some(&json!(id)) {
            return Err(ChainError::malformed(method, "answer id does not match the request"));
        }
        if let Some(error) = answer.remove("error").filter(|e| !e.is_null()) {
            let e: RpcError =
                serde_json::from_value(error).map_err(|_| ChainError::malformed(method, "bad error object"))?;
            return Err(classify(e.code, e.message, e.data.as_ref()));
        }
        let result = answer.remove("result").ok_or_else(|| ChainError::malformed(method, "no result"))?;
        serde_json::from_value(result).map_err(|e| ChainError::malformed(method, e))
    }

    fn config(&self) -> Value {
        json!({"commitment": self.commitment.as_str()})
    }
}

impl Chain for RpcChain {
    async fn latest_blockhash(&self) -> Result<LatestBlockhash, ChainError> {
        const METHOD: &str = "getLatestBlockhash";
        let v: WithContext<BlockhashValue> = self.call(METHOD, json!([self.config()])).await?;
        blockhash(METHOD, v.value)
    }

    #[cfg(feature = "send")]
    async fn send_transaction(&self, transaction: &[u8]) -> Result<String, ChainError> {
        let config = json!({
            "encoding": "base64",
            "skipPreflight": false,
            "preflightCommitment": self.commitment.as_str(),
        });
        self.call("sendTransaction", json!([shared::b64::encode(transaction), config])).await
    }

    async fn signature_statuses(&self, signatures: &[String]) -> Result<Vec<Option<SignatureStatus>>, ChainError> {
        const METHOD: &str = "getSignatureStatuses";
        let mut out = Vec::with_capacity(signatures.len());
        for batch in signatures.chunks(MAX_STATUSES) {
            let v: WithContext<Vec<Option<StatusValue>>> =
                self.call(METHOD, json!([batch, {"searchTransactionHistory": true}])).await?;
            if v.value.len() != batch.len() {
                return Err(ChainError::malformed(METHOD, "status count differs from the signatures asked"));
            }
            out.extend(v.value.into_iter().map(|s| s.map(SignatureStatus::from)));
        }
        Ok(out)
    }

    async fn transaction(&self, signature: &str) -> Result<Option<ChainTransaction>, ChainError> {
        const METHOD: &str = "getTransaction";
        let config = json!({
            "encoding": "base64",
            "commitment": self.commitment.max(Commitment::Confirmed).as_str(),
            "maxSupportedTransactionVersion": 0,
        });
        let v: Option<TransactionValue> = self.call(METHOD, json!([signature, config])).await?;
        v.map(|t| t.into_transaction(METHOD)).transpose()
    }

    async fn account(&self, address: &Address) -> Result<Option<Account>, ChainError> {
        Ok(self.account_at(address).await?.0)
    }

    async fn token_balance(&self, address: &Address) -> Result<Option<u64>, ChainError> {
        Ok(self.token_balance_at(address).await?.0)
    }

    async fn balance(&self, address: &Address) -> Result<u64, ChainError> {
        let v: WithContext<u64> = self.call("getBalance", json!([address.to_string(), self.config()])).await?;
        Ok(v.value)
    }

    async fn signatures_for_address(
        &self,
        address: &Address,
        before: Option<&str>,
        limit: usize,
    ) -> Result<Vec<SignatureInfo>, ChainError> {
        let mut config =
            json!({"limit": limit.clamp(1, 1000), "commitment": self.commitment.max(Commitment::Confirmed).as_str()});
        if let Some(before) = before {
            config["before"] = json!(before);
        }
        let v: Vec<SignatureValue> = self.call("getSignaturesForAddress", json!([address.to_string(), config])).await?;
        Ok(v.into_iter().map(SignatureInfo::from).collect())
    }

    async fn minimum_balance_for_rent_exemption(&self, len: usize) -> Result<u64, ChainError> {
        self.call("getMinimumBalanceForRentExemption", json!([len])).await
    }

    async fn block_height(&self) -> Result<u64, ChainError> {
        self.call("getBlockHeight", json!([self.config()])).await
    }
}
