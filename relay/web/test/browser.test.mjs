// The web app in a real browser (Debian's Chromium through playwright-core) against the stack
// `make run` starts: the real model server, enclave (dev quotes), key holder, relay and local
// chain. One stack for the file; the tests run in order (guests share one network address and
// its five free messages a day).

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { launch, watch } from './support/browser.mjs';
import { ROOT, startStack } from './support/stack.mjs';
import { installWallet, testKeypair } from './support/wallet.mjs';

const SHOTS = process.env.SVC_WEB_SCREENSHOTS;
let stack;
let chromium;
/// One context for the tests (tabs share localStorage, as a user's would).
let browser;

before(async () => {
  stack = await startStack();
  chromium = await launch();
  browser = await chromium.newContext({ viewport: { width: 1100, height: 900 } });
}, { timeout: 360_000 });

after(async () => {
  await chromium?.close();
  await stack?.stop();
});

/// A fresh tab with its own storage (sessionStorage, history), watched.
async function openPage(path = '/') {
  const page = await browser.newPage();
  const seen = watch(page);
  // Tabs share localStorage: each test starts with no history.
  await page.addInitScript(() => localStorage.removeItem('svc.chat.history'));
  await page.goto(`${stack.url}${path}`);
  return { page, seen };
}

async function verified(page) {
  await page.waitForFunction(() => /Verified|Rejected|Malformed|Cannot verify/.test(document.getElementById('badge').textContent), null, { timeout: 60_000 });
  return page.textContent('#badge');
}

async function send(page, text) {
  await page.fill('#prompt', text);
  await page.click('#send');
  await page.waitForFunction(() => {
    const s = document.getElementById('status').textContent;
    return s && !/Sealing and sending|verifying again/.test(s);
  }, null, { timeout: 180_000 });
  return page.textContent('#status');
}

const privateRoutes = (seen) => seen.requests.filter((r) => r.method === 'POST' && /\/(agent|tee\/process|api\/v1\/chat\/completions)$/.test(new URL(r.url).pathname));

/// Every file under `dir`, recursively.
function files(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : [path];
  });
}

test('a guest chats: the page verifies, seals, opens and checks the receipt; the canary never leaves the page in the clear', { timeout: 240_000 }, async () => {
  const { page, seen } = await openPage('/');
  assert.equal(await verified(page), 'Verified (development root)');
  await page.click('#badge');
  assert.match(await page.textContent('#panel-body'), /DEVELOPMENT/);
  assert.match(await page.textContent('#panel-body'), /nonce_signature/);
  if (SHOTS) await page.screenshot({ path: join(SHOTS, 'web-verification.png'), fullPage: true });
  await page.click('#badge');
  const canary = `canary-${Math.random().toString(36).slice(2)}-zebra`;
  const status = await send(page, `Repeat the word ${canary}`);
  assert.match(status, /Reply received and verified\. Free messages left today: 4\./);
  assert.equal(await page.locator('.message.assistant').count(), 1);
  assert.match(await page.textContent('.message.assistant .receipt'), /Receipt verified: .* · in the transparency log \(leaf \d+ of \d+\)/);
  const receipt = page.locator('.message.assistant .receipt a');
  assert.match(await receipt.getAttribute('href'), /^\/attestation\/[1-9A-HJ-NP-Za-km-z]{32,44}$/);
  if (SHOTS) await page.screenshot({ path: join(SHOTS, 'web-chat.png'), fullPage: true });

  // What left the page: one sealed /agent call, and nothing anywhere with the canary.
  const sent = privateRoutes(seen);
  assert.equal(sent.length, 1);
  const body = JSON.parse(sent[0].body);
  assert.equal(body.prompt, '');
  const envelope = JSON.parse(body.encryptedPrompt);
  assert.equal(envelope.algorithm, 'hpke-x25519-sha256-chacha20poly1305');
  for (const r of seen.requests) assert.ok(!r.url.includes(canary) && !r.body.includes(canary), `${r.method} ${r.url} carried the canary`);
  // The receipt the page checked is the one the relay stored.
  const address = (await receipt.getAttribute('href')).split('/').pop();
  const stored = await (await fetch(`${stack.url}/attestation/${address}`)).json();
  assert.equal(stored.clientPubkey, envelope.publicKey);
  // Not in any log, database row or file the stack keeps.
  for (const file of [...files(stack.runDir), ...files(stack.dataDir)]) {
    assert.ok(!readFileSync(file).includes(canary), `${file} holds the canary`);
  }
  assert.deepEqual(seen.errors, []);
  await page.close();
});

