//! The client side: fetch the enclave key, encrypt prompts to it, decrypt replies, and check
//! every receipt against what was actually sent. Nothing here trusts the relay.

#![forbid(unsafe_code)]

pub mod api;
pub mod attest;
pub mod chat;
pub mod error;
pub mod key_cache;
pub mod pccs;
pub mod receipts;

pub use api::Client;
pub use error::ClientError;
