//! One module per `svc` command: its arguments, what it does, and its text and JSON output.

pub mod agent;
pub mod attest;
pub mod chat;
pub mod deposit;
pub mod gpu_reference;
pub mod mcp;
pub mod measure;
mod measure_json;
pub mod provision;
pub mod proxy;
pub mod receipt;
pub mod swap;
pub mod wallet;
pub mod web_check;
