//! The `Chain` trait: what the enclave and the relay ask of a Solana node. Generic callers
//! (`impl Chain`) let tests swap the node; `RpcChain` is the JSON-RPC implementation.

use std::future::Future;

use shared::address::Address;

use crate::{Account, ChainError, ChainTransaction, LatestBlockhash, SignatureInfo, SignatureStatus};

type Result<T> = std::result::Result<T, ChainError>;

pub trait Chain: Send + Sync {
    /// A blockhash to build with and its last valid block height.
    fn latest_blockhash(&self) -> impl Future<Output = Result<LatestBlockhash>> + Send;

    /// Sends signed wire bytes (base64, with preflight at `confirmed`); returns the signature.
    #[cfg(feature = "send")]
    fn send_transaction(&self, transaction: &[u8]) -> impl Future<Output = Result<String>> + Send;

    /// Statuses in the order asked; `None` where the node knows no such signature.
    fn signature_statuses(
        &self,
        signatures: &[String],
    ) -> impl Future<Output = Result<Vec<Option<SignatureStatus>>>> + Send;

    /// A landed transaction with its raw bytes and meta; `None` if unknown.
    fn transaction(&self, signature: &str) -> impl Future<Output = Result<Option<ChainTransaction>>> + Send;

    /// An account; `None` if it does not exist.
    fn account(&self, address: &Address) -> impl Future<Output = Result<Option<Account>>> + Send;

    /// The amount held by a token account (SPL Token or Token-2022); `None` if `address` is not
    /// one.
    fn token_balance(&self, address: &Address) -> impl Future<Output = Result<Option<u64>>> + Send;

    /// Lamports of an account (0 if it does not exist).
    fn balance(&self, address: &Address) -> impl Future<Output = Result<u64>> + Send;

    /// Signatures that name `address`, newest first, starting before `before` if given.
    fn signatures_for_address(
        &self,
        address: &Address,
        before: Option<&str>,
        limit: usize,
    ) -> impl Future<Output = Result<Vec<SignatureInfo>>> + Send;

    /// Lamports an account of `len` data bytes needs to be rent exempt.
    fn minimum_balance_for_rent_exemption(&self, len: usize) -> impl Future<Output = Result<u64>> + Send;

    fn block_height(&self) -> impl Future<Output = Result<u64>> + Send;

    /// Waits until `signature` reaches `commitment`, fails, expires (the block height passed
    /// `last_valid_block_height` with the transaction unseen) or `timeout` passes.
    #[cfg(feature = "send")]
    fn confirm(
        &self,
        signature: &str,
        last_valid_block_height: u64,
        commitment: crate::Commitment,
        timeout: std::time::Duration,
    ) -> impl Future<Output = Result<crate::Confirmation>> + Send
    where
        Self: Sized,
    {
        crate::confirm(self, signature, last_valid_block_height, commitment, timeout)
    }
}
