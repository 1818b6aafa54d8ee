// The DCAP policy (shared/src/attest/policy/tcb.rs): the DCAP chain checked under the policy's
// trust root (../dcap/verify.js, with @phala/dcap-qvl's veto, ../dcap/library.js), only the
// policy's TCB statuses allowed, each failure named; the CRLs present; and the published
// minimum TCB evaluation.

import { Outcome, REJECT } from '../document.js';
import { INTEL_ROOT_CA } from '../dcap/intel-root.js';
import { libraryVeto } from '../dcap/library.js';
import { verifyDcap } from '../dcap/verify.js';
import { classify } from './classify.js';

/// Both CRLs must be present: an empty one would otherwise surface as a parse error.
export function crlsPresent(collateral) {
  const out = new Outcome();
  const present = collateral.pck_crl.length > 0 && collateral.root_ca_crl.length > 0;
  out.record('crls_present', present);
  if (!present) out.fail(REJECT, 'crl_missing');
  return out;
}

/// Row `tcb_evaluation`, when the reference values publish a minimum: the collateral's TCB
/// info must be of that evaluation or a later one.
export function evaluationFloor(tcbEvaluation, minimum) {
  const out = new Outcome();
  if (minimum === null || minimum === undefined) return out;
  const number = tcbEvaluation ? tcbEvaluation.number : null;
  const ok = number !== null && number >= minimum;
  out.record('tcb_evaluation', ok, `>= ${minimum}`, number === null ? null : String(number));
  if (!ok) out.fail(REJECT, 'tcb_evaluation_below_minimum');
  return out;
}

/// Rows `dcap` and, when the chain verified, `tcb_status`; with what dcap-qvl reports.
export function checkDcap(raw, quote, collateral, root, allowedTcbStatuses, now) {
  const out = new Outcome();
  const rootDer = root.kind === 'intel' ? INTEL_ROOT_CA : root.der;
  let report;
  let chain;
  try {
    report = verifyDcap(raw, quote, collateral, rootDer, now);
    chain = libraryVeto(raw, quote, collateral, root, now, report.paths, rootDer);
  } catch (e) {
    chain = e instanceof Error ? e.message : String(e);
  }
  if (chain !== null) {
    const { verdict, reason } = classify(chain);
    out.record('dcap', false, null, null, chain);
    out.fail(verdict, reason);
    return { outcome: out, report: null };
  }
  out.record('dcap', true, null, report.status);
  const allowed = allowedTcbStatuses.includes(report.status);
  out.record('tcb_status', allowed, allowedTcbStatuses.join(' | '), report.status, report.advisoryIds.length ? report.advisoryIds.join(', ') : null);
  if (!allowed) out.fail(REJECT, 'tcb_status_not_allowed');
  return { outcome: out, report };
}

