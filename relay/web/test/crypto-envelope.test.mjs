// The page's envelope, reply and receipt code against the Rust known answers in
// shared/tests/vectors/envelope_v1.json (made by shared/tests/envelope_vectors.rs with the real
// shared crate): the same envelope bytes from the same inputs, the Rust-sealed reply opened,
// the Rust-signed receipt verified and its address derived; then mutations, each failing the
// check it should. The file's `js` section (the page's envelope, which the Rust test opens)
// must still be what this code seals. Nothing here writes the file.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { chacha20poly1305 } from '@noble/ciphers/chacha.js';
import { ed25519 } from '@noble/curves/ed25519.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { DEFAULT_PROGRAM_ID, findProgramAddress, parseAddress, receiptAddress } from '../src/crypto/address.js';
import { b64decode, b64encode, hex, unhexAny, utf8 } from '../src/crypto/bytes.js';
import { verifyStrict } from '../src/crypto/ed25519.js';
import { envelopeInfo, sealPrompt } from '../src/crypto/envelope.js';
import { suite } from '../src/crypto/hpke.js';
import { DEFAULT_MODEL, resolveModel } from '../src/crypto/model.js';
import { PlaintextError, promptPlaintextBytes } from '../src/crypto/plaintext.js';
import { openReply, openReplyJson, ReplyError, replyKey } from '../src/crypto/reply.js';
import { signedMessage, verifyReceipt } from '../src/crypto/receipt.js';
import { verifyServedBy } from '../src/crypto/served-by.js';

const V = JSON.parse(readFileSync(new URL('../../../shared/tests/vectors/envelope_v1.json', import.meta.url), 'utf8'));
const b = (h) => unhexAny(h);
const clone = (x) => JSON.parse(JSON.stringify(x));
const tee = b(V.envelope.enclaveX25519Public);

const sealRust = () =>
  sealPrompt({ teePublicKey: tee, plaintext: V.inputs.plaintext, nonce: b(V.inputs.nonce), ekm: b(V.inputs.clientEphemeralSecret) });

/// The options the page passes, from what it sent and what it verified.
async function options(edit = {}) {
  const { sent } = await sealRust();
  const inner = JSON.parse(V.reply.plaintextJson);
  return {
    ...sent,
    enclavePublicKey: b(V.receipt.enclaveEd25519Public),
    bindingQuoteSha256: V.inputs.bindingQuoteSha256,
    programId: V.inputs.programId,
    model: V.inputs.model,
    replyModel: inner.model,
    servedBy: inner.servedBy,
    ...edit,
  };
}

const failed = (checks) => checks.filter((c) => !c.ok).map((c) => c.name);

test('the page seals the same envelope bytes as Rust from the same inputs', async () => {
  assert.equal(new TextDecoder().decode(promptPlaintextBytes(V.inputs.plaintext)), V.envelope.plaintextJson);
  assert.equal(hex(envelopeInfo('prompt', b(V.inputs.nonce))), V.envelope.info);
  const sealed = await sealRust();
  assert.equal(sealed.encryptedPrompt, V.envelope.encryptedPrompt);
  assert.equal(hex(sealed.context.enc), V.envelope.enc);
  assert.equal(hex(sealed.context.secret), V.reply.exportedSecret);
  assert.equal(hex(sealed.sent.ciphertextHash), V.envelope.ciphertextSha256);
  assert.equal(hex(sealed.sent.nonce), V.inputs.nonce);
  assert.equal(hex(sealed.sent.teePubkey), V.envelope.enclaveX25519Public);
  assert.deepEqual(Object.keys(JSON.parse(sealed.encryptedPrompt)), ['publicKey', 'nonce', 'ciphertext', 'algorithm', 'version', 'keyId']);
  // Agent mode uses the prompt label (the enclave opens it with Purpose::Prompt).
  const agent = await sealPrompt({ teePublicKey: tee, plaintext: V.inputs.plaintext, purpose: 'agent', nonce: b(V.inputs.nonce), ekm: b(V.inputs.clientEphemeralSecret) });
  assert.equal(agent.encryptedPrompt, V.envelope.encryptedPrompt);
});

