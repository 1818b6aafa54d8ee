// Before anything is sent: fetch the attestation with a fresh nonce and verify both quotes in
// this page (../attest/), against the measurements this bundle carries and Intel's root. A
// development root and its placeholder measurements are taken only when the page itself is
// served from this machine (make run, svc proxy), and are shown as "development".

import published from '../../../../measurements/measurements.json';
import { verifyQuote } from '../attest/verify.js';
import { call } from './api.js';
import { b64decode, hex, pemToDer, randomBytes, sha256 } from './bytes.js';

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);
const FLOOR_KEY = 'svc.tcbFloor';

/// Which root and measurements this page trusts.
export async function trustAnchors() {
  if (LOOPBACK.has(location.hostname)) {
    try {
      const dev = await call('GET', '/web/dev-trust.json');
      return { root: { kind: 'dev', der: pemToDer(dev.rootPem) }, measurements: dev.measurements, label: 'development' };
    } catch {
      // No development root offered: Intel's, as everywhere else.
    }
  }
  return { root: { kind: 'intel' }, measurements: published, label: 'intel' };
}

/// The highest TCB evaluation seen per platform (FMSPC) in this browser: collateral below it
/// is a rollback (as `svc` keeps in its state directory).
function floors() {
  try {
    return JSON.parse(localStorage.getItem(FLOOR_KEY) ?? '{}');
  } catch {
    return {};
  }
}

/// Verifies the enclave now. Returns the report the panel shows; `keys` only when accepted.
export async function attest() {
  const anchors = await trustAnchors();
  const nonce = randomBytes(32);
  const a = await call('GET', `/tee/attestation?nonce=${hex(nonce)}`);
  const report = {
    verdict: 'reject',
    reason: null,
    trustRoot: anchors.label,
    teePublicKey: a.teePublicKey,
    enclavePublicKey: a.enclavePublicKey,
    provider: a.tdxQuote?.provider ?? 'none',
    quotes: [],
    verifiedAt: new Date().toISOString(),
    keys: null,
  };
  if (!a.tdxQuote || !a.bindingTdxQuote) {
    report.reason = a.tdxQuoteError ?? 'no_quote';
    return report;
  }
  const tee = b64decode(a.teePublicKey, 32);
  const enclave = b64decode(a.enclavePublicKey, 32);
  let signature = a.nonceSignature ? b64decode(a.nonceSignature, 64) : new Uint8Array(64);
  if (!tee || !enclave || !signature) {
    report.verdict = 'malformed';
    report.reason = 'malformed_keys';
    return report;
  }
  // A nonce echoed wrong still runs the check, so the panel shows it failed.
  if (a.nonce !== hex(nonce)) signature = new Uint8Array(64);
  const floorTable = floors();
  const now = Math.floor(Date.now() / 1000);
  const run = (q, binding, proof) => {
    if (!q.collateral) return { verdict: 'unsupported', reason: 'no_collateral', checks: [] };
    const quote = b64decode(q.quote);
    if (!quote) return { verdict: 'malformed', reason: 'quote_not_base64', checks: [] };
    const doc = verifyQuote({
      quote,
      collateral: q.collateral,
      root: anchors.root,
      measurements: anchors.measurements,
      allowedTcbStatuses: ['UpToDate'],
      // The measurements file's minimum is applied inside (row tcb_evaluation); the
      // per-platform floor of this browser is checked below, once the FMSPC is known.
      minTcbEvaluation: null,
      binding,
      nonce: proof,
      now,
    });
    doc.quoteBytes = quote;
    const floor = doc.fmspc ? floorTable[doc.fmspc] : undefined;
    if (doc.verdict === 'accept' && floor !== undefined && doc.tcbEvaluationDataNumber < floor) {
      return { ...doc, verdict: 'reject', reason: 'collateral_rollback' };
    }
    return doc;
  };
  const publicDoc = run(a.tdxQuote, { kind: 'tee', tee }, null);
  const bindingDoc = run(a.bindingTdxQuote, { kind: 'keys', tee, enclave }, { nonce, signature, tee, enclave });
  report.quotes = [
    { name: 'public quote', doc: publicDoc },
    { name: 'binding quote', doc: bindingDoc },
  ];
  const worst = [publicDoc, bindingDoc].find((d) => d.verdict !== 'accept');
  report.verdict = worst ? worst.verdict : 'accept';
  report.reason = worst ? worst.reason : null;
  if (report.verdict === 'accept') {
    for (const d of [publicDoc, bindingDoc]) {
      if (d.fmspc && d.tcbEvaluationDataNumber != null) floorTable[d.fmspc] = Math.max(floorTable[d.fmspc] ?? 0, d.tcbEvaluationDataNumber);
    }
    localStorage.setItem(FLOOR_KEY, JSON.stringify(floorTable));
    report.keys = { tee, enclave, bindingQuoteSha256: hex(await sha256(bindingDoc.quoteBytes)) };
  }
  return report;
}
