//! The payload: a 16-byte nonce, then STREAM chunks of 64 KiB of plaintext under
//! ChaCha20-Poly1305, each nonce an 11-byte big-endian counter and a last-chunk flag byte.

use chacha20poly1305::aead::AeadInPlace;
use chacha20poly1305::{ChaCha20Poly1305, KeyInit, Nonce, Tag};
use zeroize::Zeroizing;

use super::{AgeError, FileKey, hkdf};

const NONCE_LEN: usize = 16;
const CHUNK: usize = 64 * 1024;
const TAG: usize = 16;

/// The whole plaintext, or an error if any chunk is missing, misplaced or altered.
pub(super) fn decrypt(file_key: &FileKey, payload: &[u8]) -> Result<Zeroizing<Vec<u8>>, AgeError> {
    let (nonce, chunks) = payload.split_at_checked(NONCE_LEN).ok_or(AgeError::Header("no payload nonce"))?;
    let aead = ChaCha20Poly1305::new(hkdf(Some(nonce), file_key.as_ref(), b"payload").as_ref().into());
    if chunks.is_empty() {
        return Err(AgeError::Truncated);
    }
    let count = chunks.len().div_ceil(CHUNK + TAG);
    // Room for every chunk up front: a growing Vec would leave plaintext in freed memory.
    let mut out = Zeroizing::new(Vec::with_capacity(chunks.len()));
    for (index, chunk) in chunks.chunks(CHUNK + TAG).enumerate() {
        let last = index + 1 == count;
        if chunk.len() < TAG {
            return Err(AgeError::Truncated);
        }
        let (ciphertext, tag) = chunk.split_at(chunk.len() - TAG);
        if last && index > 0 && ciphertext.is_empty() {
            return Err(AgeError::EmptyFinalChunk);
        }
        let start = out.len();
        out.extend_from_slice(ciphertext);
        // Decrypting in place leaves the buffer untouched when the tag does not verify.
        let mut open = |final_flag: bool| {
            let mut nonce = [0u8; 12];
            nonce[3..11].copy_from_slice(&(index as u64).to_be_bytes());
            nonce[11] = u8::from(final_flag);
            aead.decrypt_in_place_detached(Nonce::from_slice(&nonce), b"", &mut out[start..], Tag::from_slice(tag))
                .is_ok()
        };
        if !open(last) {
            // Opening under the other flag tells a misplaced final chunk from a corrupt one.
            return Err(match (open(!last), last) {
                (true, true) => AgeError::Truncated,
                (true, false) => AgeError::TrailingData,
                (false, _) => AgeError::PayloadAuth,
            });
        }
    }
    Ok(out)
}
