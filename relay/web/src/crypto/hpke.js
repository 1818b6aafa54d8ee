// The one HPKE suite of DESIGN.md §4.1 (RFC 9180, mode base): DHKEM(X25519, HKDF-SHA256),
// HKDF-SHA256, ChaCha20Poly1305 (0x0020, 0x0001, 0x0003), as shared/src/hpke.rs implements it.
// The RFC's vectors for this suite run through it in test/crypto-hpke.test.mjs.

import { Chacha20Poly1305 } from '@hpke/chacha20poly1305';
import { CipherSuite, HkdfSha256 } from '@hpke/core';
import { DhkemX25519HkdfSha256 } from '@hpke/dhkem-x25519';
import { x25519 } from '@noble/curves/ed25519.js';
import { requireBytes } from './bytes.js';

export const suite = new CipherSuite({
  kem: new DhkemX25519HkdfSha256(),
  kdf: new HkdfSha256(),
  aead: new Chacha20Poly1305(),
});

const buffer = (bytes) => bytes.slice().buffer;

/// A fixed ephemeral key pair from a raw 32-byte X25519 secret, for known-answer tests only
/// (the `ekm` of createSenderContext; without one the suite draws a fresh key).
async function ephemeralKeyPair(secret) {
  requireBytes(secret, 32, 'ekm');
  return {
    privateKey: await suite.kem.importKey('raw', buffer(secret), false),
    publicKey: await suite.kem.importKey('raw', buffer(x25519.getPublicKey(secret)), true),
  };
}

/// SetupBaseS to the enclave's X25519 key. Returns `enc` (the client's ephemeral public key)
/// and the sender context. A small-order enclave key fails here, as in Rust.
export async function setupSender(recipientPublicKey, info, ekm) {
  requireBytes(recipientPublicKey, 32, 'teePublicKey');
  const ctx = await suite.createSenderContext({
    recipientPublicKey: await suite.kem.importKey('raw', buffer(recipientPublicKey), true),
    info,
    ...(ekm === undefined ? {} : { ekm: await ephemeralKeyPair(ekm) }),
  });
  return { enc: new Uint8Array(ctx.enc), ctx };
}
