// What the page needs beyond ../crypto/bytes.js: randomness, WebCrypto SHA-256, PEM.

import { b64decode } from '../crypto/bytes.js';

export { b64decode, hex } from '../crypto/bytes.js';

export const randomBytes = (n) => crypto.getRandomValues(new Uint8Array(n));

export async function sha256(bytes) {
  return new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
}

/// A PEM certificate's DER bytes (the first certificate).
export function pemToDer(pem) {
  const m = /-----BEGIN CERTIFICATE-----([\s\S]+?)-----END CERTIFICATE-----/.exec(pem);
  const der = m && b64decode(m[1].replace(/\s+/g, ''));
  if (!der) throw new Error('not a PEM certificate');
  return der;
}
