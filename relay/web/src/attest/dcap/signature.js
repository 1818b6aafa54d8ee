// ECDSA P-256 with SHA-256, the only algorithm dcap-qvl accepts (for certificates, CRLs and
// the raw r ‖ s signatures of DCAP structures), on @noble/curves. High-S signatures verify, as
// they do with RustCrypto's p256.

import { p256 } from '@noble/curves/nist.js';
import { DerError, DerReader, TAG, bitStringBytes, whole } from './der.js';
import { sameBytes } from './x509.js';

/// AlgorithmIdentifier ecdsa-with-SHA256 (no parameters).
const ECDSA_SHA256 = Uint8Array.from([0x30, 0x0a, 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x02]);
/// AlgorithmIdentifier id-ecPublicKey, prime256v1.
const EC_P256 = Uint8Array.from([
  0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07,
]);

function verify(signature, message, point, format) {
  try {
    return p256.verify(signature, message, point, { format, lowS: false, prehash: true });
  } catch {
    return false;
  }
}

/// The SEC1 point of a P-256 SubjectPublicKeyInfo (DER); throws webpki's error otherwise.
export function p256Point(spki) {
  const r = new DerReader(whole(spki, TAG.SEQUENCE).value);
  const algorithm = r.read(TAG.SEQUENCE).raw;
  const key = bitStringBytes(r.read(TAG.BIT_STRING).value);
  r.end();
  if (!sameBytes(algorithm, EC_P256)) throw new DerError('UnsupportedSignatureAlgorithmForPublicKeyContext');
  return key;
}

/// Verifies `signed` ({ data, algorithm, signature } of a certificate or CRL) with `spki`.
export function verifySignedData(spki, signed) {
  if (!sameBytes(signed.algorithm, ECDSA_SHA256)) throw new DerError('UnsupportedSignatureAlgorithmContext');
  const point = p256Point(spki);
  if (!verify(signed.signature, signed.data, point, 'der')) throw new DerError('InvalidSignatureForPublicKey');
}

/// dcap-qvl's `encode_as_der`: the first 32 bytes are r, the rest s, each an unsigned integer
/// (leading zeros dropped); r ‖ s as 32-byte halves, or null when one does not fit.
function scalars(raw) {
  if (raw.length < 32) throw new Error('Invalid key length');
  const strip = (b) => b.subarray(b.findIndex((x) => x !== 0) === -1 ? b.length : b.findIndex((x) => x !== 0));
  const [r, s] = [strip(raw.subarray(0, 32)), strip(raw.subarray(32))];
  if (r.length > 32 || s.length > 32) return null;
  const out = new Uint8Array(64);
  out.set(r, 32 - r.length);
  out.set(s, 64 - s.length);
  return out;
}

/// A DCAP signature `raw` (r ‖ s) over `message`, by the key of `spki` (DER) or the raw X ‖ Y
/// point `xy`. Throws dcap-qvl's error for a signature shorter than 32 bytes.
export function verifyRaw({ spki, xy }, message, raw) {
  const rs = scalars(raw);
  if (!rs) return false;
  let point;
  try {
    point = spki ? p256Point(spki) : Uint8Array.from([0x04, ...xy]);
  } catch {
    return false;
  }
  return verify(rs, message, point, 'compact');
}
