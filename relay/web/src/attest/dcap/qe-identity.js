// The QE report against the QE identity (dcap-qvl 0.7.1's `verify_qe_identity_policy`):
// MRSIGNER, no debug QE, ISVPRODID, MISCSELECT and ATTRIBUTES under their masks, and the QE's
// TCB level by its ISVSVN.

import { equal, hexUpper } from '../bytes.js';
import { QE_IDENTITY_STATUSES, ensureValidStatus } from './tcb-level.js';
import { validateSgxAttributes } from './attributes.js';

const h = (n, width) => n.toString(16).toUpperCase().padStart(width, '0');
const le32 = (b) => (b[0] | (b[1] << 8) | (b[2] << 16) | (b[3] << 24)) >>> 0;

/// Returns the matched QE TCB level ({ isvsvn, tcbStatus, advisoryIds, … }).
export function verifyQeIdentityPolicy(qeReport, identity) {
  if (!equal(qeReport.mrSigner, identity.mrsigner)) {
    throw new Error(`QE MRSIGNER mismatch: expected ${hexUpper(identity.mrsigner)}, got ${hexUpper(qeReport.mrSigner)}`);
  }
  try {
    validateSgxAttributes(qeReport);
  } catch (e) {
    throw new Error(`QE report validation failed: ${e.message}`);
  }
  if (qeReport.isvProdId !== identity.isvprodid) {
    throw new Error(`QE ISVPRODID mismatch: expected ${identity.isvprodid}, got ${qeReport.isvProdId}`);
  }
  const mask = le32(identity.miscselectMask);
  const expectedMisc = (le32(identity.miscselect) & mask) >>> 0;
  const misc = (qeReport.miscSelect & mask) >>> 0;
  if (misc !== expectedMisc) throw new Error(`QE MISCSELECT mismatch: expected ${h(expectedMisc, 8)} (masked), got ${h(misc, 8)} (masked)`);
  for (let i = 0; i < 16; i++) {
    const expected = identity.attributes[i] & identity.attributesMask[i];
    const actual = qeReport.attributes[i] & identity.attributesMask[i];
    if (expected !== actual) throw new Error(`QE ATTRIBUTES mismatch at byte ${i}: expected ${h(expected, 2)} (masked), got ${h(actual, 2)} (masked)`);
  }
  for (const level of identity.tcbLevels) {
    if (qeReport.isvSvn >= level.isvsvn) {
      ensureValidStatus(level.tcbStatus, QE_IDENTITY_STATUSES, 'QE Identity');
      return level;
    }
  }
  if (identity.tcbLevels.length === 0) throw new Error('No TCB levels found in QE Identity');
  const min = identity.tcbLevels[identity.tcbLevels.length - 1].isvsvn;
  throw new Error(`QE ISVSVN ${qeReport.isvSvn} is below minimum required ${min} from QE Identity`);
}