test("the committed page envelopes (which Rust opens) are still what this code seals", async () => {
  const js = await sealPrompt({ teePublicKey: tee, plaintext: V.js.plaintext, nonce: b(V.js.nonce), ekm: b(V.js.ekm) });
  assert.equal(js.encryptedPrompt, V.js.encryptedPrompt);
  assert.equal(hex(js.context.secret), V.js.exportedSecret);
  assert.equal(new TextDecoder().decode(promptPlaintextBytes(V.js.plaintext)), V.js.plaintextJson);
  const p = V.js.provision;
  const prov = await sealPrompt({ teePublicKey: tee, plaintext: p.plaintext, purpose: p.purpose, nonce: b(p.nonce), ekm: b(p.ekm) });
  assert.equal(prov.encryptedPrompt, p.encryptedPrompt);
});

test('a fresh envelope opens with the enclave key, and only under its purpose', async () => {
  const sealed = await sealPrompt({ teePublicKey: tee, plaintext: { prompt: 'hi', timestamp: 1 } });
  const env = JSON.parse(sealed.encryptedPrompt);
  const recipientKey = {
    privateKey: await suite.kem.importKey('raw', b(V.inputs.enclaveX25519Secret).buffer, false),
    publicKey: await suite.kem.importKey('raw', tee.slice().buffer, true),
  };
  const open = async (purpose) => {
    const ctx = await suite.createRecipientContext({ recipientKey, enc: b64decode(env.publicKey), info: envelopeInfo(purpose, b64decode(env.nonce)) });
    return new TextDecoder().decode(await ctx.open(b64decode(env.ciphertext)));
  };
  assert.equal(await open('prompt'), '{"prompt":"hi","timestamp":1}');
  await assert.rejects(open('provision'));
  assert.equal(env.keyId, V.envelope.keyId);
  const again = JSON.parse((await sealPrompt({ teePublicKey: tee, plaintext: { prompt: 'hi' } })).encryptedPrompt);
  assert.notEqual(again.publicKey, env.publicKey, 'a fresh ephemeral key each time');
  assert.notEqual(again.nonce, env.nonce, 'a fresh nonce each time');
});

test('the Rust-sealed reply opens, with the same key schedule', async () => {
  const { context } = await sealRust();
  const k = replyKey(context, b(V.inputs.responseNonce));
  assert.equal(hex(k.key), V.reply.key);
  assert.equal(hex(k.nonce), V.reply.aeadNonce);
  const bytes = openReply(context, V.reply.encryptedResponse);
  assert.equal(new TextDecoder().decode(bytes), V.reply.plaintextJson);
  assert.deepEqual(openReplyJson(context, V.reply.encryptedResponse), JSON.parse(V.reply.plaintextJson));
});

test('reply mutations fail: each a ReplyError the page treats as a stale key', async () => {
  const { context } = await sealRust();
  const er = V.reply.encryptedResponse;
  const expectError = (r, reason, ctx = context) =>
    assert.throws(() => openReply(ctx, r), (e) => e instanceof ReplyError && e.reason === reason && e.staleKey === true);

  const ct = b64decode(er.ciphertext);
  for (const at of [0, ct.length >> 1, ct.length - 1]) {
    const flipped = ct.slice();
    flipped[at] ^= 0x01;
    expectError({ ...er, ciphertext: b64encode(flipped) }, 'open_failed');
  }
  const nonce = b64decode(er.nonce);
  nonce[31] ^= 0x80;
  expectError({ ...er, nonce: b64encode(nonce) }, 'open_failed');
  expectError({ ...er, nonce: b64encode(sha256(utf8('another response nonce'))) }, 'open_failed');
  expectError({ ...er, nonce: b64encode(new Uint8Array(31)) }, 'malformed');
  expectError({ ...er, ciphertext: b64encode(ct.subarray(0, 15)) }, 'open_failed');
  expectError({ ...er, ciphertext: `${er.ciphertext.slice(0, -2)}=!` }, 'malformed');
  expectError({ ...er, version: 2 }, 'malformed');
  expectError({ ...er, algorithm: 'hpke-x25519-sha256-aes128gcm' }, 'malformed');
  expectError({ ...er, extra: 1 }, 'malformed');
  expectError(JSON.stringify(er), 'malformed');
  // Another request's context (the page's own envelope) cannot read it.
  const other = await sealPrompt({ teePublicKey: tee, plaintext: V.js.plaintext, nonce: b(V.js.nonce), ekm: b(V.js.ekm) });
  expectError(er, 'open_failed', other.context);
  expectError(er, 'open_failed', { ...context, enc: b(V.js.ekm) });

  // A reply that opens but is not JSON is not a stale key.
  const { key, nonce: aeadNonce } = replyKey(context, b(V.inputs.responseNonce));
  const notJson = { ...er, ciphertext: b64encode(chacha20poly1305(key, aeadNonce).encrypt(utf8('not json'))) };
  assert.equal(new TextDecoder().decode(openReply(context, notJson)), 'not json');
  assert.throws(() => openReplyJson(context, notJson), (e) => e instanceof ReplyError && e.reason === 'not_json' && !e.staleKey);
});

