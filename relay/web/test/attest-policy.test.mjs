// The page verifier's own policies, on their own: the measurements file and its check, the key
// binding, and the nonce signature's strictness (ed25519-dalek's verify_strict).

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { ed25519 } from '@noble/curves/ed25519.js';
import { MeasurementsError, parseMeasurements } from '../src/attest/measurements.js';
import { checkMeasurements } from '../src/attest/policy/measurements.js';
import { bindingReportData, checkBinding } from '../src/attest/policy/binding.js';
import { checkNonce, nonceMessage } from '../src/attest/policy/nonce.js';
import { verifyStrict } from '../src/crypto/ed25519.js';

const mr = (byte) => new Uint8Array(48).fill(byte);
const hex48 = (byte) => Buffer.from(mr(byte)).toString('hex');
const file = (extra = {}) => ({
  schemaVersion: 1,
  images: [{ name: 'svc-enclave 1', mrtd: hex48(0xa0), rtmr1: hex48(0xa2), rtmr2: hex48(0xa3) }],
  rtmr0: [{ platform: 'qemu', value: hex48(0xa1) }],
  mrConfigId: null,
  mrOwner: null,
  mrOwnerConfig: null,
  ...extra,
});
const td = (edit = {}) => ({
  mrTd: mr(0xa0),
  rtMr0: mr(0xa1),
  rtMr1: mr(0xa2),
  rtMr2: mr(0xa3),
  mrConfigId: mr(0),
  mrOwner: mr(0),
  mrOwnerConfig: mr(0),
  reportData: new Uint8Array(64),
  ...edit,
});
const verdict = (outcome) => outcome.failure?.reason ?? 'accept';

test('the measurements file is read as strictly as the Rust side reads it', () => {
  const m = parseMeasurements(file({ minTcbEvaluationDataNumber: 18 }));
  assert.equal(m.images[0].mrtd, hex48(0xa0));
  assert.equal(m.mrConfigId, null);
  assert.equal(m.minTcbEvaluationDataNumber, 18);
  assert.equal(parseMeasurements(file({ mrOwner: hex48(5) })).mrOwner, hex48(5));
  const refused = [
    file({ schemaVersion: 2 }),
    file({ unknown: 1 }),
    file({ images: [{ name: 'a', mrtd: hex48(0xa0).toUpperCase(), rtmr1: hex48(1), rtmr2: hex48(2) }] }),
    file({ images: [{ name: 'a', mrtd: hex48(0xa0), rtmr1: hex48(1), rtmr2: hex48(2), extra: 'x' }] }),
    file({ images: [{ name: 'a', mrtd: hex48(0xa0).slice(2), rtmr1: hex48(1), rtmr2: hex48(2) }] }),
    file({ rtmr0: [{ value: hex48(1) }] }),
    file({ mrConfigId: 'zz' }),
    file({ minTcbEvaluationDataNumber: -1 }),
    { ...file(), images: undefined },
    null,
  ];
  for (const bad of refused) assert.throws(() => parseMeasurements(bad), MeasurementsError, JSON.stringify(bad));
});

test('the measurements check: one image, RTMR0 allowlisted, host registers zero or pinned', () => {
  const m = parseMeasurements(file());
  const ok = checkMeasurements(m, td());
  assert.equal(verdict(ok), 'accept');
  assert.deepEqual(
    ok.checks.map((c) => [c.name, c.ok]),
    [['mrtd', true], ['rtmr1', true], ['rtmr2', true], ['rtmr0', true], ['mr_config_id', true], ['mr_owner', true], ['mr_owner_config', true]],
  );
  assert.equal(ok.checks[0].detail, 'image svc-enclave 1');
  // An unknown MRTD skips the image's RTMRs; the first failure names the verdict.
  const unknown = checkMeasurements(m, td({ mrTd: mr(0xb0), rtMr0: mr(0xb1) }));
  assert.deepEqual(unknown.checks.map((c) => c.name), ['mrtd', 'rtmr0', 'mr_config_id', 'mr_owner', 'mr_owner_config']);
  assert.equal(verdict(unknown), 'mrtd_unknown');
  assert.equal(unknown.checks[0].expected, hex48(0xa0));
  assert.equal(verdict(checkMeasurements(parseMeasurements(file({ images: [] })), td())), 'mrtd_unknown');
  assert.equal(checkMeasurements(parseMeasurements(file({ images: [], rtmr0: [] })), td()).checks[0].expected, '(none published)');
  for (const [edit, reason] of [
    [{ rtMr1: mr(1) }, 'rtmr1_mismatch'],
    [{ rtMr2: mr(1) }, 'rtmr2_mismatch'],
    [{ rtMr0: mr(1) }, 'rtmr0_unknown'],
    [{ mrConfigId: mr(1) }, 'mrconfigid_not_allowed'],
    [{ mrOwner: mr(1) }, 'mrowner_not_allowed'],
    [{ mrOwnerConfig: mr(1) }, 'mrownerconfig_not_allowed'],
  ]) {
    assert.equal(verdict(checkMeasurements(m, td(edit))), reason, reason);
  }
  // A second image variant matches on its own; a pinned register must equal its pin.
  const two = parseMeasurements(file({ images: [...file().images, { name: 'two-pass', mrtd: hex48(0xc0), rtmr1: hex48(0xc2), rtmr2: hex48(0xc3) }] }));
  assert.equal(verdict(checkMeasurements(two, td({ mrTd: mr(0xc0), rtMr1: mr(0xc2), rtMr2: mr(0xc3) }))), 'accept');
  assert.equal(verdict(checkMeasurements(two, td({ mrTd: mr(0xc0) }))), 'rtmr1_mismatch');
  const pinned = parseMeasurements(file({ mrConfigId: hex48(5) }));
  assert.equal(verdict(checkMeasurements(pinned, td({ mrConfigId: mr(5) }))), 'accept');
  assert.equal(verdict(checkMeasurements(pinned, td())), 'mrconfigid_not_allowed');
});

