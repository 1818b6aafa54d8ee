//! HPKE (RFC 9180), mode base, for exactly one suite:
//! DHKEM(X25519, HKDF-SHA256) / HKDF-SHA256 / ChaCha20Poly1305 (0x0020, 0x0001, 0x0003).
//!
//! One suite only, on purpose: no negotiation, no algorithm agility to get wrong. The
//! labeled HKDF helpers follow RFC 9180 §4 and §7.1 literally; the RFC's test vectors for
//! this suite (Appendix A.2.1) are the unit tests.

use chacha20poly1305::ChaCha20Poly1305;
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use hkdf::Hkdf;
use rand_core::{CryptoRng, RngCore};
use sha2::Sha256;
use x25519_dalek::{PublicKey, StaticSecret};
use zeroize::{Zeroize, ZeroizeOnDrop, Zeroizing};

pub const KEM_ID: u16 = 0x0020;
pub const KDF_ID: u16 = 0x0001;
pub const AEAD_ID: u16 = 0x0003;
/// Length of `enc` (the ephemeral X25519 public key).
pub const N_ENC: usize = 32;
pub const N_SECRET: usize = 32;
pub const N_K: usize = 32;
pub const N_N: usize = 12;
pub const N_H: usize = 32;
/// ChaCha20Poly1305 tag length.
pub const N_T: usize = 16;

const KEM_SUITE: [u8; 5] = [b'K', b'E', b'M', 0x00, 0x20];
const HPKE_SUITE: [u8; 10] = [b'H', b'P', b'K', b'E', 0x00, 0x20, 0x00, 0x01, 0x00, 0x03];
const MODE_BASE: u8 = 0x00;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum HpkeError {
    /// The X25519 shared secret was all zeros (small-order public key); RFC 9180 §7.1.4.
    #[error("invalid public key (small order)")]
    SmallOrderKey,
    #[error("authentication failed")]
    OpenFailed,
    #[error("sequence number overflow")]
    SequenceOverflow,
}

fn labeled_extract(suite: &[u8], salt: &[u8], label: &[u8], ikm: &[u8]) -> Zeroizing<[u8; N_H]> {
    let mut labeled_ikm = Zeroizing::new(Vec::with_capacity(7 + suite.len() + label.len() + ikm.len()));
    labeled_ikm.extend_from_slice(b"HPKE-v1");
    labeled_ikm.extend_from_slice(suite);
    labeled_ikm.extend_from_slice(label);
    labeled_ikm.extend_from_slice(ikm);
    let (prk, _) = Hkdf::<Sha256>::extract(Some(salt), &labeled_ikm);
    Zeroizing::new(prk.into())
}

fn labeled_expand(suite: &[u8], prk: &[u8; N_H], label: &[u8], info: &[u8], out: &mut [u8]) {
    let len = (out.len() as u16).to_be_bytes();
    let hk = Hkdf::<Sha256>::from_prk(prk).expect("PRK is HashLen bytes");
    hk.expand_multi_info(&[&len, b"HPKE-v1", suite, label, info], out)
        .expect("output length is far below 255 * HashLen");
}

/// DHKEM ExtractAndExpand (RFC 9180 §4.1).
fn extract_and_expand(dh: &[u8; 32], enc: &[u8; 32], pk_r: &[u8; 32]) -> Zeroizing<[u8; N_SECRET]> {
    let mut kem_context = [0u8; 64];
    kem_context[..32].copy_from_slice(enc);
    kem_context[32..].copy_from_slice(pk_r);
    let eae_prk = labeled_extract(&KEM_SUITE, b"", b"eae_prk", dh);
    let mut shared = Zeroizing::new([0u8; N_SECRET]);
    labeled_expand(&KEM_SUITE, &eae_prk, b"shared_secret", &kem_context, shared.as_mut());
    shared
}

fn dh(sk: &StaticSecret, pk: &[u8; 32]) -> Result<Zeroizing<[u8; 32]>, HpkeError> {
    let shared = sk.diffie_hellman(&PublicKey::from(*pk));
    if !shared.was_contributory() {
        return Err(HpkeError::SmallOrderKey);
    }
    Ok(Zeroizing::new(shared.to_bytes()))
}

/// DeriveKeyPair (RFC 9180 §7.1.3) for X25519.
pub fn derive_key_pair(ikm: &[u8]) -> (StaticSecret, [u8; 32]) {
    let dkp_prk = labeled_extract(&KEM_SUITE, b"", b"dkp_prk", ikm);
    let mut sk = Zeroizing::new([0u8; 32]);
    labeled_expand(&KEM_SUITE, &dkp_prk, b"sk", b"", sk.as_mut());
    let sk = StaticSecret::from(*sk);
    let pk = PublicKey::from(&sk).to_bytes();
    (sk, pk)
}

/// Generates a fresh X25519 key pair.
pub fn generate_key_pair(rng: &mut (impl RngCore + CryptoRng)) -> (StaticSecret, [u8; 32]) {
    let sk = StaticSecret::random_from_rng(rng);
    let pk = PublicKey::from(&sk).to_bytes();
    (sk, pk)
}

