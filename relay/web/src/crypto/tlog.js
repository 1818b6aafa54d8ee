// The transparency log's checks on one receipt (docs/log.md): the chat entry rebuilt from the
// receipt, its leaf hash, the inclusion proof (RFC 9162 §2.1.3.2, as shared/src/tlog/verify.rs),
// and the signed tree head (`SVC-LOG-STH-v1` ‖ size ‖ root ‖ timestamp, ed25519 verify_strict).
// The anchors and the consistency between heads that `svc receipt --proof` also checks are not
// checked in the page.

import { sha256 } from '@noble/hashes/sha2.js';
import { base58 } from '@scure/base';
import { b64decode, concat, equal, unhexLower, utf8 } from './bytes.js';
import { verifyStrict } from './ed25519.js';

export const leafHash = (entry) => sha256(concat(Uint8Array.of(0), entry));
const nodeHash = (left, right) => sha256(concat(Uint8Array.of(1), left, right));

/// The 129-byte entry of a chat receipt: 0x01 ‖ address ‖ sha256(ciphertext) ‖ R ‖ S.
export function chatEntry(receipt) {
  const address = base58.decode(receipt.address);
  const digest = unhexLower(receipt.encryptedPromptHash, 32);
  const r = b64decode(receipt.enclaveSigR, 32);
  const s = b64decode(receipt.enclaveSigS, 32);
  if (address.length !== 32 || !digest || !r || !s) throw new Error('the receipt cannot be a log entry');
  return concat(Uint8Array.of(1), address, digest, r, s);
}

/// The root an inclusion proof leads to; null when the proof has the wrong shape.
export function rootFromInclusion(index, size, leaf, path) {
  if (!(index >= 0n && index < size)) return null;
  let [fn, sn] = [index, size - 1n];
  let r = leaf;
  for (const p of path) {
    if (sn === 0n) return null;
    if ((fn & 1n) === 1n || fn === sn) {
      r = nodeHash(p, r);
      while ((fn & 1n) === 0n && fn !== 0n) {
        fn >>= 1n;
        sn >>= 1n;
      }
    } else {
      r = nodeHash(r, p);
    }
    fn >>= 1n;
    sn >>= 1n;
  }
  return sn === 0n ? r : null;
}

const u64be = (n) => {
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigUint64(0, BigInt(n));
  return out;
};

/// Verifies a signed tree head `{treeSize, rootHash, timestamp, signature, logKey}` by `key`
/// (32 bytes); returns `{size, root}` or null.
export function verifyHead(sth, key) {
  const root = unhexLower(sth?.rootHash, 32);
  const signature = unhexLower(sth?.signature, 64);
  if (!root || !signature || !Number.isSafeInteger(sth.treeSize) || !Number.isSafeInteger(sth.timestamp)) return null;
  const message = concat(utf8('SVC-LOG-STH-v1'), u64be(sth.treeSize), root, u64be(sth.timestamp));
  return verifyStrict(key, message, signature) ? { size: BigInt(sth.treeSize), root } : null;
}

/// Checks `proof` (`GET /log/v1/proof/inclusion`) for `receipt` with the log key `key`.
/// Returns `{ok, detail, leafIndex, treeSize}`.
export function checkInclusion(receipt, proof, key) {
  const fail = (detail) => ({ ok: false, detail });
  let entry;
  try {
    entry = chatEntry(receipt);
  } catch (e) {
    return fail(e.message);
  }
  const head = verifyHead(proof?.sth, key);
  if (!head) return fail('the tree head is not signed by the log key');
  if (BigInt(proof.treeSize ?? -1) !== head.size) return fail('the proof is for another tree size');
  const path = (proof.auditPath ?? []).map((h) => unhexLower(h, 32));
  if (path.some((h) => !h)) return fail('the audit path is malformed');
  const root = rootFromInclusion(BigInt(proof.leafIndex ?? -1), head.size, leafHash(entry), path);
  if (!root || !equal(root, head.root)) return fail('the audit path does not lead to the signed root');
  return { ok: true, detail: `leaf ${proof.leafIndex} of ${proof.treeSize}`, leafIndex: proof.leafIndex, treeSize: proof.treeSize };
}
