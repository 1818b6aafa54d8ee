// Verifies an enclave's TDX quote in the page, with the verdict `shared::attest::verify` gives
// (shared/src/attest/verify.rs; docs/attestation.md lists every check and named reason): the
// quote's shape, the DCAP chain under the trusted root, the TCB status, TD attributes,
// measurements, key binding and freshness, each recorded as a row, the verdict from the first
// failure. Collateral is parsed first, as every Rust caller does, and `minTcbEvaluation` is
// the client's TCB floor (`svc --min-tcb-evaluation`).
//
// Never throws: bad input is a `malformed` verdict. Reasons beyond the Rust verifier's:
// `malformed_measurements` (the measurements file is not schema v1; `svc` exits 30) and
// `invalid_input` (arguments of the wrong type).

import { sha256 } from '@noble/hashes/sha2.js';
import { hex } from './bytes.js';
import { CollateralError, parseCollateral } from './collateral.js';
import { ACCEPT, MALFORMED, Outcome, REJECT, markUnauthenticated } from './document.js';
import { parseEvidence } from './evidence.js';
import { MeasurementsError, parseMeasurements } from './measurements.js';
import { checkBinding } from './policy/binding.js';
import { checkMeasurements } from './policy/measurements.js';
import { checkNonce } from './policy/nonce.js';
import { checkDcap, crlsPresent, evaluationFloor } from './policy/tcb.js';
import { checkTdAttributes } from './policy/td-attributes.js';
import { td10 } from './quote.js';

const isBytes = (v, n) => v instanceof Uint8Array && (n === undefined || v.length === n);

/// Argument types, before anything is read; a message, or null when they are usable.
function invalidInput({ quote, root, binding, nonce, allowedTcbStatuses, now, minTcbEvaluation }) {
  if (!isBytes(quote)) return 'quote is not a Uint8Array';
  if (!root || (root.kind !== 'intel' && !(root.kind === 'dev' && isBytes(root.der)))) return "root is not { kind: 'intel' } or { kind: 'dev', der }";
  if (!Array.isArray(allowedTcbStatuses) || !allowedTcbStatuses.every((s) => typeof s === 'string')) return 'allowedTcbStatuses is not a list of names';
  if (!Number.isSafeInteger(now) || now < 0) return 'now is not unix seconds';
  if (minTcbEvaluation !== null && minTcbEvaluation !== undefined && !Number.isSafeInteger(minTcbEvaluation)) return 'minTcbEvaluation is not a number';
  if (binding) {
    if (binding.kind === 'keys' && !(isBytes(binding.tee, 32) && isBytes(binding.enclave, 32))) return 'binding keys are not 32 bytes each';
    if (binding.kind === 'tee' && !isBytes(binding.tee, 32)) return 'binding key is not 32 bytes';
    if (binding.kind !== 'keys' && binding.kind !== 'tee') return "binding is not { kind: 'keys' | 'tee' }";
  }
  if (nonce) {
    if (!isBytes(nonce.nonce, 32) || !isBytes(nonce.signature, 64)) return 'nonce proof is not a 32-byte nonce and a 64-byte signature';
    if ((nonce.tee && !isBytes(nonce.tee, 32)) || (nonce.enclave && !isBytes(nonce.enclave, 32))) return 'nonce proof keys are not 32 bytes each';
  }
  return null;
}

/// The quote's registers, for display (unauthenticated unless the verdict is accept).
function registers(td) {
  return {
    mrtd: hex(td.mrTd),
    rtmr0: hex(td.rtMr0),
    rtmr1: hex(td.rtMr1),
    rtmr2: hex(td.rtMr2),
    rtmr3: hex(td.rtMr3),
    mrConfigId: hex(td.mrConfigId),
    mrOwner: hex(td.mrOwner),
    mrOwnerConfig: hex(td.mrOwnerConfig),
    reportData: hex(td.reportData),
  };
}

/// The policies in order (verify.rs `run`).
function run(args, collateral, measurements, results) {
  const { outcome: shape, quote } = parseEvidence(args.quote);
  results.extend(shape);
  const td = quote && td10(quote.report);
  if (!td) return { td: null, dcap: null };
  const crls = crlsPresent(collateral.inner);
  results.extend(crls);
  if (crls.failure) return { td, dcap: null };
  const { outcome: dcapRows, report } = checkDcap(args.quote, quote, collateral.inner, args.root, args.allowedTcbStatuses, args.now);
  results.extend(dcapRows);
  results.extend(evaluationFloor(collateral.tcbEvaluation, measurements.minTcbEvaluationDataNumber));
  results.extend(checkTdAttributes(td));
  results.extend(checkMeasurements(measurements, td));
  results.extend(checkBinding(args.binding ?? null, td));
  results.extend(checkNonce(args.nonce ?? null, args.binding ?? null));
  return { td, dcap: report };
}

function result(outcome, extra) {
  const failure = outcome.failure;
  return {
    verdict: failure ? failure.verdict : ACCEPT,
    reason: failure ? failure.reason : null,
    checks: markUnauthenticated(outcome.checks),
    tcbStatus: null,
    advisoryIds: [],
    tcbEvaluationDataNumber: null,
    fmspc: null,
    validUntil: null,
    report: null,
    ...extra,
  };
}

function refused(verdict, reason, name, detail, extra) {
  const out = new Outcome();
  out.record(name, false, null, null, detail);
  out.fail(verdict, reason);
  return result(out, extra);
}

export function verifyQuote(args) {
  const base = { trustRoot: 'intel', trustRootId: 'intel', verifiedAt: args?.now ?? null };
  try {
    const bad = invalidInput(args ?? {});
    if (bad) return refused(MALFORMED, 'invalid_input', 'input', bad, base);
    if (args.root.kind === 'dev') Object.assign(base, { trustRoot: 'development', trustRootId: `dev:${hex(sha256(args.root.der))}` });
    let measurements;
    try {
      measurements = parseMeasurements(args.measurements);
    } catch (e) {
      if (!(e instanceof MeasurementsError)) throw e;
      return refused(MALFORMED, 'malformed_measurements', 'measurements', e.message, base);
    }
    let collateral;
    try {
      collateral = parseCollateral(args.collateral);
    } catch (e) {
      if (!(e instanceof CollateralError)) throw e;
      return refused(MALFORMED, e.reason, 'collateral_parse', e.message, base);
    }
    const evaluation = collateral.tcbEvaluation;
    Object.assign(base, { tcbEvaluationDataNumber: evaluation?.number ?? null, fmspc: evaluation?.fmspc ?? null, validUntil: collateral.validUntil });
    const floor = args.minTcbEvaluation ?? null;
    if (floor !== null && !evaluation) return refused(MALFORMED, 'malformed_collateral', 'tcb_floor', 'the TCB info names no platform and evaluation', base);
    if (floor !== null && evaluation.number < floor) {
      const out = new Outcome();
      out.record('tcb_floor', false, `>= ${floor}`, String(evaluation.number), 'collateral from an older TCB evaluation');
      out.fail(REJECT, 'collateral_rollback');
      return result(out, base);
    }
    const results = new Outcome();
    const { td, dcap } = run(args, collateral, measurements, results);
    return result(results, {
      ...base,
      tcbStatus: dcap?.status ?? null,
      advisoryIds: dcap?.advisoryIds ?? [],
      report: td ? registers(td) : null,
    });
  } catch (e) {
    // Not expected: every parser above reports its own failures. Refuse rather than throw.
    return refused(MALFORMED, 'invalid_input', 'input', `verifier error: ${e?.message ?? e}`, base);
  }
}
