//! The relay's plaintext-path extras, kept out of the enclave's build: the thirteen tools the
//! enclave does not run, the SSRF-guarded fetcher they need, the skill graph of the plaintext
//! system prompt, and BRAID guided reasoning. The five tools of encrypted mode, the tool trait
//! and the loop come from the `agent` crate, which the enclave compiles.

mod api;
pub mod braid;
pub mod config;
pub mod fetch;
mod http;
pub mod skills;
pub mod tools;

pub use config::{FetchConfig, ToolsConfig};
pub use tools::{ALL_TOOL_NAMES, full};
