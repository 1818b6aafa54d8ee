//! The relay's tests in process (storage on SQLite and PostgreSQL, the router with a fake or no
//! enclave), built as one test binary: a module per file beside this one, sharing `common`, so
//! the relay and its dependencies are linked once, not once per file. A test is
//! `<file>::<name>`.

mod common;

mod billing;
mod enclave_answers;
mod handlers;
mod housekeeping;
mod ledger_outbox;
mod log_storage;
mod storage;
mod swap_sessions;
mod x402_replay;