test('the binding: sha256 of the key or keys, zero-padded to 64 bytes', () => {
  const tee = new Uint8Array(32).fill(0x11);
  const enclave = new Uint8Array(32).fill(0x22);
  const sha = (...parts) => createHash('sha256').update(Buffer.concat(parts)).digest();
  const padded = (digest) => Buffer.concat([digest, Buffer.alloc(32)]);
  assert.deepEqual(Buffer.from(bindingReportData({ kind: 'tee', tee })), padded(sha(tee)));
  assert.deepEqual(Buffer.from(bindingReportData({ kind: 'keys', tee, enclave })), padded(sha(tee, enclave)));

  const bound = td({ reportData: bindingReportData({ kind: 'keys', tee, enclave }) });
  assert.equal(verdict(checkBinding({ kind: 'keys', tee, enclave }, bound)), 'accept');
  assert.equal(verdict(checkBinding({ kind: 'keys', tee: enclave, enclave: tee }, bound)), 'binding_mismatch');
  assert.equal(verdict(checkBinding({ kind: 'tee', tee }, bound)), 'binding_mismatch', 'the binding quote is not the public quote');
  const row = checkBinding(null, bound).checks[0];
  assert.deepEqual([row.name, row.ok, row.detail], ['report_data', true, 'binding not requested']);
});

test('the nonce signature: over the prefix, nonce and TEE key, by the bound key, verified strictly', () => {
  const secret = new Uint8Array(32).fill(0x33);
  const enclave = ed25519.getPublicKey(secret);
  const tee = new Uint8Array(32).fill(0x11);
  const nonce = new Uint8Array(32).fill(0x22);
  const message = nonceMessage(nonce, tee);
  assert.equal(Buffer.from(message.subarray(0, 19)).toString(), 'SVC-ATTEST-NONCE-v1');
  assert.equal(message.length, 19 + 64);
  const signature = ed25519.sign(message, secret);
  const binding = { kind: 'keys', tee, enclave };
  assert.equal(verdict(checkNonce({ nonce, signature }, binding)), 'accept');
  assert.equal(verdict(checkNonce({ nonce, signature, tee, enclave }, binding)), 'accept');
  assert.equal(checkNonce(null, binding).checks.length, 0, 'no proof, no row');
  for (const [proof, b, why] of [
    [{ nonce: nonce.map((x) => x ^ 1), signature }, binding, 'another nonce'],
    [{ nonce, signature }, { kind: 'tee', tee }, 'no enclave key bound'],
    [{ nonce, signature, enclave: tee }, binding, 'proof names another key'],
    [{ nonce, signature: new Uint8Array(64) }, binding, 'zero signature'],
  ]) {
    assert.equal(verdict(checkNonce(proof, b)), 'nonce_signature_invalid', why);
  }

  assert.equal(verifyStrict(enclave, message, signature), true);
  // s + ℓ: the same signature, non-canonical s, which dalek refuses.
  const L = 2n ** 252n + 27742317777372353535851937790883648493n;
  const s = signature.subarray(32).reduceRight((n, b) => (n << 8n) | BigInt(b), 0n) + L;
  const malleated = new Uint8Array(signature);
  for (let i = 0, v = s; i < 32; i++, v >>= 8n) malleated[32 + i] = Number(v & 0xffn);
  assert.equal(verifyStrict(enclave, message, malleated), false, 'non-canonical s');
  // A small-order public key (the identity) with R = identity and s = 0 satisfies the
  // cofactored equation for every message; verify_strict refuses it.
  const identity = new Uint8Array(32);
  identity[0] = 1;
  const forged = new Uint8Array(64);
  forged.set(identity);
  assert.equal(verifyStrict(identity, message, forged), false, 'small-order key');
});
