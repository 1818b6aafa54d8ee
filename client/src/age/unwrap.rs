//! Recipient stanzas: an identity unwraps the file key from an `X25519` or `scrypt` stanza.
//! Stanzas of other types are skipped; a malformed stanza of a type we read refuses the file.

use chacha20poly1305::aead::AeadInPlace;
use chacha20poly1305::{ChaCha20Poly1305, KeyInit, Nonce, Tag};
use x25519_dalek::{PublicKey, StaticSecret};
use zeroize::Zeroizing;

use super::header::{Stanza, base64};
use super::{AgeError, FileKey, Identity, hkdf};

/// The reference's cap on the scrypt work factor: log2 N ≤ 22 (4 GiB of memory at r = 8).
const MAX_LOG_N: u8 = 22;

/// The file key from the first identity, in order, that unwraps a stanza, stanzas in order.
pub(super) fn file_key(stanzas: &[Stanza<'_>], identities: &[Identity]) -> Result<FileKey, AgeError> {
    if stanzas.iter().any(|s| s.kind == "scrypt") && stanzas.len() != 1 {
        return Err(AgeError::Header("an scrypt stanza must be the only stanza"));
    }
    for identity in identities {
        for stanza in stanzas {
            let key = match (identity, stanza.kind) {
                (Identity::X25519(secret), "X25519") => x25519(secret, stanza)?,
                (Identity::Passphrase(passphrase), "scrypt") => scrypt(passphrase, stanza)?,
                _ => None,
            };
            if let Some(key) = key {
                return Ok(key);
            }
        }
    }
    Err(AgeError::NoMatch)
}

/// `-> X25519 <ephemeral share>`: the wrap key is HKDF(salt = share ‖ our public key, ikm = the
/// shared secret), which must not be all zero (a low-order share).
fn x25519(secret: &Zeroizing<[u8; 32]>, stanza: &Stanza<'_>) -> Result<Option<FileKey>, AgeError> {
    let invalid = |reason| AgeError::Stanza { kind: "X25519", reason };
    let [share] = stanza.args[..] else {
        return Err(invalid("expected exactly one argument"));
    };
    let share: [u8; 32] = base64(share.as_bytes())
        .and_then(|share| share.try_into().ok())
        .ok_or(invalid("the share is not 32 bytes of canonical base64"))?;
    check_body(stanza, "X25519")?;
    let secret = StaticSecret::from(**secret);
    let shared = secret.diffie_hellman(&PublicKey::from(share));
    if !shared.was_contributory() {
        return Err(invalid("the shared secret is all zero"));
    }
    let mut salt = [0u8; 64];
    salt[..32].copy_from_slice(&share);
    salt[32..].copy_from_slice(PublicKey::from(&secret).as_bytes());
    Ok(open(&hkdf(Some(&salt), shared.as_bytes(), b"age-encryption.org/v1/X25519"), &stanza.body))
}

/// `-> scrypt <salt> <log2 N>`: the wrap key is scrypt(passphrase, label ‖ salt, N, r = 8, p = 1).
fn scrypt(passphrase: &str, stanza: &Stanza<'_>) -> Result<Option<FileKey>, AgeError> {
    let invalid = |reason| AgeError::Stanza { kind: "scrypt", reason };
    let [salt, log_n] = stanza.args[..] else {
        return Err(invalid("expected exactly two arguments"));
    };
    let salt: [u8; 16] = base64(salt.as_bytes())
        .and_then(|salt| salt.try_into().ok())
        .ok_or(invalid("the salt is not 16 bytes of canonical base64"))?;
    if log_n.starts_with('0') || !log_n.bytes().all(|b| b.is_ascii_digit()) {
        return Err(invalid("the work factor is not a positive decimal without leading zeros"));
    }
    let log_n = log_n.parse().ok().filter(|&n| n <= MAX_LOG_N).ok_or(invalid("the work factor is above 2^22"))?;
    check_body(stanza, "scrypt")?;
    let params = scrypt::Params::new(log_n, 8, 1, 32).map_err(|_| invalid("invalid work factor"))?;
    let mut key = Zeroizing::new([0u8; 32]);
    let label_salt = [&b"age-encryption.org/v1/scrypt"[..], &salt].concat();
    scrypt::scrypt(passphrase.as_bytes(), &label_salt, &params, key.as_mut())
        .map_err(|_| invalid("invalid scrypt output length"))?;
    Ok(open(&key, &stanza.body))
}

/// A wrapped file key is 16 bytes and a 16-byte tag.
fn check_body(stanza: &Stanza<'_>, kind: &'static str) -> Result<(), AgeError> {
    match stanza.body.len() {
        32 => Ok(()),
        _ => Err(AgeError::Stanza { kind, reason: "the wrapped file key is not 16 bytes" }),
    }
}

/// The file key if the body authenticates under `key` (zero nonce), else no match.
fn open(key: &Zeroizing<[u8; 32]>, body: &[u8]) -> Option<FileKey> {
    let (wrapped, tag) = body.split_at(16);
    let mut file_key = Zeroizing::new([0u8; 16]);
    file_key.copy_from_slice(wrapped);
    ChaCha20Poly1305::new(key.as_ref().into())
        .decrypt_in_place_detached(&Nonce::default(), b"", file_key.as_mut(), Tag::from_slice(tag))
        .ok()
        .map(|()| file_key)
}
