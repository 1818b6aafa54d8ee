//! The model side of the service: an OpenAI-compatible chat client for GPU nodes, the tool
//! trait, the tools, and the tool loop.
//!
//! Cargo features choose the tool set a binary may contain: `private-tools` (the five of
//! encrypted mode; the enclave builds only these) and `all-tools` (the eighteen of the relay's
//! plaintext path).

#![forbid(unsafe_code)]

#[cfg(feature = "all-tools")]
pub mod braid;
#[cfg(feature = "all-tools")]
pub mod fetch;
pub mod model;
pub mod pin;
#[cfg(feature = "all-tools")]
pub mod skills;
pub mod tool;
pub mod tool_loop;
#[cfg(feature = "private-tools")]
pub mod tools;
pub mod toolset;
