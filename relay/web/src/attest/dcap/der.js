// A strict DER reader (definite, minimal lengths; low tag numbers), enough for X.509
// certificates, CRLs and Intel's SGX extension. Errors carry webpki's names (`BadDer`, …) so
// the error chain reads like the Rust verifier's.

export const TAG = {
  BOOLEAN: 0x01,
  INTEGER: 0x02,
  BIT_STRING: 0x03,
  OCTET_STRING: 0x04,
  NULL: 0x05,
  OID: 0x06,
  ENUMERATED: 0x0a,
  UTF8_STRING: 0x0c,
  SEQUENCE: 0x30,
  SET: 0x31,
  UTC_TIME: 0x17,
  GENERALIZED_TIME: 0x18,
};

/// Context-specific tags: `[n]` constructed and primitive.
export const context = (n) => 0xa0 | n;
export const contextPrimitive = (n) => 0x80 | n;

export class DerError extends Error {
  constructor(name = 'BadDer') {
    super(name);
    this.name = 'DerError';
  }
}

/// One TLV at `at`, within `end`.
export function readTlv(bytes, at, end = bytes.length) {
  if (at + 2 > end) throw new DerError();
  const tag = bytes[at];
  if ((tag & 0x1f) === 0x1f) throw new DerError();
  let len = bytes[at + 1];
  let header = 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    if (n === 0 || n > 4 || at + 2 + n > end || bytes[at + 2] === 0) throw new DerError();
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + bytes[at + 2 + i];
    if (len < 0x80) throw new DerError();
    header += n;
  }
  const valueStart = at + header;
  if (valueStart + len > end) throw new DerError();
  return {
    tag,
    value: bytes.subarray(valueStart, valueStart + len),
    raw: bytes.subarray(at, valueStart + len),
    end: valueStart + len,
  };
}

/// Reads the TLVs of a constructed value in order.
export class DerReader {
  constructor(bytes) {
    this.bytes = bytes;
    this.at = 0;
  }
  atEnd() {
    return this.at >= this.bytes.length;
  }
  peek(tag) {
    return !this.atEnd() && this.bytes[this.at] === tag;
  }
  /// The next TLV, which must have `tag` (any tag when omitted).
  read(tag, error = 'BadDer') {
    const tlv = readTlv(this.bytes, this.at);
    if (tag !== undefined && tlv.tag !== tag) throw new DerError(error);
    this.at = tlv.end;
    return tlv;
  }
  optional(tag) {
    return this.peek(tag) ? this.read(tag) : null;
  }
  /// Fails unless everything was read.
  end(error = 'BadDer') {
    if (!this.atEnd()) throw new DerError(error);
  }
}

/// The single TLV `bytes` must consist of.
export function whole(bytes, tag, error = 'BadDer') {
  const r = new DerReader(bytes);
  const tlv = r.read(tag, error);
  r.end(error);
  return tlv;
}

/// Every TLV of a constructed value.
export function children(value) {
  const r = new DerReader(value);
  const out = [];
  while (!r.atEnd()) out.push(r.read());
  return out;
}

/// A dotted OID string from an OID value.
export function oid(value) {
  if (value.length === 0) throw new DerError();
  const parts = [];
  let n = 0;
  for (let i = 0; i < value.length; i++) {
    if (n === 0 && value[i] === 0x80) throw new DerError();
    n = n * 128 + (value[i] & 0x7f);
    if (!(value[i] & 0x80)) {
      parts.push(n);
      n = 0;
    } else if (i === value.length - 1) throw new DerError();
  }
  const first = parts[0] < 80 ? [Math.floor(parts[0] / 40), parts[0] % 40] : [2, parts[0] - 80];
  return [...first, ...parts.slice(1)].join('.');
}

/// A DER BOOLEAN value.
export function boolean(value) {
  if (value.length !== 1 || (value[0] !== 0 && value[0] !== 0xff)) throw new DerError();
  return value[0] === 0xff;
}

/// A non-negative INTEGER value's magnitude bytes (leading zero removed), as webpki reads
/// serials and small numbers.
export function unsignedInteger(value) {
  if (value.length === 0 || value[0] & 0x80) throw new DerError();
  if (value.length > 1 && value[0] === 0 && !(value[1] & 0x80)) throw new DerError();
  return value[0] === 0 && value.length > 1 ? value.subarray(1) : value;
}

/// A BIT STRING's bytes, which must have no unused bits.
export function bitStringBytes(value) {
  if (value.length === 0 || value[0] !== 0) throw new DerError();
  return value.subarray(1);
}
