//! What the fuzz targets (`fuzz_targets/`) and their seed generator (`examples/seeds.rs`)
//! share: fixed keys, a deterministic random source, the development-PKI attestation fixture
//! and a stand-in model server. The seeds are made with the same fixtures the targets check
//! against, so a seed envelope opens, a seed receipt verifies and a seed quote is accepted.

pub mod attest;
pub mod stub;
pub mod x402;

use std::sync::OnceLock;

use ed25519_dalek::SigningKey;
use rand_core::{CryptoRng, RngCore};
use shared::address::Address;
use shared::envelope::{self, Envelope};
use shared::hpke;
use x25519_dalek::StaticSecret;

/// A deterministic random source: sha256(seed ‖ counter) blocks. Fixtures only, never keys
/// anyone relies on.
pub struct SeededRng {
    seed: [u8; 32],
    counter: u64,
    block: [u8; 32],
    used: usize,
}

impl SeededRng {
    pub fn new(seed: u64) -> Self {
        SeededRng { seed: shared::sha256(&seed.to_le_bytes()), counter: 0, block: [0; 32], used: 32 }
    }
}

impl RngCore for SeededRng {
    fn next_u32(&mut self) -> u32 {
        let mut b = [0; 4];
        self.fill_bytes(&mut b);
        u32::from_le_bytes(b)
    }

    fn next_u64(&mut self) -> u64 {
        let mut b = [0; 8];
        self.fill_bytes(&mut b);
        u64::from_le_bytes(b)
    }

    fn fill_bytes(&mut self, dest: &mut [u8]) {
        for byte in dest {
            if self.used == 32 {
                self.block = shared::sha256(&[&self.seed[..], &self.counter.to_le_bytes()].concat());
                self.counter += 1;
                self.used = 0;
            }
            *byte = self.block[self.used];
            self.used += 1;
        }
    }

    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), rand_core::Error> {
        self.fill_bytes(dest);
        Ok(())
    }
}

impl CryptoRng for SeededRng {}

/// The enclave's X25519 key pair every envelope target opens with.
pub fn enclave_keys() -> &'static (StaticSecret, [u8; 32]) {
    static KEYS: OnceLock<(StaticSecret, [u8; 32])> = OnceLock::new();
    KEYS.get_or_init(|| hpke::derive_key_pair(b"svc fuzz enclave key"))
}

/// The enclave's receipt signing key.
pub fn receipt_key() -> SigningKey {
    SigningKey::from_bytes(&[0x33; 32])
}

/// The attestation program id receipts are checked under (the service's default).
pub fn program_id() -> Address {
    shared::address::default_program_id()
}

/// One request as a client sealed it and the enclave opened it: the envelope, and the HPKE
/// context on each side (the reply is sealed with the enclave's, opened with the client's).
pub struct Exchange {
    pub envelope: Envelope,
    pub client: hpke::Context,
    pub enclave: hpke::Context,
}

/// The prompt of [`exchange`].
pub const EXCHANGE_PROMPT: &[u8] = br#"{"prompt":"What is the capital of France?","timestamp":1800000000}"#;

/// A fixed exchange, the same in every process.
pub fn exchange() -> &'static Exchange {
    static EXCHANGE: OnceLock<Exchange> = OnceLock::new();
    EXCHANGE.get_or_init(|| {
        let (sk, pk) = enclave_keys();
        let (envelope, client) =
            envelope::seal(pk, EXCHANGE_PROMPT, &mut SeededRng::new(1)).expect("sealing to a valid key works");
        let (_, enclave) = envelope.open(sk, pk).expect("the enclave opens what was sealed to it");
        Exchange { envelope, client, enclave }
    })
}

/// Splits `data` at NUL bytes into at most `n` parts (the last keeps any further NULs).
pub fn split_nul(data: &[u8], n: usize) -> Vec<&[u8]> {
    data.splitn(n, |b| *b == 0).collect()
}
