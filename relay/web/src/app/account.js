// The operator's site: sign in with a wallet, then keys, balance, deposits and usage. Every
// call has a loading and an error state; nothing here is private plaintext, but the API key
// is a secret: shown once, kept in this tab only (session.js).

import { encode } from 'uqr';
import { call, sentence } from './api.js';
import { $, h, replace } from './dom.js';
import { apiKey, setApiKey, signOut } from './session.js';
import { signIn, watchWallets } from './wallet.js';

const loading = (el) => replace(el, h('p', { 'aria-busy': 'true' }, 'Loading…'));
const failed = (el, e, retry) =>
  replace(el, h('p', { class: 'bad', role: 'alert' }, sentence(e), ' ', retry ? h('button', { type: 'button', onclick: retry }, 'Try again') : ''));

async function section(el, load, render) {
  loading(el);
  try {
    render(await load());
  } catch (e) {
    failed(el, e, () => section(el, load, render));
  }
}

const when = (unix) => (unix ? new Date(unix * 1000).toISOString().replace('T', ' ').slice(0, 19) : '—');

function table(caption, columns, rows) {
  if (!rows.length) return h('p', {}, `No ${caption.toLowerCase()} yet.`);
  return h('div', { class: 'scroll' },
    h('table', { class: 'list' },
      h('caption', { class: 'visually-hidden' }, caption),
      h('thead', {}, h('tr', {}, columns.map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, rows.map((r) => h('tr', {}, r.map((cell) => h('td', {}, cell)))))));
}

function showNewKey(key) {
  $('new-key').hidden = false;
  $('new-key-value').textContent = key;
}

function renderKeys() {
  section($('keys'), () => call('GET', '/api/v1/keys', { key: apiKey() }), (list) =>
    replace($('keys'),
      h('p', {}, 'Wallet: ', h('code', {}, list.wallet)),
      table('Keys', ['Key', 'Scopes', 'Created', 'State', ''], list.keys.map((k) => [
        k.keyId, k.scopes, when(k.createdAt), k.revokedAt ? `revoked ${when(k.revokedAt)}` : 'active',
        k.revokedAt ? '' : h('span', {},
          h('button', { type: 'button', 'aria-label': `Rotate ${k.keyId}`, onclick: () => rotate(k.keyId) }, 'Rotate'), ' ',
          h('button', { type: 'button', 'aria-label': `Revoke ${k.keyId}`, onclick: () => revoke(k.keyId) }, 'Revoke')),
      ]))));
}

async function rotate(id) {
  try {
    const rotated = await call('POST', `/api/v1/keys/${encodeURIComponent(id)}/rotate`, { key: apiKey() });
    // The old secret of this key no longer works: if it was ours, keep the new one.
    setApiKey(rotated.apiKey);
    showNewKey(rotated.apiKey);
    $('signin-status').textContent = `Key ${id} rotated: the old secret no longer works.`;
    renderKeys();
  } catch (e) {
    $('signin-status').textContent = sentence(e);
  }
}

async function revoke(id) {
  try {
    await call('DELETE', `/api/v1/keys/${encodeURIComponent(id)}`, { key: apiKey() });
    $('signin-status').textContent = `Key ${id} revoked.`;
    renderKeys();
  } catch (e) {
    $('signin-status').textContent = sentence(e);
  }
}

function renderBalance() {
  section($('balance'), () => call('GET', '/api/v1/balance', { key: apiKey() }), (b) =>
    replace($('balance'), table('Balances', ['Currency', 'Amount (base units)'], b.balances.map((a) => [a.currency, a.amount]))));
}

function renderUsage(cursor) {
  const path = `/api/v1/usage?limit=20${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
  section($('usage'), () => call('GET', path, { key: apiKey() }), (page) =>
    replace($('usage'),
      table('Usage', ['When', 'Route', 'Model', 'Tokens in/out', 'Charged', 'Status'], page.data.map((u) => [
        when(u.createdAt), u.route, u.model, `${u.promptTokens}/${u.completionTokens}`, `${u.charged} ${u.currency}`, u.status,
      ])),
      page.nextCursor ? h('button', { type: 'button', onclick: () => renderUsage(page.nextCursor) }, 'Older') : ''));
}

/// A QR code as SVG elements (built node by node: the page writes no markup).
function qrSvg(text) {
  const NS = 'http://www.w3.org/2000/svg';
  const { data } = encode(text, { border: 2 });
  const svg = document.createElementNS(NS, 'svg');
  svg.setAttribute('viewBox', `0 0 ${data.length} ${data.length}`);
  svg.setAttribute('shape-rendering', 'crispEdges');
  const bg = document.createElementNS(NS, 'rect');
  for (const [k, v] of [['width', '100%'], ['height', '100%'], ['fill', '#fff']]) bg.setAttribute(k, v);
  svg.append(bg);
  let d = '';
  data.forEach((row, y) => row.forEach((on, x) => { if (on) d += `M${x} ${y}h1v1h-1z`; }));
  const path = document.createElementNS(NS, 'path');
  path.setAttribute('d', d);
  path.setAttribute('fill', '#000');
  svg.append(path);
  return svg;
}

function renderDeposit() {
  section($('deposit'), () => call('GET', '/api/v1/deposits/address', { key: apiKey() }), (d) => {
    const qr = h('div', { class: 'qr', role: 'img', 'aria-label': `QR code of the deposit address ${d.owner}` }, qrSvg(`solana:${d.owner}`));
    replace($('deposit'),
      h('p', {}, `Send tokens on ${d.network} to this address; they are credited to this key once confirmed.`),
      h('p', {}, h('code', {}, d.owner), ' ', h('button', { type: 'button', onclick: () => navigator.clipboard?.writeText(d.owner) }, 'Copy address')),
      qr,
      table('Accepted tokens', ['Token', 'Credits', 'Token account', 'Minimum'], d.tokenAccounts.map((t) => [t.mint, t.currency, t.tokenAccount, t.minAmount])));
  });
  section($('deposits'), () => call('GET', '/api/v1/deposits', { key: apiKey() }), (list) =>
    replace($('deposits'), table('Deposits', ['Transaction', 'Token', 'Amount', 'State'], list.deposits.map((d) => [
      d.signature.slice(0, 16) + '…', d.mint, d.amount, d.state,
    ]))));
}

function renderX402() {
  section($('x402'), () => call('GET', '/.well-known/x402'), (m) =>
    replace($('x402'),
      h('p', {}, 'Without an account: pay each call in the stablecoin with an x402 payment header.'),
      table('Priced routes', ['Route', 'Price (stablecoin base units)'], (m.routes ?? []).map((r) => [`${r.method} ${new URL(r.resource, location.href).pathname}`, r.price]))));
}

function renderSignedIn() {
  const signedIn = Boolean(apiKey());
  for (const el of document.querySelectorAll('.signed-in')) el.hidden = !signedIn;
  $('sign-out').hidden = !signedIn;
  if (!signedIn) return;
  renderKeys();
  renderBalance();
  renderDeposit();
  renderUsage();
}

function renderWallets(wallets) {
  if (!wallets.length) {
    replace($('wallets'), h('p', {}, 'No Solana wallet found in this browser. Install one that supports the Wallet Standard (Phantom, Solflare, Backpack) and reload.'));
    return;
  }
  replace($('wallets'), wallets.map((w) =>
    h('button', { type: 'button', onclick: async () => {
      $('signin-status').textContent = `Waiting for ${w.name}…`;
      try {
        const issued = await signIn(w);
        setApiKey(issued.apiKey);
        showNewKey(issued.apiKey);
        $('signin-status').textContent = `Signed in as ${issued.address}. Copy the key now: it is not shown again.`;
        renderSignedIn();
      } catch (e) {
        $('signin-status').textContent = sentence(e);
      }
    } }, `Connect ${w.name}`)));
}

function main() {
  $('copy-key').addEventListener('click', () => navigator.clipboard?.writeText($('new-key-value').textContent));
  $('sign-out').addEventListener('click', () => {
    signOut();
    $('new-key').hidden = true;
    $('signin-status').textContent = 'Signed out of this tab.';
    renderSignedIn();
  });
  watchWallets(renderWallets);
  renderSignedIn();
  renderX402();
}

main();
