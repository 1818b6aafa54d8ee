// The encrypted reply, DESIGN.md §4.2 (the Oblivious HTTP response construction, RFC 9458
// §4.4), opened as shared/src/reply.rs `open` does: secret = the prompt context's
// Export("SVC-REPLY-v1", 32); prk = HKDF-Extract(salt = enc ‖ response_nonce, secret);
// key = HKDF-Expand(prk, "key", 32); nonce = HKDF-Expand(prk, "nonce", 12); ChaCha20Poly1305
// with empty aad. Plain HKDF-SHA256 (RFC 5869), not HPKE's labeled one.

import { chacha20poly1305 } from '@noble/ciphers/chacha.js';
import { expand, extract } from '@noble/hashes/hkdf.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { b64decode, concat, requireBytes, utf8 } from './bytes.js';
import { ALGORITHM, VERSION } from './envelope.js';

export const RESPONSE_NONCE_LEN = 32;

/// Why a reply did not open. `malformed` and `open_failed` are what `svc chat` calls an
/// undecryptable reply: the enclave key may have changed, so the page drops its cached key,
/// verifies the enclave again and retries once (contract §3 rule 4); `staleKey` says so.
/// `not_json` (openReplyJson only) is a reply that opened but is not the JSON it should be.
export class ReplyError extends Error {
  constructor(reason, message) {
    super(message);
    this.name = 'ReplyError';
    this.reason = reason;
    this.staleKey = reason !== 'not_json';
  }
}

const MEMBERS = ['ciphertext', 'nonce', 'algorithm', 'version'];

/// The reply's key and AEAD nonce from the request's context and the response nonce.
export function replyKey(context, responseNonce) {
  const salt = concat(requireBytes(context?.enc, 32, 'context.enc'), requireBytes(responseNonce, RESPONSE_NONCE_LEN, 'responseNonce'));
  const prk = extract(sha256, requireBytes(context.secret, 32, 'context.secret'), salt);
  return { key: expand(sha256, prk, utf8('key'), 32), nonce: expand(sha256, prk, utf8('nonce'), 12) };
}

/// Opens `encryptedResponse` (the wire object) with the `context` sealPrompt returned for the
/// same request. Returns the plaintext bytes; throws ReplyError.
export function openReply(context, encryptedResponse) {
  const r = encryptedResponse;
  if (typeof r !== 'object' || r === null || Array.isArray(r)) throw new ReplyError('malformed', 'encryptedResponse is not an object');
  const extra = Object.keys(r).find((k) => !MEMBERS.includes(k));
  if (extra !== undefined) throw new ReplyError('malformed', `encryptedResponse has an unknown member \`${extra}\``);
  for (const k of ['ciphertext', 'nonce', 'algorithm']) {
    if (typeof r[k] !== 'string') throw new ReplyError('malformed', `encryptedResponse.${k} must be a string`);
  }
  if (!Number.isInteger(r.version) || r.version < 0) throw new ReplyError('malformed', 'encryptedResponse.version must be a number');
  if (r.algorithm !== ALGORITHM) throw new ReplyError('malformed', 'unsupported algorithm');
  if (r.version !== VERSION) throw new ReplyError('malformed', 'unsupported version');
  const responseNonce = b64decode(r.nonce, RESPONSE_NONCE_LEN);
  if (!responseNonce) throw new ReplyError('malformed', 'nonce must be 32 bytes of base64');
  const ct = b64decode(r.ciphertext);
  if (!ct) throw new ReplyError('malformed', 'ciphertext is not base64');
  const { key, nonce } = replyKey(context, responseNonce);
  try {
    return chacha20poly1305(key, nonce).decrypt(ct);
  } catch {
    throw new ReplyError('open_failed', "encryptedResponse does not decrypt with this request's key");
  }
}

/// openReply, then the plaintext as JSON (UTF-8 required, as serde_json reads it).
export function openReplyJson(context, encryptedResponse) {
  const bytes = openReply(context, encryptedResponse);
  try {
    return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    throw new ReplyError('not_json', 'the reply opened but is not JSON');
  }
}
