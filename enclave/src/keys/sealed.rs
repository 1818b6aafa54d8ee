//! Sealed objects (DESIGN §10): secrets that outlive a boot, as blobs the relay stores.
//!
//! Each object has its own data key (DEK); the payload is AES-256-GCM under the DEK with
//! AAD = id ‖ kind ‖ version, and the DEK is wrapped (AES-256-GCM) by the KEK with the same
//! header in its AAD. A blob moved to another id, kind or version, cut short or altered does
//! not open. The blob names its KEK by a short id, so a KEK rotation opens old blobs with the
//! previous KEK and re-wraps them under the current one.
//!
//! Layout: `SVS1` ‖ kek id (8) ‖ id (16) ‖ kind length (1) ‖ kind ‖ version (4, big-endian) ‖
//! wrap nonce (12) ‖ wrapped DEK (48) ‖ nonce (12) ‖ payload ciphertext with its tag.

use aes_gcm::aead::{Aead, KeyInit, Payload};
use aes_gcm::{Aes256Gcm, Nonce};
use rand_core::{OsRng, RngCore};
use zeroize::Zeroizing;

const MAGIC: &[u8; 4] = b"SVS1";
const PAYLOAD_AAD: &[u8] = b"SVC-SEALED-v1";
const DEK_AAD: &[u8] = b"SVC-DEK-v1";
/// Longest object kind.
pub const MAX_KIND: usize = 32;
const TAG: usize = 16;

pub type Key = Zeroizing<[u8; 32]>;

/// Who an object is: the part of a blob bound into both AADs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    pub id: [u8; 16],
    pub kind: String,
    pub version: u32,
}

impl Header {
    fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(16 + 1 + self.kind.len() + 4);
        out.extend_from_slice(&self.id);
        out.push(self.kind.len() as u8);
        out.extend_from_slice(self.kind.as_bytes());
        out.extend_from_slice(&self.version.to_be_bytes());
        out
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SealError {
    #[error("the blob is not a sealed object")]
    Malformed,
    #[error("the blob was sealed under a key this enclave does not hold")]
    UnknownKek,
    #[error("the blob does not open: altered, moved or cut short")]
    Tampered,
    #[error("object kinds are 1 to {MAX_KIND} characters of a-z, 0-9 and -")]
    BadKind,
}

/// The KEKs of the current bundle: blobs are sealed under `current`, and open under any.
pub struct Keks {
    pub current: Key,
    pub previous: Vec<Key>,
}

/// The short id a blob names its KEK by (not secret: a hash of the KEK with a label).
pub fn kek_id(kek: &[u8; 32]) -> [u8; 8] {
    let digest = shared::sha256(&[b"SVC-KEK-ID".as_slice(), kek].concat());
    digest[..8].try_into().expect("8 of 32 bytes")
}

fn check_kind(kind: &str) -> Result<(), SealError> {
    let ok = (1..=MAX_KIND).contains(&kind.len())
        && kind.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    if ok { Ok(()) } else { Err(SealError::BadKind) }
}

fn aead(key: &[u8; 32]) -> Aes256Gcm {
    Aes256Gcm::new(key.into())
}

/// Seals `plaintext` as the object `header`, under the current KEK.
pub fn seal(keks: &Keks, header: &Header, plaintext: &[u8]) -> Result<Vec<u8>, SealError> {
    check_kind(&header.kind)?;
    let encoded = header.encode();
    let mut dek = Zeroizing::new([0u8; 32]);
    OsRng.fill_bytes(dek.as_mut());
    let (mut wrap_nonce, mut nonce) = ([0u8; 12], [0u8; 12]);
    OsRng.fill_bytes(&mut wrap_nonce);
    OsRng.fill_bytes(&mut nonce);
    let wrap_aad = [DEK_AAD, &encoded].concat();
    let payload_aad = [PAYLOAD_AAD, &encoded].concat();
    // AES-GCM only fails above 64 GiB of input.
    let wrapped = aead(&keks.current)
        .encrypt(Nonce::from_slice(&wrap_nonce), Payload { msg: dek.as_ref(), aad: &wrap_aad })
        .map_err(|_| SealError::Malformed)?;
    let ciphertext = aead(&dek)
        .encrypt(Nonce::from_slice(&nonce), Payload { msg: plaintext, aad: &payload_aad })
        .map_err(|_| SealError::Malformed)?;
    let mut blob = Vec::with_capacity(4 + 8 + encoded.len() + 12 + wrapped.len() + 12 + ciphertext.len());
    blob.extend_from_slice(MAGIC);
    blob.extend_from_slice(&kek_id(&keks.current));
    blob.extend_from_slice(&encoded);
    blob.extend_from_slice(&wrap_nonce);
    blob.extend_from_slice(&wrapped);
    blob.extend_from_slice(&nonce);
    blob.extend_from_slice(&ciphertext);
    Ok(blob)
}

/// An opened object; `under_previous_kek` says its blob should be re-sealed.
pub struct Opened {
    pub header: Header,
    pub plaintext: Zeroizing<Vec<u8>>,
    pub under_previous_kek: bool,
}

/// Opens a blob under whichever held KEK it names.
pub fn open(keks: &Keks, blob: &[u8]) -> Result<Opened, SealError> {
    let mut r = Reader(blob);
    if r.take(4)? != MAGIC {
        return Err(SealError::Malformed);
    }
    let named: [u8; 8] = r.take(8)?.try_into().map_err(|_| SealError::Malformed)?;
    let id: [u8; 16] = r.take(16)?.try_into().map_err(|_| SealError::Malformed)?;
    let kind_len = r.take(1)?[0] as usize;
    let kind = String::from_utf8(r.take(kind_len)?.to_vec()).map_err(|_| SealError::Malformed)?;
    check_kind(&kind).map_err(|_| SealError::Malformed)?;
    let version = u32::from_be_bytes(r.take(4)?.try_into().map_err(|_| SealError::Malformed)?);
    let wrap_nonce = r.take(12)?;
    let wrapped = r.take(32 + TAG)?;
    let nonce = r.take(12)?;
    let ciphertext = r.0;
    if ciphertext.len() < TAG {
        return Err(SealError::Malformed);
    }
    let (kek, under_previous_kek) = if kek_id(&keks.current) == named {
        (&keks.current, false)
    } else {
        (keks.previous.iter().find(|k| kek_id(k) == named).ok_or(SealError::UnknownKek)?, true)
    };
    let header = Header { id, kind, version };
    let encoded = header.encode();
    let wrap_aad = [DEK_AAD, &encoded].concat();
    let payload_aad = [PAYLOAD_AAD, &encoded].concat();
    let dek = Zeroizing::new(
        aead(kek)
            .decrypt(Nonce::from_slice(wrap_nonce), Payload { msg: wrapped, aad: &wrap_aad })
            .map_err(|_| SealError::Tampered)?,
    );
    let dek: &[u8; 32] = dek.as_slice().try_into().map_err(|_| SealError::Tampered)?;
    let plaintext = aead(dek)
        .decrypt(Nonce::from_slice(nonce), Payload { msg: ciphertext, aad: &payload_aad })
        .map_err(|_| SealError::Tampered)?;
    Ok(Opened { header, plaintext: Zeroizing::new(plaintext), under_previous_kek })
}

struct Reader<'a>(&'a [u8]);

