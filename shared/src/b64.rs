//! Standard, padded base64 as the contract uses it everywhere.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;

pub fn encode(bytes: impl AsRef<[u8]>) -> String {
    STANDARD.encode(bytes)
}

pub fn decode(text: &str) -> Result<Vec<u8>, base64::DecodeError> {
    STANDARD.decode(text)
}

/// Decodes exactly `N` bytes; `None` on bad base64 or the wrong length.
pub fn decode_array<const N: usize>(text: &str) -> Option<[u8; N]> {
    decode(text).ok()?.try_into().ok()
}
