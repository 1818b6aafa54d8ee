//! The one error type of the codec: every parse and build refusal, without input bytes.

use crate::address::Address;

#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum SolanaError {
    #[error("input ends early")]
    Truncated,
    #[error("bytes left after the end")]
    TrailingBytes,
    #[error("compact-u16 is not canonical (alias or overlong)")]
    NonCanonicalLength,
    #[error("compact-u16 is above 65535")]
    LengthOverflow,
    #[error("transaction is larger than {max} bytes")]
    TooLarge { max: usize },
    #[error("message version {0} is not supported")]
    UnsupportedVersion(u8),
    #[error("message header is inconsistent: {0}")]
    BadHeader(&'static str),
    #[error("instruction {0} names an account or program outside the message")]
    IndexOutOfRange(usize),
    #[error("an account key appears twice")]
    DuplicateAccountKey,
    #[error("more than 256 accounts or 255 signers")]
    TooManyAccounts,
    #[error("expected {expected} signatures, found {found}")]
    SignatureCount { expected: usize, found: usize },
    #[error("{0} is not a required signer of this message")]
    NotASigner(Address),
    #[error("signature {0} is missing or does not verify")]
    BadSignature(usize),
    #[error("account {0} of the instruction comes from an address lookup table")]
    UnresolvedAccount(usize),
    #[error("not the expected instruction: {0}")]
    UnexpectedInstruction(&'static str),
}
