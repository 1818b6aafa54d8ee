//! What `svc` exits with: one code per kind of outcome, the same for every command
//! (docs/cli-json.md), and the failure that carries one.

use client::ClientError;
use shared::attest::Verdict;

use crate::render;

/// The process's exit code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// Done; for `attest`, the enclave or quote is accepted.
    Ok = 0,
    /// A step failed: the relay, the chain, or a check of a receipt, a log or a balance.
    Failed = 1,
    /// `swap oneshot` stopped following a session that had not settled or failed yet (it goes
    /// on without the client). clap's own usage errors exit 2 as well.
    Unfinished = 2,
    /// Verification refused: the enclave, the quote, or the bytes compared.
    Rejected = 10,
    /// A quote this verifier does not support.
    Unsupported = 20,
    /// Bad input: a flag, a file or a quote that does not parse.
    BadInput = 30,
}

impl From<Verdict> for Exit {
    fn from(verdict: Verdict) -> Self {
        match verdict {
            Verdict::Accept => Exit::Ok,
            Verdict::Reject => Exit::Rejected,
            Verdict::Unsupported => Exit::Unsupported,
            Verdict::Malformed => Exit::BadInput,
        }
    }
}

impl From<Exit> for std::process::ExitCode {
    fn from(exit: Exit) -> Self {
        std::process::ExitCode::from(exit as u8)
    }
}

/// A command that did not finish: the code it exits with and what to tell the user.
#[derive(Debug)]
pub struct Failure {
    pub exit: Exit,
    pub message: String,
}

impl Failure {
    pub fn new(exit: Exit, message: impl Into<String>) -> Self {
        Failure { exit, message: message.into() }
    }

    pub fn failed(message: impl Into<String>) -> Self {
        Failure::new(Exit::Failed, message)
    }

    pub fn bad_input(message: impl Into<String>) -> Self {
        Failure::new(Exit::BadInput, message)
    }

    /// An enclave that failed verification exits `Rejected`; every other client error `Failed`.
    /// For commands that verify before anything else (`proxy`, `mcp`).
    pub fn verifying(e: ClientError) -> Self {
        let rejected = matches!(e, ClientError::NotAttested(_));
        let failure = Failure::from(e);
        match rejected {
            true => Failure::new(Exit::Rejected, failure.message),
            false => failure,
        }
    }
}

impl From<ClientError> for Failure {
    fn from(e: ClientError) -> Self {
        if let ClientError::NotAttested(report) = &e {
            eprint!("{}", render::report(report));
        }
        Failure::failed(e.to_string())
    }
}