test('a relay that serves quotes under another root: the page says so and sends nothing', { timeout: 120_000 }, async () => {
  const page = await browser.newPage();
  const seen = watch(page);
  // Without the development root the page trusts Intel's, under which a dev quote is untrusted.
  await page.route('**/web/dev-trust.json', (route) => route.fulfill({ status: 404, contentType: 'application/json', body: '{"error":"not_found"}' }));
  await page.goto(`${stack.url}/`);
  assert.equal(await verified(page), 'Rejected');
  assert.match(await page.textContent('#panel-body'), /untrusted_root/);
  assert.ok(await page.isDisabled('#send'));
  await page.fill('#prompt', 'must not be sent');
  await page.locator('#chat-form').evaluate((f) => f.requestSubmit());
  assert.equal(privateRoutes(seen).length, 0);
  await page.close();
});

test('altered measurements or an altered quote: refused, nothing sent', { timeout: 120_000 }, async () => {
  for (const [name, tamper, reason] of [
    ['measurements', { trust: (t) => ({ ...t, measurements: { ...t.measurements, images: t.measurements.images.map((i) => ({ ...i, mrtd: 'ee'.repeat(48) })) } }) }, /mrtd_unknown/],
    ['quote', { attestation: (a) => ({ ...a, bindingTdxQuote: { ...a.bindingTdxQuote, quote: flipInQuote(a.bindingTdxQuote.quote) } }) }, /signature|invalid/],
  ]) {
    const page = await browser.newPage();
    const seen = watch(page);
    if (tamper.trust) await page.route('**/web/dev-trust.json', async (route) => route.fulfill({ response: await route.fetch(), json: tamper.trust(await (await route.fetch()).json()) }));
    if (tamper.attestation) await page.route('**/tee/attestation?*', async (route) => route.fulfill({ response: await route.fetch(), json: tamper.attestation(await (await route.fetch()).json()) }));
    await page.goto(`${stack.url}/`);
    assert.equal(await verified(page), 'Rejected', name);
    assert.match(await page.textContent('#panel-body'), reason, name);
    assert.ok(await page.isDisabled('#send'), name);
    assert.equal(privateRoutes(seen).length, 0, name);
    await page.close();
  }
});

/// Flips one byte of the TD report's MRTD (offset 48 + 136 in a v4 quote) in base64 quote text.
function flipInQuote(b64) {
  const bytes = Buffer.from(b64, 'base64');
  bytes[48 + 136] ^= 1;
  return bytes.toString('base64');
}

test('a reply sealed to another key does not open: the page re-verifies, retries once, then says it failed', { timeout: 240_000 }, async () => {
  const { page, seen } = await openPage('/');
  await verified(page);
  await page.route('**/agent', async (route) => {
    const response = await route.fetch();
    const json = await response.json();
    if (json.encryptedResponse) {
      const ct = Buffer.from(json.encryptedResponse.ciphertext, 'base64');
      ct[0] ^= 0xff;
      json.encryptedResponse.ciphertext = ct.toString('base64');
    }
    await route.fulfill({ response, json });
  });
  const status = await send(page, 'hello');
  assert.match(status, /did not open|failed/);
  assert.equal(await page.locator('.message.assistant').count(), 0, 'no reply shown');
  assert.equal(privateRoutes(seen).length, 2, 'one retry after verifying again');
  assert.equal(seen.requests.filter((r) => r.url.includes('/tee/attestation')).length, 2);
  await page.close();
});

test('a 429 shows its wait', { timeout: 120_000 }, async () => {
  const { page } = await openPage('/');
  await verified(page);
  await page.route('**/agent', (route) => route.fulfill({ status: 429, headers: { 'Retry-After': '17' }, contentType: 'application/json', body: '{"error":"rate_limited","message":"slow down"}' }));
  assert.match(await send(page, 'hello'), /Try again in 17 seconds/);
  await page.close();
});

test('the sixth guest message of the day shows the deposit prompt', { timeout: 600_000 }, async () => {
  const { page } = await openPage('/');
  await verified(page);
  for (let i = 0; i < 6; i++) {
    const status = await send(page, `message ${i}`);
    if (/used today’s free messages/.test(status)) break;
    assert.match(status, /Free messages left today: \d/);
  }
  assert.ok(await page.isVisible('#deposit-prompt'));
  assert.match(await page.textContent('#status'), /Sign in with a wallet and deposit/);
  await page.close();
});

