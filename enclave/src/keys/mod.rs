//! Keys: the per-boot keys (here), the provisioned secrets (`custody.rs`) and the objects
//! sealed under their KEK (`sealed.rs`).
//!
//! Per-boot keys. Both secrets are zeroized on drop (x25519-dalek and ed25519-dalek implement
//! `ZeroizeOnDrop` with their `zeroize` features) and never leave this struct.

pub mod custody;
pub mod sealed;

use ed25519_dalek::SigningKey;
use rand_core::OsRng;
use x25519_dalek::{PublicKey, StaticSecret};

pub struct EnclaveKeys {
    /// Prompts are sealed to this key (HPKE recipient).
    x25519: StaticSecret,
    /// Signs receipts and attestation challenges.
    ed25519: SigningKey,
    x25519_public: [u8; 32],
}

impl EnclaveKeys {
    /// Fresh keys from the kernel RNG (in a TD, seeded by RDRAND/RDSEED, not by the host).
    pub fn generate() -> Self {
        let x25519 = StaticSecret::random_from_rng(OsRng);
        let ed25519 = SigningKey::generate(&mut OsRng);
        let x25519_public = PublicKey::from(&x25519).to_bytes();
        EnclaveKeys { x25519, ed25519, x25519_public }
    }

    /// The X25519 public key (`teePublicKey`).
    pub fn tee_public(&self) -> [u8; 32] {
        self.x25519_public
    }

    /// The ed25519 public key (`enclavePublicKey`).
    pub fn enclave_public(&self) -> [u8; 32] {
        self.ed25519.verifying_key().to_bytes()
    }

    pub fn x25519(&self) -> &StaticSecret {
        &self.x25519
    }

    pub fn signer(&self) -> &SigningKey {
        &self.ed25519
    }
}

impl std::fmt::Debug for EnclaveKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EnclaveKeys")
            .field("tee_public", &hex::encode(self.tee_public()))
            .field("enclave_public", &hex::encode(self.enclave_public()))
            .finish_non_exhaustive()
    }
}

/// An ed25519 seed as sealed objects carry it (base64 in their JSON), wiped when dropped.
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct SeedText(String);

impl SeedText {
    pub fn of(key: &SigningKey) -> Self {
        SeedText(shared::b64::encode(key.to_bytes()))
    }

    pub fn key(&self) -> Option<SigningKey> {
        let seed = zeroize::Zeroizing::new(shared::b64::decode_array::<32>(&self.0)?);
        Some(SigningKey::from_bytes(&seed))
    }
}

impl Drop for SeedText {
    fn drop(&mut self) {
        zeroize::Zeroize::zeroize(&mut self.0);
    }
}
