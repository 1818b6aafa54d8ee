// Receipt checks (DESIGN.md §4.5, contract §2.6), the ones `svc chat` makes on the receipt
// inside a sealed reply: Receipt::verify (shared/src/receipt.rs: strict decoding, the address
// re-derived, the ed25519 signature with verify_strict) and then check_answer /
// ran_what_was_asked (client/src/chat.rs: the receipt is for what this page sent, signed by the
// attested enclave key, naming the attested quote and the model asked for), and the GPU node
// statement when the reply carries one.
//
// The binding attestation outside the receipt (report_data, the quote itself) and the
// comparison of the relay's copy of the receipt with the sealed one are the caller's.

import { DEFAULT_PROGRAM_ID, receiptAddress, parseAddress } from './address.js';
import { b64decode, concat, equal, hex, unhexLower, utf8 } from './bytes.js';
import { decompress, verifyStrict } from './ed25519.js';
import { DEFAULT_MODEL, resolveModel } from './model.js';
import { verifyServedBy } from './served-by.js';

export const RECEIPT_VERSION = 'v2';
const PREFIX = utf8('SVC-ATTEST-v2');

const STRINGS = ['version', 'address', 'encryptedPromptHash', 'teePubkey', 'nonce', 'clientPubkey', 'enclavePubkey',
  'enclaveSigR', 'enclaveSigS', 'model', 'provider', 'tdxQuoteHash'];
const BOOLEANS = ['backendSawPlaintext', 'teeProcessed'];
const MEMBERS = [...STRINGS, 'timestamp', ...BOOLEANS];

/// The signed message: `SVC-ATTEST-v2` ‖ sha256(ciphertext) ‖ tee_pubkey ‖ nonce (16) ‖
/// client_pubkey ‖ len ‖ model ‖ len ‖ provider (lengths in UTF-8 bytes, at most 255).
export function signedMessage({ ciphertextHash, teePubkey, nonce, clientPubkey, model, provider }) {
  const m = utf8(model);
  const p = utf8(provider);
  if (m.length > 255) throw new RangeError('`model` is longer than 255 bytes');
  if (p.length > 255) throw new RangeError('`provider` is longer than 255 bytes');
  return concat(PREFIX, ciphertextHash, teePubkey, nonce, clientPubkey, Uint8Array.of(m.length), m, Uint8Array.of(p.length), p);
}

/// The receipt's members decoded as Receipt::verify decodes them; a string naming the first
/// problem otherwise.
function decode(r) {
  if (typeof r !== 'object' || r === null || Array.isArray(r)) return 'the receipt is not an object';
  const extra = Object.keys(r).find((k) => !MEMBERS.includes(k));
  if (extra !== undefined) return `unknown member \`${extra}\``;
  for (const k of STRINGS) if (typeof r[k] !== 'string') return `\`${k}\` must be a string`;
  for (const k of BOOLEANS) if (typeof r[k] !== 'boolean') return `\`${k}\` must be a boolean`;
  if (!Number.isSafeInteger(r.timestamp) || r.timestamp < 0) return '`timestamp` must be unix seconds';
  const d = {
    ciphertextHash: unhexLower(r.encryptedPromptHash, 32),
    teePubkey: b64decode(r.teePubkey, 32),
    nonce: b64decode(r.nonce, 16),
    clientPubkey: b64decode(r.clientPubkey, 32),
    enclavePubkey: b64decode(r.enclavePubkey, 32),
    sigR: b64decode(r.enclaveSigR, 32),
    sigS: b64decode(r.enclaveSigS, 32),
  };
  const bad = Object.keys(d).find((k) => d[k] === null);
  if (bad !== undefined) return `\`${bad}\` is malformed`;
  if (r.tdxQuoteHash !== '' && !unhexLower(r.tdxQuoteHash, 32)) return '`tdxQuoteHash` is malformed';
  if (utf8(r.model).length > 255 || utf8(r.provider).length > 255) return '`model` or `provider` is longer than 255 bytes';
  return d;
}

const asBytes = (v, length, decodeText) => (v instanceof Uint8Array ? (v.length === length ? v : null) : decodeText(v));

