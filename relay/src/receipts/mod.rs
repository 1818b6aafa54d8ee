//! Receipts: the log that commits each verified receipt, and the public lookups.

pub mod commit_log;
pub mod lookups;

pub use commit_log::{CommitError, CommitLog, load_or_create_key};
