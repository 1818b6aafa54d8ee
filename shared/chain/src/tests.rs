//! Error paths against a tiny local JSON-RPC stand-in, and `confirm` against a scripted chain.
//! The real behaviour is tested on the local Solana chain (`tests/tests/chain.rs`).

#[cfg(feature = "send")]
mod confirm;
mod rpc;