/// Checks `receipt` (the lookup JSON, as parsed) against what this page sent and verified.
///
/// Options: `enclavePublicKey` (the attested ed25519 key: 32 bytes or base64),
/// `bindingQuoteSha256` (sha256 of the attested binding quote: 32 bytes or hex; absent or null
/// when the enclave was accepted without a quote, and then the receipt must name none),
/// `ciphertextHash` (32 bytes or hex), `clientPubkey`, `nonce`, `teePubkey` (bytes or base64;
/// all four are the `sent` of sealPrompt, so `{...sealed.sent}` fills them),
/// `programId` (base58, default DEFAULT_PROGRAM_ID), `model` (the model asked for; default
/// DEFAULT_MODEL, compared after catalog resolution), and optionally `replyModel` (the model the
/// sealed reply names) and `servedBy` (the sealed reply's GPU node statement).
///
/// Returns [{name, ok, detail}], one per check, in a fixed order; every one must be ok.
export function verifyReceipt(receipt, options) {
  const o = options ?? {};
  const checks = [];
  const add = (name, ok, detail = '') => checks.push({ name, ok: Boolean(ok), detail });
  const d = decode(receipt);
  add('format', typeof d === 'object', typeof d === 'object' ? 'every member decodes' : d);
  const names = ['version', 'address', 'signature', 'enclaveKey', 'ciphertextHash', 'nonce', 'clientPubkey', 'teePubkey',
    'tdxQuoteHash', 'model', ...(o.replyModel !== undefined ? ['replyModel'] : []), ...(o.servedBy != null ? ['servedBy'] : [])];
  if (typeof d !== 'object') {
    for (const name of names) add(name, false, 'not checked: the receipt is malformed');
    return checks;
  }
  const r = receipt;

  add('version', r.version === RECEIPT_VERSION, r.version === RECEIPT_VERSION ? 'v2' : `version \`${r.version.slice(0, 16)}\` is not v2`);

  const programId = o.programId ?? DEFAULT_PROGRAM_ID;
  if (!parseAddress(programId)) {
    add('address', false, 'programId is not a base58 address');
  } else {
    const expected = receiptAddress(d.ciphertextHash, programId);
    add('address', r.address === expected, r.address === expected ? expected : `expected ${expected} under program ${programId}`);
  }

  const message = signedMessage({ ...d, model: r.model, provider: r.provider });
  const signed = decompress(d.enclavePubkey) !== null && verifyStrict(d.enclavePubkey, message, concat(d.sigR, d.sigS));
  add('signature', signed, signed ? 'ed25519 (strict) by enclavePubkey' : 'does not verify against enclavePubkey');

  const same = (name, expected, actual, what) => {
    if (!expected) return add(name, false, `no ${what} to compare with`);
    add(name, equal(expected, actual), equal(expected, actual) ? '' : `differs from ${what}`);
  };
  same('enclaveKey', asBytes(o.enclavePublicKey, 32, (t) => b64decode(t, 32)), d.enclavePubkey, 'the attested enclave key');
  same('ciphertextHash', asBytes(o.ciphertextHash, 32, (t) => unhexLower(t, 32)), d.ciphertextHash, 'the hash of the ciphertext sent');
  same('nonce', asBytes(o.nonce, 16, (t) => b64decode(t, 16)), d.nonce, 'the nonce sent');
  same('clientPubkey', asBytes(o.clientPubkey, 32, (t) => b64decode(t, 32)), d.clientPubkey, 'the key sent (HPKE enc)');
  same('teePubkey', asBytes(o.teePubkey, 32, (t) => b64decode(t, 32)), d.teePubkey, 'the enclave key the prompt was sealed to');

  const quote = o.bindingQuoteSha256 == null ? '' : o.bindingQuoteSha256 instanceof Uint8Array ? hex(o.bindingQuoteSha256) : o.bindingQuoteSha256;
  add('tdxQuoteHash', r.tdxQuoteHash === quote, r.tdxQuoteHash === quote
    ? (quote ? 'the attested binding quote' : 'no quote (unattested enclave)')
    : quote ? 'names another quote than the one verified' : 'names a quote, but none was verified');

  const asked = resolveModel(o.model ?? DEFAULT_MODEL);
  add('model', resolveModel(r.model) === asked, resolveModel(r.model) === asked ? r.model : `the enclave ran ${r.model}, not ${asked}`);
  if (o.replyModel !== undefined) {
    add('replyModel', o.replyModel === r.model, o.replyModel === r.model ? '' : 'the reply names another model than the receipt');
  }
  if (o.servedBy != null) {
    const s = verifyServedBy(o.servedBy, r);
    add('servedBy', s.ok, s.detail);
  }
  return checks;
}
