// The verification document's parts: what one policy (or the evidence parse) found, its rows in
// order and its first failure (as `Outcome` in shared/src/attest/document.rs). The verdict is
// the first failure over all policies, in the order they ran.

export const ACCEPT = 'accept';
export const REJECT = 'reject';
export const UNSUPPORTED = 'unsupported';
export const MALFORMED = 'malformed';

export class Outcome {
  constructor() {
    this.checks = [];
    this.failure = null;
  }

  record(name, ok, expected = null, actual = null, detail = null) {
    this.checks.push({ name, ok, expected, actual, detail });
  }

  fail(verdict, reason) {
    if (!this.failure) this.failure = { verdict, reason };
  }

  /// An equality check; on mismatch the verdict is reject with `reason`.
  compare(name, reason, expected, actual) {
    const ok = expected === actual;
    this.record(name, ok, expected, actual);
    if (!ok) this.fail(REJECT, reason);
  }

  /// Appends `next` after this one's rows; an earlier failure wins.
  extend(next) {
    this.checks.push(...next.checks);
    if (next.failure) this.fail(next.failure.verdict, next.failure.reason);
  }
}

/// After a failed DCAP check the later rows still show the quote's values, to help diagnosis;
/// they say plainly that nothing vouches for them.
export function markUnauthenticated(checks) {
  const at = checks.findIndex((c) => c.name === 'dcap' && !c.ok);
  if (at < 0) return checks;
  const note = 'unauthenticated: the DCAP check failed';
  return checks.map((c, i) => (i > at ? { ...c, detail: c.detail ? `${c.detail}; ${note}` : note } : c));
}
