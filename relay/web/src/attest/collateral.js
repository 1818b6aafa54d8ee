// Collateral, parsed once (shared/src/attest/collateral.rs): dcap-qvl's `QuoteCollateralV3`
// JSON, with its byte fields hex-decoded, the earliest `nextUpdate` of the TCB info and QE
// identity, and the TCB info's platform and evaluation number.

import { unhex, utf8 } from './bytes.js';
import { parseRfc3339Utc } from './time.js';

export const MAX_COLLATERAL_LEN = 1 << 20;

const STRINGS = ['pck_crl_issuer_chain', 'tcb_info_issuer_chain', 'tcb_info', 'qe_identity_issuer_chain', 'qe_identity'];
const BYTES = ['root_ca_crl', 'pck_crl', 'tcb_info_signature', 'qe_identity_signature'];

export class CollateralError extends Error {
  constructor(reason, message) {
    super(message);
    this.reason = reason;
  }
}

/// Parses `text` (a JSON string; an object is taken as already parsed JSON). Throws a
/// CollateralError whose `reason` is `oversize` or `malformed_collateral`.
export function parseCollateral(text) {
  let value;
  if (typeof text === 'string') {
    if (utf8(text).length > MAX_COLLATERAL_LEN) {
      throw new CollateralError('oversize', `collateral is larger than ${MAX_COLLATERAL_LEN} bytes`);
    }
    try {
      value = JSON.parse(text);
    } catch (e) {
      throw new CollateralError('malformed_collateral', `collateral is not dcap-qvl collateral JSON: ${e.message}`);
    }
  } else {
    value = text;
    if (utf8(JSON.stringify(value) ?? '').length > MAX_COLLATERAL_LEN) {
      throw new CollateralError('oversize', `collateral is larger than ${MAX_COLLATERAL_LEN} bytes`);
    }
  }
  const bad = (what) => new CollateralError('malformed_collateral', `collateral is not dcap-qvl collateral JSON: ${what}`);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw bad('not an object');
  const inner = {};
  for (const field of STRINGS) {
    if (typeof value[field] !== 'string') throw bad(`${field} is not a string`);
    inner[field] = value[field];
  }
  for (const field of BYTES) {
    const bytes = unhex(value[field]);
    if (!bytes) throw bad(`${field} is not hex`);
    inner[field] = bytes;
  }
  const chain = value.pck_certificate_chain;
  if (chain !== undefined && chain !== null && typeof chain !== 'string') throw bad('pck_certificate_chain is not a string');
  inner.pck_certificate_chain = chain ?? null;
  return { inner, validUntil: validUntil(inner), tcbEvaluation: tcbEvaluation(inner) };
}

const json = (text) => {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
};

/// Earliest `nextUpdate` of the TCB info and QE identity: results expire then.
function validUntil(inner) {
  const times = [inner.tcb_info, inner.qe_identity]
    .map((body) => json(body)?.nextUpdate)
    .map((t) => (typeof t === 'string' ? parseRfc3339Utc(t) : null))
    .filter((t) => t !== null);
  return times.length ? Math.min(...times) : null;
}

/// The TCB info's platform (FMSPC, lowercase) and `tcbEvaluationDataNumber`.
function tcbEvaluation(inner) {
  const v = json(inner.tcb_info);
  const number = v?.tcbEvaluationDataNumber;
  if (typeof v?.fmspc !== 'string' || !Number.isInteger(number) || number < 0 || number > 0xffffffff) return null;
  return { fmspc: v.fmspc.toLowerCase(), number };
}