test('a wallet signs in, gets a key shown once, rotates it, sees balance, usage and a deposit credited', { timeout: 300_000 }, async () => {
  const keypair = testKeypair();
  const page = await browser.newPage();
  const seen = watch(page);
  const signed = await installWallet(page, keypair);
  await page.goto(`${stack.url}/account`);
  await page.click('text=Connect Test Wallet');
  await page.waitForSelector('#new-key:not([hidden])');
  const key = await page.textContent('#new-key-value');
  assert.match(key, /^sk_svc_/);
  assert.equal(signed.length, 1);
  assert.match(signed[0], new RegExp(`^127\\.0\\.0\\.1:\\d+ wants you to sign in with your Solana account:\\n${keypair.address}\\n`));
  // The relay accepts it, and knows the wallet.
  const keys = await (await fetch(`${stack.url}/api/v1/keys`, { headers: { Authorization: `Bearer ${key}` } })).json();
  assert.equal(keys.wallet, keypair.address);
  await page.waitForSelector('#keys table');
  await page.waitForSelector('#balance table, #balance p');
  if (SHOTS) await page.screenshot({ path: join(SHOTS, 'web-account.png'), fullPage: true });

  // Rotate: the old secret stops working, the new one is shown.
  await page.click(`button[aria-label="Rotate ${keys.keys[0].keyId}"]`);
  await page.waitForFunction((old) => document.getElementById('new-key-value').textContent !== old, key);
  const rotated = await page.textContent('#new-key-value');
  assert.equal((await fetch(`${stack.url}/api/v1/balance`, { headers: { Authorization: `Bearer ${key}` } })).status, 401);
  assert.equal((await fetch(`${stack.url}/api/v1/balance`, { headers: { Authorization: `Bearer ${rotated}` } })).status, 200);

  // Signed in, the chat page pays from the balance: none yet, so the relay's 402 is a sentence.
  await page.goto(`${stack.url}/`);
  await verified(page);
  assert.match(await page.textContent('#who'), /Signed in/);
  assert.match(await send(page, 'paid hello'), /balance is too low/);
  assert.equal(privateRoutes(seen).filter((r) => r.url.endsWith('/tee/process')).length, 1);

  // A deposit sent on the local chain appears once credited.
  const { usdc } = stack.sandbox;
  execFileSync(join(ROOT, 'target/debug/svc'), ['--relay', stack.url, '--api-key', rotated, 'deposit', '--send', '1000000', '--mint', usdc,
    '--payer-key', join(stack.runDir, 'demo-payer.json'), '--rpc-url', stack.sandbox.rpcUrl], { stdio: 'ignore' });
  await page.goto(`${stack.url}/account`);
  const deadline = Date.now() + 120_000;
  for (;;) {
    await page.waitForSelector('#deposits table, #deposits p:not([aria-busy])');
    if (/1000000\s*credited/.test(await page.textContent('#deposits'))) break;
    assert.ok(Date.now() < deadline, 'the deposit was not credited');
    await new Promise((r) => setTimeout(r, 3000));
    await page.reload();
  }
  await page.waitForSelector('#balance table');
  assert.match(await page.textContent('#balance'), /usdc\s*1000000/);

  // Now a paid private chat on /tee/process, and its usage row.
  await page.goto(`${stack.url}/`);
  await verified(page);
  assert.match(await send(page, 'paid hello again'), /^Reply received and verified\.$/);
  await page.goto(`${stack.url}/account`);
  await page.waitForSelector('#usage table');
  assert.match(await page.textContent('#usage'), /\/tee\/process/);
  assert.deepEqual(seen.errors.filter((e) => !/402 \(Payment Required\)/.test(e)), []);
  await page.close();
});

test('keyboard only: the skip link reaches the message box and Ctrl+Enter sends', { timeout: 180_000 }, async () => {
  const { page, seen } = await openPage('/');
  await verified(page);
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement.textContent), 'Skip to the message box');
  await page.keyboard.press('Enter');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'prompt');
  await page.keyboard.type('typed without a mouse');
  await page.keyboard.press('Control+Enter');
  await page.waitForFunction(() => /used today|received/.test(document.getElementById('status').textContent), null, { timeout: 120_000 });
  assert.equal(privateRoutes(seen).length, 1);
  await page.close();
});

test('each page at 360 px: no horizontal scroll; axe-core finds no serious or critical violation', { timeout: 180_000 }, async () => {
  const axe = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  // axe is injected as a script, which the page's own CSP rightly refuses: this context only.
  const context = await chromium.newContext({ viewport: { width: 360, height: 800 }, bypassCSP: true });
  for (const path of ['/', '/account']) {
    const page = await context.newPage();
    const seen = watch(page);
    await page.goto(`${stack.url}${path}`);
    if (path === '/') {
      await verified(page);
      await page.click('#badge');
    } else {
      await page.waitForSelector('#x402 table');
    }
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 360), `${path} scrolls sideways at 360 px`);
    if (SHOTS) await page.screenshot({ path: join(SHOTS, `web-360${path === '/' ? '-chat' : '-account'}.png`), fullPage: true });
    await page.addScriptTag({ content: axe });
    const violations = await page.evaluate(async () => (await window.axe.run()).violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.length })));
    const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    assert.deepEqual(serious, [], `${path}: ${JSON.stringify(serious)}`);
    assert.deepEqual(seen.errors, [], path);
    await page.close();
  }
  await context.close();
});
