//! A small Solana transaction codec: compact-u16, instructions, legacy and v0 messages,
//! transactions and their ed25519 signatures, and the few program instructions the swap
//! service builds or checks (System, SPL Token, Associated Token Account, Memo, Compute Budget).
//!
//! Pure and dependency-light on purpose: the enclave signs what this builds, so it links no
//! solana-* crate; those crates are only dev-dependencies that cross-check these bytes
//! (`tests/solana_crosscheck.rs`). Parsers are strict (Solana's own sanitize rules plus no
//! trailing bytes) and return [`SolanaError`], never panic.

pub mod associated_token;
mod compile;
pub mod compute_budget;
mod error;
mod instruction;
pub mod jupiter;
pub mod memo;
mod message;
pub mod programs;
mod reader;
pub mod shortvec;
pub mod system;
pub mod token;
mod transaction;
mod v0;
mod versioned;

pub use error::SolanaError;
pub use instruction::{AccountMeta, CompiledInstruction, Instruction};
pub use message::{Message, MessageHeader};
pub use transaction::{SIGNATURE_LEN, Transaction};
pub use v0::{AddressTableLookup, MessageV0};
pub use versioned::VersionedMessage;

/// A recent blockhash (32 bytes).
pub type Hash = [u8; 32];
/// An ed25519 signature (64 bytes).
pub type Signature = [u8; 64];

/// The largest transaction the network carries (IPv6 MTU less headers), in bytes.
pub const PACKET_DATA_SIZE: usize = 1232;

/// Base58 of a signature: a transaction id.
pub fn signature_id(signature: &Signature) -> String {
    bs58::encode(signature).into_string()
}
