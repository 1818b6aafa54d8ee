// RFC 9180 Appendix A.2.1 (DHKEM(X25519, HKDF-SHA256), HKDF-SHA256, ChaCha20Poly1305, mode
// base) through the suite the page configures (src/crypto/hpke.js): the same vector file the
// Rust HPKE tests read (shared/tests/vectors/rfc9180_base_x25519_sha256_chachapoly.json).

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { setupSender, suite } from '../src/crypto/hpke.js';
import { hex, unhexAny } from '../src/crypto/bytes.js';

const V = JSON.parse(
  readFileSync(new URL('../../../shared/tests/vectors/rfc9180_base_x25519_sha256_chachapoly.json', import.meta.url), 'utf8'),
);
const b = (h) => unhexAny(h);
const buf = (h) => b(h).buffer;

test('the vector file is the suite configured here', () => {
  assert.deepEqual([V.mode, V.kem_id, V.kdf_id, V.aead_id], [0, 0x20, 1, 3]);
  assert.deepEqual([suite.kem.id, suite.kdf.id, suite.aead.id], [0x20, 1, 3]);
  assert.equal(V.encryptions.length, 257);
  assert.deepEqual(V.encryptions.map((e) => e.seq), [...Array(257).keys()]);
});

test('DeriveKeyPair gives the RFC key pairs', async () => {
  for (const [ikm, sk, pk] of [[V.ikmE, V.skEm, V.pkEm], [V.ikmR, V.skRm, V.pkRm]]) {
    const kp = await suite.kem.deriveKeyPair(buf(ikm));
    assert.equal(hex(new Uint8Array(await suite.kem.serializePrivateKey(kp.privateKey))), sk);
    assert.equal(hex(new Uint8Array(await suite.kem.serializePublicKey(kp.publicKey))), pk);
  }
});

test('sender with ekm = ikmE: enc, all 257 encryptions in order, and the exports', async () => {
  const sender = await suite.createSenderContext({
    recipientPublicKey: await suite.kem.importKey('raw', buf(V.pkRm), true),
    info: b(V.info),
    ekm: buf(V.ikmE),
  });
  assert.equal(hex(new Uint8Array(sender.enc)), V.enc);
  for (const e of V.encryptions) {
    const ct = new Uint8Array(await sender.seal(b(e.pt), b(e.aad)));
    assert.equal(hex(ct), e.ct, `seq ${e.seq}`);
  }
  for (const x of V.exports) {
    assert.equal(hex(new Uint8Array(await sender.export(b(x.exporter_context), x.L))), x.exported_value);
  }
});

test('the page path (setupSender with the raw ephemeral secret) gives the same context', async () => {
  const { enc, ctx } = await setupSender(b(V.pkRm), b(V.info), b(V.skEm));
  assert.equal(hex(enc), V.enc);
  assert.equal(hex(new Uint8Array(await ctx.seal(b(V.encryptions[0].pt), b(V.encryptions[0].aad)))), V.encryptions[0].ct);
  assert.equal(hex(new Uint8Array(await ctx.export(new Uint8Array(0), 32))), V.exports[0].exported_value);
});

test('recipient: every RFC ciphertext opens in order, and a changed one does not', async () => {
  const recipient = await suite.createRecipientContext({
    recipientKey: await suite.kem.deriveKeyPair(buf(V.ikmR)),
    enc: buf(V.enc),
    info: b(V.info),
  });
  const tampered = b(V.encryptions[0].ct);
  tampered[0] ^= 1;
  await assert.rejects(recipient.open(tampered, b(V.encryptions[0].aad)));
  for (const e of V.encryptions) {
    assert.equal(hex(new Uint8Array(await recipient.open(b(e.ct), b(e.aad)))), e.pt, `seq ${e.seq}`);
  }
  for (const x of V.exports) {
    assert.equal(hex(new Uint8Array(await recipient.export(b(x.exporter_context), x.L))), x.exported_value);
  }
});

test('a small-order enclave key is refused, as Rust refuses it', async () => {
  // The all-zero u-coordinate gives an all-zero shared secret (RFC 9180 §7.1.4).
  await assert.rejects(setupSender(new Uint8Array(32), b(V.info)));
});
