// Byte helpers for the envelope, reply and receipt code, on Uint8Array only. Base64 is the
// contract's standard padded alphabet and is decoded as strictly as the Rust side
// (shared/src/b64.rs: canonical padding, no stray bits, no whitespace).

import { base64 } from '@scure/base';

export const utf8 = (text) => new TextEncoder().encode(text);

export const b64encode = (bytes) => base64.encode(bytes);

/// Standard base64 to bytes; null when it is not canonical base64 or, with `length`, not that
/// many bytes.
export function b64decode(text, length) {
  if (typeof text !== 'string') return null;
  let bytes;
  try {
    bytes = base64.decode(text);
  } catch {
    return null;
  }
  return length === undefined || bytes.length === length ? bytes : null;
}

export const hex = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');

/// Lowercase hex of exactly `length` bytes, as shared::receipt::decode_hex32 reads it; null
/// otherwise (uppercase is refused there, so it is here).
export function unhexLower(text, length) {
  if (typeof text !== 'string' || text.length !== 2 * length || !/^[0-9a-f]*$/.test(text)) return null;
  return unhexAny(text);
}

/// Hex of any case, as Rust's `hex::decode`; null when it is not hex of whole bytes.
export function unhexAny(text) {
  if (typeof text !== 'string' || text.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(text)) return null;
  const out = new Uint8Array(text.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(text.slice(2 * i, 2 * i + 2), 16);
  return out;
}

export function equal(a, b) {
  if (!(a instanceof Uint8Array) || !(b instanceof Uint8Array) || a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i] ^ b[i];
  return diff === 0;
}

export function concat(...parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/// A Uint8Array of exactly `length` bytes, or a TypeError naming `what`.
export function requireBytes(value, length, what) {
  if (!(value instanceof Uint8Array) || value.length !== length) {
    throw new TypeError(`${what} must be a Uint8Array of ${length} bytes`);
  }
  return value;
}
