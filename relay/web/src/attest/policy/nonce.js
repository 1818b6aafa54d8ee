// Freshness (shared/src/attest/policy/nonce.rs, shared/src/freshness.rs): the nonce must be
// signed by the enclave key that `report_data` binds, so a replayed attestation, even a real
// one, fails.

import { concat, equal, hex, utf8 } from '../bytes.js';
import { Outcome, REJECT } from '../document.js';
import { verifyStrict } from '../../crypto/ed25519.js';

/// Domain separation for nonce signatures; nothing else the enclave signs starts like this.
export const NONCE_PREFIX = utf8('SVC-ATTEST-NONCE-v1');

/// The signed message: `SVC-ATTEST-NONCE-v1` ‖ nonce (32) ‖ tee public key (32).
export const nonceMessage = (nonce, teePublicKey) => concat(NONCE_PREFIX, nonce, teePublicKey);

/// No row without a proof; a proof is checked against the keys the binding names (`kind:
/// 'keys'`), so one without them fails. The proof's own `tee` and `enclave`, when given, must
/// be those keys: a page never checks a signature against a key the quote does not bind.
export function checkNonce(proof, binding) {
  const out = new Outcome();
  if (!proof) return out;
  let ok = false;
  if (binding?.kind === 'keys') {
    const sameKeys = (!proof.tee || equal(proof.tee, binding.tee)) && (!proof.enclave || equal(proof.enclave, binding.enclave));
    ok = sameKeys && verifyStrict(binding.enclave, nonceMessage(proof.nonce, binding.tee), proof.signature);
  }
  out.record('nonce_signature', ok, hex(proof.nonce), null, ok ? null : 'not signed by the bound enclave key');
  if (!ok) out.fail(REJECT, 'nonce_signature_invalid');
  return out;
}
