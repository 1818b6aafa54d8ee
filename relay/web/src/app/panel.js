// The verification panel: the verdict, the trust root, and every check of both quotes with
// its expected and actual values, as `svc attest` prints them.

import { h, replace } from './dom.js';

const VERDICT_TEXT = {
  accept: 'Verified',
  reject: 'Rejected',
  malformed: 'Malformed evidence',
  unsupported: 'Cannot verify',
};

export function badgeText(report) {
  if (!report) return 'Verifying…';
  const base = VERDICT_TEXT[report.verdict] ?? report.verdict;
  return report.trustRoot === 'development' && report.verdict === 'accept' ? `${base} (development root)` : base;
}

export function renderPanel(target, report, error) {
  if (error) {
    replace(target, h('p', { class: 'bad', role: 'alert' }, `Verification could not run: ${error}. Nothing can be sent.`));
    return;
  }
  if (!report) {
    replace(target, h('p', { 'aria-busy': 'true' }, 'Verifying the enclave…'));
    return;
  }
  const ok = report.verdict === 'accept';
  replace(
    target,
    h('p', { class: ok ? 'good' : 'bad', role: ok ? 'status' : 'alert' },
      h('strong', {}, badgeText(report)),
      report.reason ? ` — ${report.reason}` : '',
      ok ? '' : '. Nothing can be sent.'),
    report.trustRoot === 'development'
      ? h('p', { class: 'warn' }, 'Trust root: DEVELOPMENT. These quotes are signed by a test key on this machine and prove nothing about hardware.')
      : h('p', {}, 'Trust root: Intel SGX Root CA.'),
    h('dl', {},
      h('dt', {}, 'Enclave key (X25519)'), h('dd', { class: 'mono' }, report.teePublicKey ?? '—'),
      h('dt', {}, 'Receipt key (ed25519)'), h('dd', { class: 'mono' }, report.enclavePublicKey ?? '—'),
      h('dt', {}, 'Quote provider'), h('dd', {}, report.provider),
      h('dt', {}, 'Verified at'), h('dd', {}, report.verifiedAt)),
    report.quotes.map(({ name, doc }) =>
      h('section', { class: 'quote' },
        h('h3', {}, `${name}: ${VERDICT_TEXT[doc.verdict] ?? doc.verdict}${doc.reason ? ` (${doc.reason})` : ''}`),
        doc.tcbStatus ? h('p', {}, `TCB status ${doc.tcbStatus}, evaluation ${doc.tcbEvaluationDataNumber ?? '—'}, FMSPC ${doc.fmspc ?? '—'}`) : '',
        h('table', {},
          h('caption', { class: 'visually-hidden' }, `Checks of the ${name}`),
          h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Check'), h('th', { scope: 'col' }, 'Result'), h('th', { scope: 'col' }, 'Expected'), h('th', { scope: 'col' }, 'Actual'))),
          h('tbody', {}, (doc.checks ?? []).map((c) =>
            h('tr', {},
              h('th', { scope: 'row' }, c.name),
              h('td', { class: c.ok ? 'good' : 'bad', 'data-label': 'Result' }, c.ok ? 'pass' : 'FAIL'),
              h('td', { class: 'mono', 'data-label': 'Expected' }, c.expected ?? ''),
              h('td', { class: 'mono', 'data-label': 'Actual' }, c.actual ?? c.detail ?? ''))))))),
  );
}