test('the Rust-signed receipt verifies: every check, the message and the address', async () => {
  const inner = JSON.parse(V.reply.plaintextJson);
  const receipt = inner.receipt;
  assert.deepEqual(receipt, V.receipt.receipt);
  const checks = verifyReceipt(receipt, await options());
  assert.deepEqual(failed(checks), [], JSON.stringify(checks, null, 1));
  assert.deepEqual(checks.map((c) => c.name), ['format', 'version', 'address', 'signature', 'enclaveKey', 'ciphertextHash',
    'nonce', 'clientPubkey', 'teePubkey', 'tdxQuoteHash', 'model', 'replyModel', 'servedBy']);
  const { sent } = await sealRust();
  const message = signedMessage({ ...sent, model: receipt.model, provider: receipt.provider });
  assert.equal(hex(message), V.receipt.signedMessage);
  const { address, bump } = findProgramAddress([utf8('attestation_v2'), sent.ciphertextHash], parseAddress(V.inputs.programId));
  assert.equal(bump, V.receipt.bump);
  assert.equal(receiptAddress(sent.ciphertextHash, V.inputs.programId), receipt.address);
  assert.equal(hex(address), hex(parseAddress(receipt.address)));
  // The same options in their text forms (base64 keys, hex hash) check the same.
  const text = await options({
    enclavePublicKey: receipt.enclavePubkey,
    ciphertextHash: hex(sent.ciphertextHash),
    nonce: b64encode(sent.nonce),
    clientPubkey: b64encode(sent.clientPubkey),
    teePubkey: b64encode(sent.teePubkey),
    bindingQuoteSha256: b(V.inputs.bindingQuoteSha256),
  });
  assert.deepEqual(failed(verifyReceipt(receipt, text)), []);
});

test('addresses, the default program id and model resolution agree with Rust', () => {
  assert.equal(DEFAULT_PROGRAM_ID, V.addresses.programId);
  assert.equal(DEFAULT_PROGRAM_ID, V.inputs.programId);
  const program = parseAddress(V.addresses.programId);
  assert.ok(V.addresses.list.some((a) => a.bump !== 255), 'the list exercises the off-curve search');
  for (const a of V.addresses.list) {
    const found = findProgramAddress([utf8('attestation_v2'), b(a.ciphertextHash)], program);
    assert.deepEqual([receiptAddress(b(a.ciphertextHash)), found.bump], [a.address, a.bump]);
  }
  assert.equal(DEFAULT_MODEL, V.models.default);
  for (const [asked, resolved] of V.models.resolve) assert.equal(resolveModel(asked), resolved, asked);
});

