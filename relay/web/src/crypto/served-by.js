// The enclave's statement of which GPU node served a request (`servedBy` in the sealed reply;
// shared/src/served_by.rs, docs/gpu.md), checked as the Rust client checks it: it names this
// receipt's address and is signed (verify_strict) by the receipt's enclave key over
// "svc-served-by-v1\0" ‖ receipt address (32) ‖ node (32) ‖ node quote hash (32) ‖
// GPU evidence digest (32) ‖ verifiedAt (u64 big-endian) ‖ GPU count (u8) ‖ each FWID (48).

import { b64decode, concat, unhexAny, unhexLower, utf8 } from './bytes.js';
import { parseAddress } from './address.js';
import { decompress, verifyStrict } from './ed25519.js';

const DOMAIN = utf8('svc-served-by-v1\0');
const MEMBERS = ['receipt', 'node', 'nodeQuoteSha256', 'gpuEvidenceSha256', 'gpuFwids', 'verifiedAt', 'signature'];

/// The signed bytes, or null when a member is malformed (ServedBy::message).
export function servedByMessage(s) {
  const address = parseAddress(s.receipt);
  const hashes = [s.node, s.nodeQuoteSha256, s.gpuEvidenceSha256].map((h) => unhexLower(h, 32));
  if (!address || hashes.includes(null) || !Array.isArray(s.gpuFwids) || s.gpuFwids.length > 255) return null;
  if (!Number.isSafeInteger(s.verifiedAt) || s.verifiedAt < 0) return null;
  const fwids = s.gpuFwids.map(unhexAny);
  if (fwids.some((f) => !f || f.length !== 48)) return null;
  const verifiedAt = new Uint8Array(8);
  new DataView(verifiedAt.buffer).setBigUint64(0, BigInt(s.verifiedAt));
  return concat(DOMAIN, address, ...hashes, verifiedAt, Uint8Array.of(fwids.length), ...fwids);
}

/// {ok, reason?, detail}: reason `malformed`, `other_receipt` or `signature`, as ServedByError.
/// The receipt itself is checked by verifyReceipt.
export function verifyServedBy(statement, receipt) {
  const fail = (reason, detail) => ({ ok: false, reason, detail });
  if (typeof statement !== 'object' || statement === null || Array.isArray(statement)) return fail('malformed', 'not an object');
  const extra = Object.keys(statement).find((k) => !MEMBERS.includes(k));
  if (extra !== undefined) return fail('malformed', `unknown member \`${extra}\``);
  if (statement.receipt !== receipt?.address) return fail('other_receipt', 'the statement names another receipt');
  const key = b64decode(receipt.enclavePubkey, 32);
  if (!key || !decompress(key)) return fail('signature', 'the receipt has no usable enclave key');
  const signature = b64decode(statement.signature, 64);
  if (!signature) return fail('signature', 'signature is not 64 bytes of base64');
  const message = servedByMessage(statement);
  if (!message) return fail('malformed', 'a member is malformed');
  if (!verifyStrict(key, message, signature)) return fail('signature', "not signed by the receipt's enclave key");
  return { ok: true, detail: `node ${statement.node}, ${statement.gpuFwids.length} GPU(s)` };
}
