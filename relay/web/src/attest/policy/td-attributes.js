// TD attributes: DEBUG must be off (shared/src/attest/policy/td_attributes.rs). dcap-qvl
// refuses a debug TD too; this row is our own policy, so the document shows the bit whatever
// the DCAP check said.

import { Outcome } from '../document.js';

const DEBUG_BIT = 0x01;

export function checkTdAttributes(td) {
  const out = new Outcome();
  const debug = (td.tdAttributes[0] & DEBUG_BIT) !== 0;
  out.compare('debug_off', 'debug_enabled', 'DEBUG = 0', `DEBUG = ${debug ? 1 : 0}`);
  return out;
}
