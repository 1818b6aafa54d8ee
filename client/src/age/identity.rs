//! What decrypts: an X25519 secret key from an age identity file, or a passphrase.

use std::fmt;

use zeroize::Zeroizing;

use super::{AgeError, bech32};

/// A secret that can unwrap a file key.
pub enum Identity {
    /// An X25519 secret scalar (`AGE-SECRET-KEY-1…`); unwraps `X25519` stanzas.
    X25519(Zeroizing<[u8; 32]>),
    /// A passphrase; unwraps an `scrypt` stanza.
    Passphrase(Zeroizing<String>),
}

impl Identity {
    /// Every key in an age identity file, as `age-keygen -o` writes it: one `AGE-SECRET-KEY-1…`
    /// per line; empty lines and lines starting with `#` are skipped.
    pub fn parse_file(text: &str) -> Result<Vec<Identity>, AgeError> {
        let mut identities = Vec::new();
        for (index, line) in text.lines().enumerate() {
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let key =
                bech32::decode_secret_key(line).map_err(|reason| AgeError::Identity { line: index + 1, reason })?;
            identities.push(Identity::X25519(key));
        }
        if identities.is_empty() {
            return Err(AgeError::NoIdentities);
        }
        Ok(identities)
    }

    /// One `AGE-SECRET-KEY-1…` key.
    pub fn from_secret_key(text: &str) -> Result<Identity, AgeError> {
        bech32::decode_secret_key(text).map(Identity::X25519).map_err(|reason| AgeError::Identity { line: 1, reason })
    }
}

/// Names the kind only: the secret never reaches a log.
impl fmt::Debug for Identity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Identity::X25519(_) => "Identity::X25519(<secret>)",
            Identity::Passphrase(_) => "Identity::Passphrase(<secret>)",
        })
    }
}
