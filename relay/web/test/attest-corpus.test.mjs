// Parity with the Rust verifier: every case of the verifier corpus (dev_quote::corpus, printed
// by the `attest-corpus` binary with the verdict `shared::attest::verify` gives it now) runs
// through src/attest/verify.js bundled for the browser, as the page bundles it (esbuild,
// platform browser, so @phala/dcap-qvl takes its pure-JS path), and must get the same verdict,
// reason and rows.
//
// The exporter: $SVC_ATTEST_CORPUS_BIN, or else built here with cargo into
// ../../target/debug/attest-corpus.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import * as esbuild from 'esbuild';

const web = join(import.meta.dirname, '..');
const repo = join(web, '..', '..');

/// Where the JS verifier is known to answer differently from the Rust one, and why. Each entry
/// names a case and the verdict the page gives instead; a case listed here that agrees with
/// Rust again fails, so the list cannot go stale. Empty: every case agrees.
const KNOWN_DIFFERENCES = new Map([]);

function corpus() {
  let bin = process.env.SVC_ATTEST_CORPUS_BIN;
  if (!bin) {
    execFileSync('cargo', ['build', '--locked', '-p', 'dev-quote', '--features', 'corpus', '--bin', 'attest-corpus'], {
      cwd: repo,
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    bin = join(web, '..', '..', 'target', 'debug', 'attest-corpus');
  }
  return JSON.parse(execFileSync(bin, { maxBuffer: 1 << 28, encoding: 'utf8' }));
}

/// src/attest/verify.js as the page gets it: one ESM bundle for the browser.
async function bundle() {
  const dir = mkdtempSync(join(tmpdir(), 'attest-bundle-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const outfile = join(dir, 'attest.mjs');
  await esbuild.build({
    stdin: {
      contents: [
        "export { verifyQuote } from './src/attest/verify.js';",
        "export { libraryInBrowserMode, libraryVeto } from './src/attest/dcap/library.js';",
        "export { parseQuote } from './src/attest/quote.js';",
        "export { parseCollateral } from './src/attest/collateral.js';",
        "export { extractCerts } from './src/attest/dcap/pem.js';",
      ].join('\n'),
      resolveDir: web,
      loader: 'js',
    },
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    outfile,
    define: { 'process.env.NODE_ENV': '"production"', global: 'globalThis' },
    logLevel: 'warning',
  });
  return import(outfile);
}

const bytes = (b64) => new Uint8Array(Buffer.from(b64, 'base64'));
const unhex = (text) => new Uint8Array(Buffer.from(text, 'hex'));

/// The verifyQuote arguments of an exported case.
function args(c) {
  const keys = (o) => o && Object.fromEntries(Object.entries(o).map(([k, v]) => [k, k === 'kind' ? v : unhex(v)]));
  return {
    quote: c.quoteFile ? new Uint8Array(readFileSync(join(repo, c.quoteFile))) : bytes(c.quote),
    collateral: c.collateralFile ? readFileSync(join(repo, c.collateralFile), 'utf8') : c.collateral,
    root: c.root.kind === 'intel' ? { kind: 'intel' } : { kind: 'dev', der: bytes(c.root.der) },
    measurements: c.measurements,
    allowedTcbStatuses: c.allowedTcbStatuses,
    minTcbEvaluation: c.minTcbEvaluation,
    binding: keys(c.binding),
    nonce: keys(c.nonce),
    now: c.now,
  };
}

const { cases } = corpus();
const { verifyQuote, libraryInBrowserMode, libraryVeto, parseQuote, parseCollateral, extractCerts } = await bundle();
const verdicts = [];

test('the bundle runs @phala/dcap-qvl on its browser code path', () => {
  assert.equal(libraryInBrowserMode(), true);
});

test('the corpus is the whole corpus, and the Rust verifier gives every verdict it requires', () => {
  const groups = new Set(cases.map((c) => c.group));
  for (const g of ['baseline', 'truncation', 'bit_flip', 'chain', 'collateral', 'td_policy', 'binding', 'sgx_oversize', 'parity', 'samples']) {
    assert.ok(groups.has(g), `group ${g} is missing`);
  }
  for (const c of cases) assert.deepEqual(c.rust.verdict === c.expected.verdict && c.rust.reason === c.expected.reason, true, `${c.group}: ${c.name}`);
});

for (const c of cases) {
  test(`${c.group}: ${c.name}`, () => {
    const doc = verifyQuote(args(c));
    const known = KNOWN_DIFFERENCES.get(c.name);
    const got = { verdict: doc.verdict, reason: doc.reason };
    verdicts.push({ name: c.name, agrees: !known });
    if (known) {
      assert.notDeepEqual(got, { verdict: c.rust.verdict, reason: c.rust.reason }, 'now agrees with Rust: remove it from KNOWN_DIFFERENCES');
      assert.deepEqual(got, known.js, known.why);
      return;
    }
    const detail = doc.checks.find((r) => r.name === 'dcap')?.detail;
    assert.deepEqual(got, { verdict: c.rust.verdict, reason: c.rust.reason }, `JS dcap: ${detail}\nRust dcap: ${c.rust.checks.find((r) => r.name === 'dcap')?.detail}`);
    assert.deepEqual(
      doc.checks.map((r) => [r.name, r.ok]),
      c.rust.checks.map((r) => [r.name, r.ok]),
      'the rows (name, ok) in order',
    );
    assert.equal(doc.tcbStatus, c.rust.tcbStatus);
    for (const row of c.rust.checks.filter((r) => r.name !== 'dcap' && r.name !== 'quote_parse' && r.name !== 'collateral_parse')) {
      const mine = doc.checks.find((r) => r.name === row.name);
      assert.equal(mine.expected, row.expected, `${row.name} expected`);
      assert.equal(mine.actual, row.actual, `${row.name} actual`);
      assert.equal(mine.detail, row.detail, `${row.name} detail`);
    }
  });
}

test('every case ran', () => {
  assert.equal(verdicts.length, cases.length);
});

const named = (name) => args(cases.find((c) => c.name === name));
const pick = (doc) => ({ verdict: doc.verdict, reason: doc.reason });

test('an accepted document carries the TCB status, the registers, the platform and the root', () => {
  const doc = verifyQuote(named('V4'));
  assert.deepEqual(pick(doc), { verdict: 'accept', reason: null });
  assert.equal(doc.tcbStatus, 'UpToDate');
  assert.deepEqual(doc.advisoryIds, []);
  assert.equal(doc.trustRoot, 'development');
  assert.match(doc.trustRootId, /^dev:[0-9a-f]{64}$/);
  assert.deepEqual([doc.fmspc, doc.tcbEvaluationDataNumber], ['de7000000000', 1]);
  assert.equal(doc.report.mrtd, 'a0'.repeat(48));
  assert.equal(doc.report.rtmr3, '00'.repeat(48));
  const intel = verifyQuote(named('v4 sample offline'));
  assert.deepEqual([intel.verdict, intel.trustRoot, intel.tcbStatus, intel.fmspc], ['accept', 'intel', 'UpToDate', 'b0c06f000000']);
  assert.ok(intel.validUntil > named('v4 sample offline').now);
});

test("the client's TCB floor (minTcbEvaluation) refuses older collateral as a rollback", () => {
  assert.deepEqual(pick(verifyQuote({ ...named('V4'), minTcbEvaluation: 1 })), { verdict: 'accept', reason: null });
  const doc = verifyQuote({ ...named('V4'), minTcbEvaluation: 2 });
  assert.deepEqual(pick(doc), { verdict: 'reject', reason: 'collateral_rollback' });
  assert.deepEqual(doc.checks.map((c) => [c.name, c.ok, c.expected, c.actual]), [['tcb_floor', false, '>= 2', '1']]);
  const sample = verifyQuote({ ...named('v4 sample offline'), minTcbEvaluation: 18 });
  assert.deepEqual(pick(sample), { verdict: 'reject', reason: 'collateral_rollback' });
});

test('bad input is a verdict, never an exception', () => {
  const good = named('V4');
  for (const [edit, reason] of [
    [{ quote: 'not bytes' }, 'invalid_input'],
    [{ root: { kind: 'dev' } }, 'invalid_input'],
    [{ root: null }, 'invalid_input'],
    [{ now: '1800000000' }, 'invalid_input'],
    [{ allowedTcbStatuses: 'UpToDate' }, 'invalid_input'],
    [{ binding: { kind: 'keys', tee: new Uint8Array(31), enclave: new Uint8Array(32) } }, 'invalid_input'],
    [{ binding: { kind: 'other', tee: new Uint8Array(32) } }, 'invalid_input'],
    [{ nonce: { nonce: new Uint8Array(32), signature: new Uint8Array(63) } }, 'invalid_input'],
    [{ measurements: { schemaVersion: 2, images: [], rtmr0: [] } }, 'malformed_measurements'],
    [{ measurements: undefined }, 'malformed_measurements'],
    [{ collateral: 42 }, 'malformed_collateral'],
    [{ collateral: null }, 'malformed_collateral'],
    [{ collateral: '[]' }, 'malformed_collateral'],
    [{ collateral: JSON.stringify({ ...JSON.parse(good.collateral), pck_crl: 'zz' }) }, 'malformed_collateral'],
    [{ quote: new Uint8Array(0) }, 'malformed_quote'],
  ]) {
    const doc = verifyQuote({ ...good, ...edit });
    assert.deepEqual(pick(doc), { verdict: 'malformed', reason }, JSON.stringify(Object.keys(edit)));
  }
  assert.deepEqual(pick(verifyQuote(undefined)), { verdict: 'malformed', reason: 'invalid_input' });
  // Collateral given as parsed JSON is read the same as its text.
  assert.deepEqual(pick(verifyQuote({ ...good, collateral: JSON.parse(good.collateral) })), { verdict: 'accept', reason: null });
});

test("dcap-qvl's refusals count, except where this verifier appraises as dcap-qvl 0.7.1 does", () => {
  // The library checks the paths given, here the chains as presented without their root.
  const veto = (name) => {
    const a = named(name);
    const [quote, collateral] = [parseQuote(a.quote), parseCollateral(a.collateral).inner];
    const path = (chain) => extractCerts(chain).slice(0, -1);
    const paths = { tcb: path(collateral.tcb_info_issuer_chain), qe: path(collateral.qe_identity_issuer_chain), pck: path(quote.auth.certificationData.body) };
    const rootDer = a.root.kind === 'dev' ? a.root.der : null;
    return libraryVeto(a.quote, quote, collateral, a.root, a.now, paths, rootDer);
  };
  assert.equal(veto('V4'), null);
  assert.equal(veto('tcb_info edited'), 'dcap-qvl-js: Signature is invalid for tcb_info');
  assert.equal(veto('revoked PCK'), 'dcap-qvl-js: Failed to verify certificate chain: CertRevoked');
  assert.equal(veto('another dev root'), 'dcap-qvl-js: Failed to verify certificate chain - leaf signature invalid');
  // Superseded: its TCB level matching and attribute table are an older dcap-qvl's.
  assert.equal(veto('TDX component below the TCB level'), null);
  assert.equal(veto('TD profiling (TUD bit 4)'), null);
  // Blind spots of its browser path, which the corpus cases above show this verifier closes.
  assert.equal(veto('expired PCK'), null, 'no validity dates on the browser path');
  assert.equal(veto('PCK CRL of another PKI'), null, 'no CRL signatures');
  assert.equal(veto('TDX module signer'), null, 'no TDX module identity');
});