test('receipt mutations each fail their check', async () => {
  const good = V.receipt.receipt;
  const opts = await options();
  const run = (edit, o = opts) => failed(verifyReceipt({ ...clone(good), ...edit }, o));
  const other32 = b64encode(sha256(utf8('other')));

  // Signed fields: the signature fails, and the comparison with what was sent.
  assert.deepEqual(run({ model: 'qwen3.8:27b' }), ['signature', 'model', 'replyModel']);
  assert.deepEqual(run({ provider: 'other' }), ['signature']);
  assert.deepEqual(run({ nonce: b64encode(new Uint8Array(16)) }), ['signature', 'nonce']);
  assert.deepEqual(run({ clientPubkey: other32 }), ['signature', 'clientPubkey']);
  assert.deepEqual(run({ teePubkey: other32 }), ['signature', 'teePubkey']);
  const otherHash = hex(sha256(utf8('another ciphertext')));
  assert.deepEqual(run({ encryptedPromptHash: otherHash }), ['address', 'signature', 'ciphertextHash']);
  // With the address moved along, the GPU node statement names another receipt too.
  assert.deepEqual(run({ encryptedPromptHash: otherHash, address: receiptAddress(b(otherHash)) }), ['signature', 'ciphertextHash', 'servedBy']);

  // The signature itself.
  const s = b64decode(good.enclaveSigS);
  s[0] ^= 1;
  assert.deepEqual(run({ enclaveSigS: b64encode(s) }), ['signature']);
  assert.deepEqual(run({ enclaveSigR: other32 }), ['signature']);
  // s + ℓ verifies under a lax verifier's arithmetic but not under verify_strict.
  const L = 2n ** 252n + 27742317777372353535851937790883648493n;
  const sPlusL = b64decode(good.enclaveSigS).reduceRight((n, x) => (n << 8n) | BigInt(x), 0n) + L;
  const malleated = Uint8Array.from({ length: 32 }, (_, i) => Number((sPlusL >> BigInt(8 * i)) & 0xffn));
  assert.deepEqual(run({ enclaveSigS: b64encode(malleated) }), ['signature']);
  // Another key's valid signature over the same message: verifies, but is not the attested key.
  const otherSeed = sha256(utf8('another enclave'));
  const sig = ed25519.sign(b(V.receipt.signedMessage), otherSeed);
  const resigned = { enclavePubkey: b64encode(ed25519.getPublicKey(otherSeed)), enclaveSigR: b64encode(sig.subarray(0, 32)), enclaveSigS: b64encode(sig.subarray(32)) };
  assert.deepEqual(run(resigned), ['enclaveKey', 'servedBy']);

  // Unsigned fields and options.
  assert.deepEqual(run({ address: receiptAddress(sha256(utf8('x'))) }), ['address', 'servedBy']);
  assert.deepEqual(run({}, { ...opts, programId: receiptAddress(sha256(utf8('another program'))) }), ['address']);
  assert.deepEqual(run({ tdxQuoteHash: hex(sha256(utf8('another quote'))) }), ['tdxQuoteHash']);
  assert.deepEqual(run({ tdxQuoteHash: '' }), ['tdxQuoteHash']);
  assert.deepEqual(run({}, { ...opts, bindingQuoteSha256: null }), ['tdxQuoteHash']);
  assert.deepEqual(run({}, { ...opts, enclavePublicKey: sha256(utf8('x')) }), ['enclaveKey']);
  assert.deepEqual(run({}, { ...opts, enclavePublicKey: undefined }), ['enclaveKey']);
  assert.deepEqual(run({}, { ...opts, model: 'qwen3.8:27b' }), ['model']);
  assert.deepEqual(run({}, { ...opts, model: undefined }), [], 'none asked means the default');
  assert.deepEqual(run({}, { ...opts, model: 'svc-gpu:gpt-oss:20b' }), [], 'the prefixed id is the same model');
  assert.deepEqual(run({}, { ...opts, replyModel: 'qwen3.8:27b' }), ['replyModel']);
  assert.deepEqual(run({ timestamp: good.timestamp + 1, backendSawPlaintext: true }), [], 'not signed; not checked by svc chat either');

  // Malformed: nothing else is checked.
  const all = ['format', 'version', 'address', 'signature', 'enclaveKey', 'ciphertextHash', 'nonce', 'clientPubkey',
    'teePubkey', 'tdxQuoteHash', 'model', 'replyModel', 'servedBy'];
  assert.deepEqual(run({ encryptedPromptHash: good.encryptedPromptHash.toUpperCase() }), all);
  assert.deepEqual(run({ nonce: b64encode(new Uint8Array(15)) }), all);
  assert.deepEqual(run({ extra: 1 }), all);
  assert.deepEqual(run({ timestamp: '1' }), all);
  assert.deepEqual(run({ tdxQuoteHash: 'ab' }), all);
  assert.deepEqual(failed(verifyReceipt(null, opts)), all);
  assert.deepEqual(run({ version: 'v1' }), ['version']);
});

