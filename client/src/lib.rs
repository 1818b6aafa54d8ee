//! The client side: fetch the enclave key, encrypt prompts to it, decrypt replies, and check
//! every receipt against what was actually sent. Nothing here trusts the relay.

pub mod age;
pub mod agent;
pub mod api;
pub mod attest;
pub mod chat;
pub mod completions;
pub mod deposits;
pub mod error;
pub mod gpu_reference;
pub mod key_cache;
pub mod log;
pub mod mcp;
pub mod onchain;
pub mod pccs;
pub mod private_file;
pub mod provision;
pub mod proxy;
pub mod proxy_page;
pub mod receipts;
pub mod swap;
pub mod wallets;
pub mod web_check;
pub mod witness;

pub use api::Client;
pub use error::ClientError;
