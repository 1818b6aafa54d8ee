// The key binding (shared/src/attest/policy/binding.rs; contract §2.4b): `report_data` must
// equal what the expected keys hash to, sha256 of the key(s) zero-padded to 64 bytes.

import { sha256 } from '@noble/hashes/sha2.js';
import { concat, hex } from '../bytes.js';
import { Outcome } from '../document.js';

/// What `report_data` must be for `binding`: `{ kind: 'tee', tee }` binds sha256(tee) (the
/// public quote), `{ kind: 'keys', tee, enclave }` binds sha256(tee ‖ enclave) (the binding
/// quote).
export function bindingReportData(binding) {
  const parts = binding.kind === 'keys' ? [binding.tee, binding.enclave] : [binding.tee];
  const out = new Uint8Array(64);
  out.set(sha256(concat(...parts)));
  return out;
}

/// With no binding requested (offline inspection of a bare quote) the row passes and says so.
export function checkBinding(binding, td) {
  const out = new Outcome();
  const actual = hex(td.reportData);
  if (binding) out.compare('report_data', 'binding_mismatch', hex(bindingReportData(binding)), actual);
  else out.record('report_data', true, null, actual, 'binding not requested');
  return out;
}
