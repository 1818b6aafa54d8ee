// Byte helpers the verifier needs, on Uint8Array only; the ones the envelope code shares come
// from ../crypto/bytes.js. `equal` here also takes plain arrays (parsed structures), so it stays.

import { hex } from '../crypto/bytes.js';

export { concat, hex, unhexAny as unhex, utf8 } from '../crypto/bytes.js';

export const hexUpper = (bytes) => hex(bytes).toUpperCase();

export function equal(a, b) {
  if (!a || !b || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

export const isZero = (bytes) => bytes.every((b) => b === 0);

/// Little-endian unsigned integers; null past the end.
export const u16 = (b, at) => (at + 2 <= b.length ? b[at] | (b[at + 1] << 8) : null);
export const u32 = (b, at) => (at + 4 <= b.length ? (b[at] | (b[at + 1] << 8) | (b[at + 2] << 16) | (b[at + 3] << 24)) >>> 0 : null);

/// Standard base64 (RFC 4648 §4), padded and canonical (no stray bits in the last
/// character), as Rust's `base64` STANDARD engine decodes it; null otherwise.
export function b64decode(text) {
  if (typeof text !== 'string' || text.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(text)) return null;
  const bin = atob(text);
  if (btoa(bin) !== text) return null;
  return Uint8Array.from(bin, (c) => c.charCodeAt(0));
}

export const b64encode = (bytes) => btoa(Array.from(bytes, (b) => String.fromCharCode(b)).join(''));

/// Lexicographic comparison of two byte (or small integer) arrays, as Rust's `Ord` on slices.
export function compareArrays(a, b) {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}
