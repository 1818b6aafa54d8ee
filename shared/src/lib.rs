//! Protocol pieces shared by the enclave, the relay and the client.
//!
//! Nothing in this crate performs I/O: every function is a pure transformation of bytes and
//! values, so the same code can run inside the enclave, in the untrusted relay and in clients,
//! and can be tested with known-answer vectors.

pub mod address;
pub mod amount;
#[cfg(feature = "api")]
pub mod api;
#[cfg(feature = "verify")]
pub mod attest;
pub mod b64;
pub mod catalog;
pub mod envelope;
pub mod freshness;
#[cfg(feature = "gpu")]
pub mod gpu;
pub mod hpke;
pub mod keys;
#[cfg(feature = "ledger")]
pub mod ledger;
#[cfg(feature = "mcp-args")]
pub mod mcp_args;
#[cfg(feature = "measure")]
pub mod measure;
#[cfg(feature = "solana")]
pub mod privacy;
pub mod provision;
pub mod quote;
pub mod receipt;
pub mod reply;
pub mod served_by;
#[cfg(feature = "solana")]
pub mod solana;
#[cfg(feature = "solana")]
pub mod swap;
pub mod time;
#[cfg(feature = "tlog")]
pub mod tlog;
#[cfg(feature = "tsm")]
pub mod tsm;
pub mod wire;
pub mod witness;
#[cfg(feature = "x402")]
pub mod x402;

/// sha256 of `data`.
pub fn sha256(data: &[u8]) -> [u8; 32] {
    use sha2::Digest;
    sha2::Sha256::digest(data).into()
}