/// The key schedule's outputs (RFC 9180 §5.1), mode base, empty PSK.
#[derive(Zeroize, ZeroizeOnDrop)]
pub struct Context {
    key: [u8; N_K],
    base_nonce: [u8; N_N],
    exporter_secret: [u8; N_H],
    seq: u64,
}

impl Context {
    fn key_schedule(shared_secret: &[u8; N_SECRET], info: &[u8]) -> Self {
        let psk_id_hash = labeled_extract(&HPKE_SUITE, b"", b"psk_id_hash", b"");
        let info_hash = labeled_extract(&HPKE_SUITE, b"", b"info_hash", info);
        let mut ksc = [0u8; 1 + 2 * N_H];
        ksc[0] = MODE_BASE;
        ksc[1..33].copy_from_slice(psk_id_hash.as_ref());
        ksc[33..].copy_from_slice(info_hash.as_ref());
        let secret = labeled_extract(&HPKE_SUITE, shared_secret, b"secret", b"");
        let mut ctx = Context { key: [0; N_K], base_nonce: [0; N_N], exporter_secret: [0; N_H], seq: 0 };
        labeled_expand(&HPKE_SUITE, &secret, b"key", &ksc, &mut ctx.key);
        labeled_expand(&HPKE_SUITE, &secret, b"base_nonce", &ksc, &mut ctx.base_nonce);
        labeled_expand(&HPKE_SUITE, &secret, b"exp", &ksc, &mut ctx.exporter_secret);
        ctx
    }

    fn next_nonce(&mut self) -> Result<[u8; N_N], HpkeError> {
        if self.seq == u64::MAX {
            return Err(HpkeError::SequenceOverflow);
        }
        let mut nonce = self.base_nonce;
        for (n, s) in nonce[N_N - 8..].iter_mut().zip(self.seq.to_be_bytes()) {
            *n ^= s;
        }
        self.seq += 1;
        Ok(nonce)
    }

    fn aead(&self) -> ChaCha20Poly1305 {
        ChaCha20Poly1305::new((&self.key).into())
    }

    pub fn seal(&mut self, aad: &[u8], pt: &[u8]) -> Result<Vec<u8>, HpkeError> {
        let nonce = self.next_nonce()?;
        self.aead().encrypt((&nonce).into(), Payload { msg: pt, aad }).map_err(|_| HpkeError::OpenFailed)
    }

    /// Opens `ct`; the sequence number only advances on success, as RFC 9180 §5.2 requires.
    pub fn open(&mut self, aad: &[u8], ct: &[u8]) -> Result<Zeroizing<Vec<u8>>, HpkeError> {
        if self.seq == u64::MAX {
            return Err(HpkeError::SequenceOverflow);
        }
        let mut nonce = self.base_nonce;
        for (n, s) in nonce[N_N - 8..].iter_mut().zip(self.seq.to_be_bytes()) {
            *n ^= s;
        }
        let pt = self.aead().decrypt((&nonce).into(), Payload { msg: ct, aad }).map_err(|_| HpkeError::OpenFailed)?;
        self.seq += 1;
        Ok(Zeroizing::new(pt))
    }

    /// Secret export (RFC 9180 §5.3).
    pub fn export(&self, exporter_context: &[u8], out: &mut [u8]) {
        labeled_expand(&HPKE_SUITE, &self.exporter_secret, b"sec", exporter_context, out);
    }
}

/// SetupBaseS with a caller-chosen ephemeral key (the RFC vectors fix it; callers use
/// [`setup_sender`]).
#[cfg(feature = "sender")]
pub fn setup_sender_with_ephemeral(
    pk_r: &[u8; 32],
    info: &[u8],
    sk_e: &StaticSecret,
) -> Result<([u8; N_ENC], Context), HpkeError> {
    let enc = PublicKey::from(sk_e).to_bytes();
    let dh = dh(sk_e, pk_r)?;
    let shared = extract_and_expand(&dh, &enc, pk_r);
    Ok((enc, Context::key_schedule(&shared, info)))
}

/// SetupBaseS: encapsulates to `pk_r` with a fresh ephemeral key.
#[cfg(feature = "sender")]
pub fn setup_sender(
    pk_r: &[u8; 32],
    info: &[u8],
    rng: &mut (impl RngCore + CryptoRng),
) -> Result<([u8; N_ENC], Context), HpkeError> {
    let sk_e = StaticSecret::random_from_rng(rng);
    setup_sender_with_ephemeral(pk_r, info, &sk_e)
}

/// SetupBaseR: decapsulates `enc` with the recipient's key pair. The public half is passed in
/// because the recipient already holds it: deriving it again costs a scalar multiplication.
pub fn setup_receiver(
    enc: &[u8; N_ENC],
    sk_r: &StaticSecret,
    pk_r: &[u8; 32],
    info: &[u8],
) -> Result<Context, HpkeError> {
    debug_assert_eq!(PublicKey::from(sk_r).to_bytes(), *pk_r, "pk_r must belong to sk_r");
    let dh = dh(sk_r, enc)?;
    let shared = extract_and_expand(&dh, enc, pk_r);
    Ok(Context::key_schedule(&shared, info))
}

// The tests seal as a client does.
#[cfg(all(test, feature = "sender"))]
mod tests;
