// Debian's Chromium driven by playwright-core (no browser download): headless, with the
// background networking this closed machine refuses turned off.

import { chromium } from 'playwright-core';

export const CHROMIUM = process.env.SVC_CHROMIUM ?? '/usr/bin/chromium';

export function launch() {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
}

/// Every request a page makes, and every console error, for the checks that nothing leaks and
/// nothing failed silently.
export function watch(page) {
  const seen = { requests: [], errors: [] };
  page.on('request', (r) => seen.requests.push({ method: r.method(), url: r.url(), body: r.postData() ?? '' }));
  page.on('console', (m) => m.type() === 'error' && seen.errors.push(m.text()));
  page.on('pageerror', (e) => seen.errors.push(String(e)));
  return seen;
}