// The plaintext is a secret: never printed.
impl std::fmt::Debug for Opened {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Opened").field("header", &self.header).finish_non_exhaustive()
    }
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], SealError> {
        if self.0.len() < n {
            return Err(SealError::Malformed);
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keks(current: u8, previous: &[u8]) -> Keks {
        Keks {
            current: Zeroizing::new([current; 32]),
            previous: previous.iter().map(|b| Zeroizing::new([*b; 32])).collect(),
        }
    }

    fn header() -> Header {
        Header { id: [5; 16], kind: "signing-key".into(), version: 1 }
    }

    #[test]
    fn a_sealed_object_opens_to_what_was_sealed() {
        let k = keks(1, &[]);
        let blob = seal(&k, &header(), b"secret seed").unwrap();
        let opened = open(&k, &blob).unwrap();
        assert_eq!(opened.header, header());
        assert_eq!(opened.plaintext.as_slice(), b"secret seed");
        assert!(!opened.under_previous_kek);
        assert!(!blob.windows(11).any(|w| w == b"secret seed"), "the payload is encrypted");
        assert_ne!(seal(&k, &header(), b"secret seed").unwrap(), blob, "fresh keys and nonces each time");
    }

    #[test]
    fn altered_moved_or_cut_blobs_do_not_open() {
        let k = keks(1, &[]);
        let blob = seal(&k, &header(), b"secret seed").unwrap();
        // Every single-bit flip is refused.
        for i in 0..blob.len() {
            let mut bad = blob.clone();
            bad[i] ^= 1;
            assert!(open(&k, &bad).is_err(), "flip at byte {i} opened");
        }
        // Swapped to another id, kind or version: rewrite the header in place.
        let id_at = 4 + 8;
        let mut other_id = blob.clone();
        other_id[id_at..id_at + 16].copy_from_slice(&[6; 16]);
        assert_eq!(open(&k, &other_id).unwrap_err(), SealError::Tampered);
        let other_kind = blob.clone();
        let kind_at = id_at + 16 + 1;
        let mut other_kind = other_kind;
        other_kind[kind_at..kind_at + 11].copy_from_slice(b"signing-kez");
        assert_eq!(open(&k, &other_kind).unwrap_err(), SealError::Tampered);
        let version_at = kind_at + 11;
        let mut other_version = blob.clone();
        other_version[version_at + 3] = 2;
        assert_eq!(open(&k, &other_version).unwrap_err(), SealError::Tampered);
        // Truncated at every length.
        for n in 0..blob.len() {
            assert!(open(&k, &blob[..n]).is_err(), "truncated to {n} opened");
        }
        let mut longer = blob.clone();
        longer.push(0);
        assert_eq!(open(&k, &longer).unwrap_err(), SealError::Tampered);
    }

    #[test]
    fn rotation_opens_old_blobs_and_only_with_a_held_kek() {
        let old = keks(1, &[]);
        let blob = seal(&old, &header(), b"seed").unwrap();
        let rotated = keks(2, &[1]);
        let opened = open(&rotated, &blob).unwrap();
        assert!(opened.under_previous_kek);
        let resealed = seal(&rotated, &opened.header, &opened.plaintext).unwrap();
        assert!(!open(&rotated, &resealed).unwrap().under_previous_kek);
        assert_eq!(open(&keks(2, &[]), &blob).unwrap_err(), SealError::UnknownKek, "the old KEK was dropped");
        assert_eq!(open(&keks(2, &[]), &resealed).unwrap().plaintext.as_slice(), b"seed");
    }

    #[test]
    fn kinds_are_checked() {
        let k = keks(1, &[]);
        for bad in ["", "UPPER", "has space", &"k".repeat(33)] {
            let h = Header { kind: bad.to_string(), ..header() };
            assert_eq!(seal(&k, &h, b"x").unwrap_err(), SealError::BadKind, "{bad:?}");
        }
    }
}
