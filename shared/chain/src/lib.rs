//! Solana JSON-RPC behind a trait, and the swap router's HTTP wire. The I/O side of
//! `shared::solana`: this crate reads the chain, asks the router, and sends bytes that were
//! signed elsewhere (feature `send`, off in the enclave); it never signs and never holds a key.

mod chain;
#[cfg(feature = "send")]
mod confirm;
mod error;
mod router;
mod rpc;
mod send_error;
mod types;
#[cfg(feature = "web-pki")]
mod web_pki;
mod wire;

pub use chain::Chain;
#[cfg(feature = "send")]
pub use confirm::{Confirmation, confirm};
pub use error::ChainError;
pub use router::{Build, Quote, Router, RouterError, SwapTransaction};
pub use rpc::RpcChain;
pub use types::{
    Account, ChainTransaction, Commitment, LatestBlockhash, SignatureInfo, SignatureStatus, TokenBalance,
    TransactionMeta,
};
#[cfg(feature = "web-pki")]
pub use web_pki::web_pki;

#[cfg(test)]
mod tests;