test('the GPU node statement: checked against its receipt, and mutations fail', () => {
  const inner = JSON.parse(V.reply.plaintextJson);
  const { receipt, servedBy } = inner;
  assert.equal(verifyServedBy(servedBy, receipt).ok, true);
  const reason = (s, r = receipt) => verifyServedBy(s, r).reason;
  assert.equal(reason({ ...servedBy, node: hex(sha256(utf8('another node'))) }), 'signature');
  assert.equal(reason({ ...servedBy, verifiedAt: servedBy.verifiedAt + 1 }), 'signature');
  assert.equal(reason({ ...servedBy, gpuFwids: [] }), 'signature');
  assert.equal(reason({ ...servedBy, gpuFwids: [servedBy.gpuFwids[0].toUpperCase()] }), undefined, 'FWIDs are read as any-case hex, as Rust does');
  assert.equal(reason({ ...servedBy, node: 'not hex' }), 'malformed');
  assert.equal(reason({ ...servedBy, extra: 1 }), 'malformed');
  assert.equal(reason(servedBy, { ...receipt, address: receiptAddress(sha256(utf8('x'))) }), 'other_receipt');
  assert.equal(reason(servedBy, { ...receipt, enclavePubkey: b64encode(sha256(utf8('k'))) }), 'signature');
});

test('verifyStrict refuses what ed25519-dalek verify_strict refuses', () => {
  const seed = sha256(utf8('strict'));
  const pk = ed25519.getPublicKey(seed);
  const msg = utf8('message');
  const sig = ed25519.sign(msg, seed);
  assert.equal(verifyStrict(pk, msg, sig), true);
  assert.equal(verifyStrict(pk, utf8('other'), sig), false);
  // Small-order public key (the identity, y = 1) and small-order R.
  const identity = new Uint8Array(32);
  identity[0] = 1;
  assert.equal(verifyStrict(identity, msg, new Uint8Array([...identity, ...new Uint8Array(32)])), false);
  assert.equal(verifyStrict(pk, msg, new Uint8Array([...identity, ...sig.subarray(32)])), false);
  // Not a point (a receipt address is off the curve by construction), wrong lengths.
  const notPoint = parseAddress(V.addresses.list[0].address);
  assert.equal(verifyStrict(notPoint, msg, sig), false);
  assert.equal(verifyStrict(pk, msg, new Uint8Array([...notPoint, ...sig.subarray(32)])), false);
  assert.equal(verifyStrict(pk.slice(0, 31), msg, sig), false);
  assert.equal(verifyStrict(pk, msg, sig.subarray(0, 63)), false);
});

test('plaintexts the enclave would refuse are refused before sealing', async () => {
  const bad = [
    { prompt: 'a', messages: [{ role: 'user', content: 'b' }] },
    { timestamp: 1 },
    { messages: [] },
    { messages: [{ role: 'tool', content: 'x' }] },
    { messages: [{ role: 'user', content: 'x', name: 'n' }] },
    { prompt: 'a', temperature: 2.5 },
    { prompt: 'a', temperature: Number.NaN },
    { prompt: 'a', maxTokens: -1 },
    { prompt: 'a', maxTokens: 2 ** 32 },
    { prompt: 'a', timestamp: 1.5 },
    { prompt: 'a', chatId: 'x' },
    { prompt: 'lone \ud800 surrogate' },
    'a string',
  ];
  for (const plaintext of bad) {
    await assert.rejects(sealPrompt({ teePublicKey: tee, plaintext }), PlaintextError, JSON.stringify(plaintext));
  }
  await assert.rejects(sealPrompt({ teePublicKey: tee, plaintext: { prompt: 'a' }, purpose: 'chat' }), TypeError);
  await assert.rejects(sealPrompt({ teePublicKey: tee.subarray(1), plaintext: { prompt: 'a' } }), TypeError);
  await assert.rejects(sealPrompt({ teePublicKey: tee, plaintext: { prompt: 'a' }, nonce: new Uint8Array(15) }), TypeError);
  // null members are absent members, as serde reads them.
  const sealed = await sealPrompt({ teePublicKey: tee, plaintext: { prompt: 'a', messages: null, model: null } });
  assert.ok(sealed.encryptedPrompt);
});
