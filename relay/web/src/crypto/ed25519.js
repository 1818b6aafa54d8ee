// Ed25519 verification exactly as ed25519-dalek's `verify_strict`, which the Rust client uses
// on receipts and GPU node statements (shared/src/receipt.rs, shared/src/served_by.rs):
// - the public key and R decode as curve25519-dalek decodes (a y ≥ p is accepted and the sign
//   bit of x = 0 ignored: @noble/curves' ZIP-215 decoding);
// - s must be canonical (s < ℓ);
// - small-order A or R is refused;
// - k = SHA-512(R ‖ A ‖ M) over the bytes as given, and [s]B − [k]A must encode to exactly R's
//   bytes (cofactorless, so a non-canonical R never verifies).
// @noble/curves' own `verify` is cofactored and, without zip215, refuses encodings dalek
// accepts, so its point arithmetic is used instead of it.

import { ed25519 } from '@noble/curves/ed25519.js';
import { sha512 } from '@noble/hashes/sha2.js';
import { concat, equal } from './bytes.js';

const { Point } = ed25519;
const L = 2n ** 252n + 27742317777372353535851937790883648493n;

const littleEndian = (bytes) => bytes.reduceRight((n, b) => (n << 8n) | BigInt(b), 0n);

/// curve25519-dalek's CompressedEdwardsY::decompress; null when it is not a curve point.
export function decompress(bytes) {
  try {
    return Point.fromBytes(bytes, true);
  } catch {
    return null;
  }
}

export function verifyStrict(publicKey, message, signature) {
  if (!(publicKey instanceof Uint8Array) || publicKey.length !== 32) return false;
  if (!(signature instanceof Uint8Array) || signature.length !== 64) return false;
  const A = decompress(publicKey);
  if (!A) return false;
  const rBytes = signature.subarray(0, 32);
  const s = littleEndian(signature.subarray(32));
  if (s >= L) return false;
  const R = decompress(rBytes);
  if (!R || R.isSmallOrder() || A.isSmallOrder()) return false;
  const k = littleEndian(sha512(concat(rBytes, publicKey, message))) % L;
  const expected = Point.BASE.multiplyUnsafe(s).subtract(A.multiplyUnsafe(k));
  return equal(expected.toBytes(), rBytes);
}
