// X.509 certificates as webpki (dcap-qvl's X.509 backend) reads them: on parsing only the
// structure, version 3, matching signature algorithms and the extension policy (each
// understood id-ce extension once, no other critical extension); validity, basic
// constraints, key usages and distribution points are read where path building uses them, so
// that their errors surface there, as webpki's do.

import { DerError, DerReader, TAG, bitStringBytes, boolean, children, context, oid, unsignedInteger, whole } from './der.js';
import { unixTime } from '../time.js';

export const SGX_EXTENSION = '1.2.840.113741.1.13.1';

/// The id-ce extensions webpki keeps (by last arc), and what each holds.
const KEPT = { 15: 'keyUsage', 17: 'subjectAltName', 19: 'basicConstraints', 30: 'nameConstraints', 31: 'crlDistributionPoints', 37: 'eku' };
const ID_CE = Uint8Array.from([0x55, 0x1d]);

const digits = (text, from, n) => {
  const part = text.slice(from, from + n);
  if (part.length !== n || !/^\d+$/.test(part)) throw new DerError('BadDerTime');
  return Number(part);
};

/// UTCTime (`YYMMDDHHMMSSZ`, years 1950–2049) or GeneralizedTime (`YYYYMMDDHHMMSSZ`).
export function readTime(r) {
  const generalized = r.peek(TAG.GENERALIZED_TIME);
  const tlv = r.read(generalized ? TAG.GENERALIZED_TIME : TAG.UTC_TIME, 'BadDerTime');
  const text = String.fromCharCode(...tlv.value);
  const yearLen = generalized ? 4 : 2;
  if (text.length !== yearLen + 11 || text[text.length - 1] !== 'Z') throw new DerError('BadDerTime');
  let year = digits(text, 0, yearLen);
  if (!generalized) year += year < 50 ? 2000 : 1900;
  const [mo, d, h, mi, s] = [0, 2, 4, 6, 8].map((at) => digits(text, yearLen + at, 2));
  const t = unixTime(year, mo, d, h, mi, s === 60 ? 61 : s);
  if (t === null) throw new DerError('BadDerTime');
  return t;
}

/// `SEQUENCE { tbs, AlgorithmIdentifier, BIT STRING }`: the signed data of a certificate or CRL.
export function signedData(der, error = 'BadDer') {
  const outer = whole(der, TAG.SEQUENCE, error);
  const r = new DerReader(outer.value);
  const tbs = r.read(TAG.SEQUENCE);
  const algorithm = r.read(TAG.SEQUENCE);
  const signature = bitStringBytes(r.read(TAG.BIT_STRING).value);
  r.end();
  return { data: tbs.raw, tbs: tbs.value, algorithm: algorithm.raw, signature };
}

/// An Extension's { id (dotted), rawId, critical, value }.
export function readExtension(tlv) {
  if (tlv.tag !== TAG.SEQUENCE) throw new DerError();
  const r = new DerReader(tlv.value);
  const id = r.read(TAG.OID).value;
  const critical = r.peek(TAG.BOOLEAN) ? boolean(r.read(TAG.BOOLEAN).value) : false;
  const value = r.read(TAG.OCTET_STRING).value;
  r.end();
  return { id: oid(id), rawId: id, critical, value };
}

/// A certificate: its signed data, names (raw DER, compared byte for byte), serial (raw),
/// key, the raw fields path building reads, and every extension by OID.
export function parseCertificate(der, { trustAnchor = false } = {}) {
  const signed = signedData(der);
  const r = new DerReader(signed.tbs);
  const version = r.read(context(0));
  const v = unsignedInteger(whole(version.value, TAG.INTEGER, 'UnsupportedCertVersion').value);
  if (v.length !== 1 || v[0] !== 2) throw new DerError('UnsupportedCertVersion');
  const serial = r.read(TAG.INTEGER).value;
  if (!sameBytes(r.read(TAG.SEQUENCE).raw, signed.algorithm)) throw new DerError('SignatureAlgorithmMismatch');
  const cert = {
    der,
    signed,
    serial,
    issuer: r.read(TAG.SEQUENCE).value,
    validity: r.read(TAG.SEQUENCE).value,
    subject: r.read(TAG.SEQUENCE).value,
    spki: r.read(TAG.SEQUENCE).raw,
    keyUsage: null,
    basicConstraints: null,
    eku: null,
    crlDistributionPoints: null,
    extensions: new Map(),
  };
  if (!r.atEnd()) {
    const list = whole(r.read(context(3)).value, TAG.SEQUENCE).value;
    for (const tlv of children(list)) {
      const ext = readExtension(tlv);
      if (!cert.extensions.has(ext.id)) cert.extensions.set(ext.id, []);
      cert.extensions.get(ext.id).push(ext.value);
      const kept = ext.rawId.length === 3 && ext.rawId[0] === ID_CE[0] && ext.rawId[1] === ID_CE[1] ? KEPT[ext.rawId[2]] : undefined;
      if (!kept) {
        if (ext.critical && !trustAnchor) throw new DerError('UnsupportedCriticalExtension');
        continue;
      }
      if (cert[kept] !== undefined && cert[kept] !== null) throw new DerError('ExtensionValueInvalid');
      cert[kept] = kept === 'keyUsage' ? ext.value : whole(ext.value, TAG.SEQUENCE).value;
    }
  }
  r.end();
  return cert;
}

/// [notBefore, notAfter] (unix seconds) of a certificate's raw validity.
export function validity(cert) {
  const r = new DerReader(cert.validity);
  const times = [readTime(r), readTime(r)];
  r.end('BadDerTime');
  return times;
}

/// { ca, pathLen } from the raw basic constraints (absent: not a CA).
export function basicConstraints(cert) {
  if (cert.basicConstraints === null) return { ca: false, pathLen: null };
  const r = new DerReader(cert.basicConstraints);
  const ca = r.peek(TAG.BOOLEAN) ? boolean(r.read(TAG.BOOLEAN).value) : false;
  let pathLen = null;
  if (!r.atEnd()) {
    const n = unsignedInteger(r.read(TAG.INTEGER).value);
    if (n.length !== 1) throw new DerError();
    pathLen = n[0];
  }
  r.end();
  return { ca, pathLen };
}

/// The key purposes (dotted OIDs) of the raw extended key usage; null when absent.
export function extendedKeyUsage(cert) {
  if (cert.eku === null) return null;
  return children(cert.eku).map((t) => {
    if (t.tag !== TAG.OID) throw new DerError();
    return oid(t.value);
  });
}

/// Whether a KeyUsage BIT STRING asserts bit `n` (absent KeyUsage: any usage).
export function keyUsageAllows(keyUsage, n) {
  if (!keyUsage) return true;
  const bits = whole(keyUsage, TAG.BIT_STRING).value;
  if (bits.length === 0) throw new DerError();
  const byte = 1 + (n >> 3);
  return byte < bits.length && (bits[byte] & (0x80 >> (n & 7))) !== 0;
}

export function sameBytes(a, b) {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
