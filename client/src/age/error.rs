//! Why a file or an identity was refused. The messages name the rule that failed, never a key,
//! a passphrase or any byte of the file.

/// A refused age file or identity. The variants follow the reference's failure classes: armor,
/// header (including invalid stanzas), no match, header MAC, payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum AgeError {
    /// The ASCII armor breaks the spec's strict rules.
    #[error("invalid age ASCII armor: {0}")]
    Armor(&'static str),
    /// The header does not parse: version line, stanza lines, base64, MAC line, or the nonce.
    #[error("malformed age header: {0}")]
    Header(&'static str),
    /// A stanza of a type we read is invalid (arguments, sizes, a low-order share, a work factor).
    #[error("invalid {kind} recipient stanza: {reason}")]
    Stanza { kind: &'static str, reason: &'static str },
    /// No identity unwrapped any stanza (wrong key or passphrase, or only unknown stanza types).
    #[error("no identity matched any recipient stanza of the file")]
    NoMatch,
    /// The header MAC does not verify under the unwrapped file key.
    #[error("the header MAC does not verify: the header was altered")]
    HeaderMac,
    /// The payload ends before its final chunk.
    #[error("the age payload is truncated")]
    Truncated,
    /// Bytes follow the chunk marked final.
    #[error("data follows the final chunk of the age payload")]
    TrailingData,
    /// The final chunk is empty although a full chunk precedes it.
    #[error("the final chunk of the age payload is empty")]
    EmptyFinalChunk,
    /// A payload chunk does not authenticate.
    #[error("a chunk of the age payload failed authentication")]
    PayloadAuth,
    /// An identity file line is not an `AGE-SECRET-KEY-1…` key.
    #[error("invalid age identity on line {line}: {reason}")]
    Identity { line: usize, reason: &'static str },
    /// No identity was given, or an identity file holds none.
    #[error("no age identity given")]
    NoIdentities,
}
