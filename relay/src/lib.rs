//! The relay: the untrusted front of the service. It forwards ciphertext to the enclave,
//! stores and commits receipts, runs accounts, billing and x402, serves the public API, and
//! runs the plaintext `/agent` path. It holds no key that opens a prompt and never logs or
//! stores a private request or reply.
//!
//! One folder per subsystem (DESIGN.md §3): `private/` (the one ciphertext pipeline),
//! `accounts/`, `billing/`, `x402/`, `receipts/`, `log/` (the transparency log), `plain_agent/`
//! (the one plaintext path), `enclaves/`, `discovery/`, `metrics/` (`GET /metrics`); `state`, `router` and
//! `error` tie them together.

pub mod accounts;
pub mod admin;
pub mod agent_route;
pub mod agents_v1;
pub mod billing;
pub mod body;
pub mod config;
pub mod discovery;
pub mod enclaves;
pub mod error;
pub mod failpoint;
pub mod group_commit;
pub mod housekeeping;
pub mod ids;
pub mod log;
pub mod logging;
pub mod mcp;
pub mod metrics;
pub mod peer;
pub mod plain_agent;
pub mod private;
pub mod receipts;
pub mod router;
pub mod serve;
pub mod state;
pub mod store;
pub mod web;
pub mod x402;

/// Unix seconds now (the relay's own clock; receipts carry the enclave's).
pub fn unix_now() -> i64 {
    shared::time::unix_now() as i64
}
