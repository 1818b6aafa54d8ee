//! The encrypted reply, DESIGN.md §4.2: the Oblivious HTTP response construction
//! (RFC 9458 §4.4) over the prompt's HPKE context, with plain HKDF-SHA256 and ChaCha20Poly1305.

use chacha20poly1305::ChaCha20Poly1305;
use chacha20poly1305::aead::{Aead, KeyInit};
use hkdf::Hkdf;
use rand_core::{CryptoRng, RngCore};
use serde::{Deserialize, Serialize};
use sha2::Sha256;
use zeroize::Zeroizing;

use crate::{b64, envelope, hpke};

pub const EXPORT_LABEL: &[u8] = b"SVC-REPLY-v1";
pub const RESPONSE_NONCE_LEN: usize = 32;

/// `encryptedResponse` on the wire.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct EncryptedResponse {
    pub ciphertext: String,
    pub nonce: String,
    pub algorithm: String,
    pub version: u64,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ReplyError {
    #[error("encryptedResponse is malformed: {0}")]
    Malformed(&'static str),
    #[error("encryptedResponse does not decrypt with this request's key")]
    OpenFailed,
}

fn reply_key(ctx: &hpke::Context, enc: &[u8; 32], response_nonce: &[u8; 32]) -> (Zeroizing<[u8; 32]>, [u8; 12]) {
    let mut secret = Zeroizing::new([0u8; 32]);
    ctx.export(EXPORT_LABEL, secret.as_mut());
    let mut salt = [0u8; 64];
    salt[..32].copy_from_slice(enc);
    salt[32..].copy_from_slice(response_nonce);
    let hk = Hkdf::<Sha256>::new(Some(&salt), secret.as_ref());
    let mut key = Zeroizing::new([0u8; 32]);
    let mut nonce = [0u8; 12];
    hk.expand(b"key", key.as_mut()).expect("32 bytes is a valid HKDF length");
    hk.expand(b"nonce", &mut nonce).expect("12 bytes is a valid HKDF length");
    (key, nonce)
}

/// Enclave side: seals `plaintext` to the client that sent the envelope whose `enc` is given.
pub fn seal(
    ctx: &hpke::Context,
    enc: &[u8; 32],
    plaintext: &[u8],
    rng: &mut (impl RngCore + CryptoRng),
) -> EncryptedResponse {
    let mut response_nonce = [0u8; RESPONSE_NONCE_LEN];
    rng.fill_bytes(&mut response_nonce);
    let (key, nonce) = reply_key(ctx, enc, &response_nonce);
    let ct = ChaCha20Poly1305::new(key.as_ref().into())
        .encrypt((&nonce).into(), plaintext)
        .expect("ChaCha20Poly1305 encryption cannot fail below 256 GiB");
    EncryptedResponse {
        ciphertext: b64::encode(ct),
        nonce: b64::encode(response_nonce),
        algorithm: envelope::ALGORITHM.to_string(),
        version: envelope::VERSION,
    }
}

/// Client side: opens the reply with the context kept from [`envelope::seal`].
#[cfg(feature = "sender")]
pub fn open(ctx: &hpke::Context, enc: &[u8; 32], reply: &EncryptedResponse) -> Result<Zeroizing<Vec<u8>>, ReplyError> {
    if reply.algorithm != envelope::ALGORITHM {
        return Err(ReplyError::Malformed("unsupported algorithm"));
    }
    if reply.version != envelope::VERSION {
        return Err(ReplyError::Malformed("unsupported version"));
    }
    let response_nonce: [u8; 32] =
        b64::decode_array(&reply.nonce).ok_or(ReplyError::Malformed("nonce must be 32 bytes of base64"))?;
    let ct = b64::decode(&reply.ciphertext).map_err(|_| ReplyError::Malformed("ciphertext is not base64"))?;
    let (key, nonce) = reply_key(ctx, enc, &response_nonce);
    ChaCha20Poly1305::new(key.as_ref().into())
        .decrypt((&nonce).into(), ct.as_slice())
        .map(Zeroizing::new)
        .map_err(|_| ReplyError::OpenFailed)
}

// The tests seal as a client does.
#[cfg(all(test, feature = "sender"))]
mod tests {
    use super::*;
    use rand_core::OsRng;

    fn pair() -> (envelope::Envelope, hpke::Context, hpke::Context) {
        let (sk, pk) = hpke::generate_key_pair(&mut OsRng);
        let (env, client_ctx) = envelope::seal(&pk, br#"{"prompt":"hi"}"#, &mut OsRng).unwrap();
        let (_, enclave_ctx) = env.open(&sk, &pk).unwrap();
        (env, client_ctx, enclave_ctx)
    }

    #[test]
    fn client_reads_what_the_enclave_sealed() {
        let (env, client_ctx, enclave_ctx) = pair();
        let sealed = seal(&enclave_ctx, &env.enc, b"the answer", &mut OsRng);
        assert_eq!(b64::decode(&sealed.nonce).unwrap().len(), 32);
        assert_eq!(open(&client_ctx, &env.enc, &sealed).unwrap().as_slice(), b"the answer");
    }

    #[test]
    fn another_request_cannot_read_it() {
        let (env, _, enclave_ctx) = pair();
        let (other_env, other_ctx, _) = pair();
        let sealed = seal(&enclave_ctx, &env.enc, b"secret", &mut OsRng);
        assert_eq!(open(&other_ctx, &other_env.enc, &sealed), Err(ReplyError::OpenFailed));
    }

    #[test]
    fn tampering_is_detected() {
        let (env, client_ctx, enclave_ctx) = pair();
        let mut sealed = seal(&enclave_ctx, &env.enc, b"secret", &mut OsRng);
        let mut nonce = b64::decode(&sealed.nonce).unwrap();
        nonce[0] ^= 1;
        sealed.nonce = b64::encode(nonce);
        assert_eq!(open(&client_ctx, &env.enc, &sealed), Err(ReplyError::OpenFailed));

        let mut sealed = seal(&enclave_ctx, &env.enc, b"secret", &mut OsRng);
        sealed.version = 2;
        assert_eq!(open(&client_ctx, &env.enc, &sealed), Err(ReplyError::Malformed("unsupported version")));
    }

    /// The construction written out step by step from DESIGN.md §4.2 with independent calls,
    /// so a change in `reply_key` that both sides would share still gets caught.
    #[test]
    fn matches_the_spec_step_by_step() {
        let (env, client_ctx, enclave_ctx) = pair();
        let sealed = seal(&enclave_ctx, &env.enc, b"spec", &mut OsRng);
        let mut secret = [0u8; 32];
        client_ctx.export(b"SVC-REPLY-v1", &mut secret);
        let response_nonce = b64::decode(&sealed.nonce).unwrap();
        let salt = [env.enc.as_slice(), &response_nonce].concat();
        let (prk, _) = Hkdf::<Sha256>::extract(Some(&salt), &secret);
        let hk = Hkdf::<Sha256>::from_prk(&prk).unwrap();
        let (mut key, mut nonce) = ([0u8; 32], [0u8; 12]);
        hk.expand(b"key", &mut key).unwrap();
        hk.expand(b"nonce", &mut nonce).unwrap();
        let pt = ChaCha20Poly1305::new((&key).into())
            .decrypt((&nonce).into(), b64::decode(&sealed.ciphertext).unwrap().as_slice())
            .unwrap();
        assert_eq!(pt, b"spec");
    }
}
