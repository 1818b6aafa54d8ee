//! What a session step answers the worker, and the few rules every mode's steps share.

use shared::wire::codes::EnclaveCode;

use super::sessions::{Session, state};
use crate::http::error::RelayError;

/// Longest wait before a retry.
pub const MAX_BACKOFF_SECS: i64 = 30;

/// When a session is to be taken again.
pub enum Next {
    Now,
    /// After this many seconds.
    Later(i64),
}

/// The wait before the next try of a step refused `attempts` times.
pub fn backoff(attempts: i64) -> i64 {
    (1i64 << attempts.clamp(0, 5)).min(MAX_BACKOFF_SECS)
}

/// The code of an enclave refusal, if that is what `e` is.
pub fn refusal(e: &RelayError) -> Option<EnclaveCode> {
    match e {
        RelayError::Enclave { code, .. } => *code,
        _ => None,
    }
}

/// Moves the session to `next` for `reason`, its attempts counted afresh.
pub fn fail_to(s: &mut Session, next: &str, reason: &str) -> Next {
    s.state = next.into();
    s.reason = Some(reason.into());
    s.attempts = 0;
    Next::Now
}

/// A credit the enclave refused for good (`nothing_to_do`: not this wallet's deposit into the
/// pool, or landed before the book's horizon) ends its session, its reason kept, instead of
/// being retried for ever; any other error is retried.
pub fn refused_credit(s: &mut Session, e: RelayError) -> Result<Next, RelayError> {
    match refusal(&e) {
        Some(EnclaveCode::NothingToDo) => Ok(fail_to(s, state::FAILED, "credit_refused")),
        _ => Err(e),
    }
}
