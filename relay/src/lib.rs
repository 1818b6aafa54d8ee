//! The relay: the untrusted front of the service. It forwards ciphertext to the enclave,
//! stores receipts, commits them to the embedded ledger and serves their lookups. It holds no
//! key that opens a prompt and must never log or store request or reply bodies.

#![forbid(unsafe_code)]

pub mod accounts;
pub mod agent_request;
pub mod app;
pub mod auth;
pub mod billing;
pub mod chats;
pub mod config;
pub mod deposits;
pub mod error;
pub mod forward;
pub mod ledger;
pub mod metering;
pub mod peer;
pub mod plain_agent;
pub mod rate_limit;
pub mod routes;
pub mod store;
pub mod tee;
pub mod x402;

/// Unix seconds now (the relay's own clock; receipts carry the enclave's).
pub fn unix_now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64)
}
