//! Receipts: the log that commits each verified receipt, the writer that puts those commits on
//! the chain (`solana` ledger mode), and the public lookups.

pub mod commit_log;
pub mod ledger_writer;
pub mod lookups;
pub mod outbox;

pub use commit_log::{CommitError, CommitLog, load_or_create_key};
