//! Decrypt-only age v1 (<https://age-encryption.org/v1>, C2SP): X25519 and scrypt recipient
//! stanzas, the header MAC, the STREAM payload, and the strict ASCII armor. The key holder keeps
//! the enclave's secrets bundle in such a file, encrypted by the operator with the `age` CLI.
//!
//! The whole file is read into memory and decrypted at once: either every chunk authenticates
//! and the whole plaintext is returned, or nothing is.

mod armor;
mod bech32;
mod error;
mod header;
mod identity;
mod stream;
mod unwrap;

use hkdf::Hkdf;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use zeroize::Zeroizing;

pub use error::AgeError;
pub use identity::Identity;

/// The 16-byte symmetric key a file is encrypted under, as unwrapped from a stanza.
type FileKey = Zeroizing<[u8; 16]>;

/// Decrypts an age file, binary or ASCII-armored, with the first of `identities` that unwraps
/// one of its recipient stanzas.
pub fn decrypt(file: &[u8], identities: &[Identity]) -> Result<Zeroizing<Vec<u8>>, AgeError> {
    let dearmored;
    let binary = if armor::is_armored(file) {
        dearmored = armor::decode(file)?;
        &dearmored[..]
    } else {
        file
    };
    let header = header::parse(binary)?;
    if identities.is_empty() {
        return Err(AgeError::NoIdentities);
    }
    let file_key = unwrap::file_key(&header.stanzas, identities)?;
    let mut mac = Hmac::<Sha256>::new_from_slice(hkdf(None, file_key.as_ref(), b"header").as_ref())
        .expect("HMAC takes keys of any length");
    mac.update(header.mac_input);
    mac.verify_slice(&header.mac).map_err(|_| AgeError::HeaderMac)?;
    stream::decrypt(&file_key, header.payload)
}

/// HKDF-SHA256 to one 32-byte key.
fn hkdf(salt: Option<&[u8]>, ikm: &[u8], info: &[u8]) -> Zeroizing<[u8; 32]> {
    let mut key = Zeroizing::new([0u8; 32]);
    Hkdf::<Sha256>::new(salt, ikm).expand(info, key.as_mut()).expect("32 bytes is a valid HKDF length");
    key
}
