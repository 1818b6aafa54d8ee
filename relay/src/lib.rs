//! The relay: the untrusted front of the service. It forwards ciphertext to the enclave,
//! stores and commits receipts, runs accounts, billing and x402, serves the public API, and
//! runs the plaintext `/agent` path. It holds no key that opens a prompt and never logs or
//! stores a private request or reply.
//!
//! One folder per subsystem (DESIGN.md §3), each with its own `routes()`: `private/` (the one
//! ciphertext pipeline), `accounts/`, `billing/`, `x402/`, `receipts/` (with `receipts/log/`, the
//! transparency log), `plain_agent/` (the one plaintext path), `enclaves/`, `discovery/`,
//! `agents/` (what the Agent Privacy API's two modes share: its configuration, chain and router
//! clients, and session records), `swaps/` and `wallets/` (the two modes), `mcp/`, `metrics/`
//! (`GET /metrics`); `http/` is the plumbing they share (serving, bodies, the caller's address,
//! the one error enum); `state` and `router` tie them, and `worker` advances every session.

pub mod accounts;
pub mod admin;
pub mod agent_route;
pub mod agents;
pub mod billing;
pub mod config;
pub mod currency;
pub mod discovery;
pub mod enclaves;
pub mod failpoint;
pub mod group_commit;
pub mod housekeeping;
pub mod http;
pub mod ids;
pub mod mcp;
pub mod metrics;
pub mod plain_agent;
pub mod private;
pub mod receipts;
pub mod router;
pub mod state;
pub mod store;
pub mod swaps;
pub mod wallets;
pub mod web;
pub mod worker;
pub mod x402;

/// Unix seconds now (the relay's own clock; receipts carry the enclave's).
pub fn unix_now() -> i64 {
    shared::time::unix_now() as i64
}
