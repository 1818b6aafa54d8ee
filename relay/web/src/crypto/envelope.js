// The prompt envelope (`encryptedPrompt`), version 1, exactly as DESIGN.md §4.1 and
// shared/src/envelope.rs make it: HPKE SealBase to the enclave's X25519 key with
// info = label ‖ nonce and empty aad, and the JSON string
// {"publicKey","nonce","ciphertext","algorithm","version","keyId"} in that member order (the
// order `svc chat` writes; the enclave's parser takes any order).

import { sha256 } from '@noble/hashes/sha2.js';
import { b64encode, concat, hex, requireBytes, utf8 } from './bytes.js';
import { setupSender } from './hpke.js';
import { promptPlaintextBytes } from './plaintext.js';

export const ALGORITHM = 'hpke-x25519-sha256-chacha20poly1305';
export const VERSION = 1;
export const NONCE_LEN = 16;
/// HPKE exporter context of the reply secret (DESIGN.md §4.2).
export const REPLY_EXPORT_LABEL = 'SVC-REPLY-v1';

/// HPKE `info` labels (shared::envelope::Purpose). Encrypted `/agent` has no label of its own:
/// the enclave opens it as a prompt (enclave/src/inference/chat.rs `open`), so `agent` is the prompt
/// label. An envelope made for one label never opens as another.
export const PURPOSES = Object.freeze({
  prompt: 'SVC-PROMPT-v1',
  agent: 'SVC-PROMPT-v1',
  provision: 'SVC-PROVISION-v1',
});

/// HPKE `info` for `purpose`: its label ‖ the 16 nonce bytes.
export function envelopeInfo(purpose, nonce) {
  if (!Object.hasOwn(PURPOSES, purpose)) throw new TypeError(`unknown envelope purpose \`${purpose}\``);
  return concat(utf8(PURPOSES[purpose]), requireBytes(nonce, NONCE_LEN, 'nonce'));
}

/// Seals `plaintext` to the enclave key `teePublicKey` (32 raw bytes, as verified).
///
/// `plaintext` is the request object of DESIGN.md §4.1 (checked, PlaintextError when the
/// enclave would refuse it); for `purpose: 'provision'` any JSON value. `nonce` (16 bytes) and
/// `ekm` (a raw 32-byte X25519 secret for the ephemeral key) are for known-answer tests only;
/// without them both are fresh random values.
///
/// Returns `encryptedPrompt` (the string to send), `context` ({enc, secret}: what openReply
/// needs, keep it for this one request) and `sent` (what verifyReceipt compares the receipt with).
export async function sealPrompt({ teePublicKey, plaintext, purpose = 'prompt', nonce, ekm }) {
  requireBytes(teePublicKey, 32, 'teePublicKey');
  const n = nonce === undefined ? crypto.getRandomValues(new Uint8Array(NONCE_LEN)) : requireBytes(nonce, NONCE_LEN, 'nonce').slice();
  const info = envelopeInfo(purpose, n);
  const pt = purpose === 'provision' ? utf8(JSON.stringify(plaintext)) : promptPlaintextBytes(plaintext);
  const { enc, ctx } = await setupSender(teePublicKey, info, ekm);
  const ciphertext = new Uint8Array(await ctx.seal(pt));
  const secret = new Uint8Array(await ctx.export(utf8(REPLY_EXPORT_LABEL), 32));
  const encryptedPrompt = JSON.stringify({
    publicKey: b64encode(enc),
    nonce: b64encode(n),
    ciphertext: b64encode(ciphertext),
    algorithm: ALGORITHM,
    version: VERSION,
    keyId: hex(sha256(teePublicKey)),
  });
  return {
    encryptedPrompt,
    context: { enc, secret },
    sent: { ciphertextHash: sha256(ciphertext), clientPubkey: enc, nonce: n, teePubkey: teePublicKey.slice() },
  };
}
