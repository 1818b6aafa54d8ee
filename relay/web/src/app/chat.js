// The chat page. Nothing is sent until the enclave is verified in this page (trust.js); every
// prompt is sealed here to the verified key, and every reply is opened and its receipt checked
// here. The relay sees only ciphertext. Guests use encrypted `/agent` (free messages); signed-in
// users `/tee/process`, paid from their balance.

import { ApiError, call, sentence } from './api.js';
import { $, h, replace } from './dom.js';
import * as history from './history.js';
import { renderMarkdown } from './markdown.js';
import { badgeText, renderPanel } from './panel.js';
import { apiKey } from './session.js';
import { attest } from './trust.js';
import { sendSealed, StaleKeyError } from './sealed.js';

const ARCHIVED = { 'qwen3:8b': 'qwen3.8:27b' };
const LABELS = { 'qwen3.8:27b': 'Uncensored' };
/// The catalog of contract §2.1, for guests: `GET /api/v1/models` needs an API key.
const CATALOG = [
  { id: 'gpt-oss:20b', status: 'Live' },
  { id: 'qwen3.8:27b', status: 'Live' },
  { id: 'gemma4:31b', status: 'Soon' },
];

const state = { report: null, busy: false, entries: history.load() };

function setStatus(text, kind = '') {
  const el = $('status');
  el.className = kind;
  el.textContent = text;
}

function canSend() {
  return state.report?.verdict === 'accept' && state.report.keys && !state.busy;
}

function refreshControls() {
  $('send').disabled = !canSend();
  $('prompt').setAttribute('aria-describedby', 'status');
  const badge = $('badge');
  badge.textContent = badgeText(state.report);
  badge.className = `badge ${state.report?.verdict === 'accept' ? (state.report.trustRoot === 'development' ? 'warn' : 'good') : state.report ? 'bad' : ''}`;
}

async function verify() {
  state.report = null;
  refreshControls();
  renderPanel($('panel-body'), null);
  try {
    state.report = await attest();
    renderPanel($('panel-body'), state.report);
    if (state.report.verdict !== 'accept') togglePanel(true);
    if (state.report.verdict !== 'accept') setStatus(`The enclave could not be verified (${state.report.reason}). Nothing can be sent.`, 'bad');
  } catch (e) {
    state.report = { verdict: 'reject', reason: e instanceof ApiError ? e.code : 'error', quotes: [], trustRoot: '' };
    renderPanel($('panel-body'), null, sentence(e));
    togglePanel(true);
    setStatus(sentence(e), 'bad');
  }
  refreshControls();
}

function renderEntry(entry) {
  const body = h('div', { class: 'text' });
  if (entry.role === 'assistant') renderMarkdown(body, entry.text);
  else body.textContent = entry.text;
  const badge = entry.receipt
    ? h('p', { class: 'receipt good' },
        '✓ Receipt verified: ',
        h('a', { href: `/attestation/${encodeURIComponent(entry.receipt.address)}` }, `${entry.receipt.address.slice(0, 12)}…`),
        entry.receipt.log?.ok ? ` · in the transparency log (${entry.receipt.log.detail})` : '')
    : '';
  const logWarning = entry.receipt?.log && !entry.receipt.log.ok
    ? h('p', { class: 'receipt bad' }, `✗ Not shown in the transparency log: ${entry.receipt.log.detail}`)
    : '';
  return h('li', { class: `message ${entry.role}` }, h('span', { class: 'who' }, entry.role === 'user' ? 'You' : 'Assistant'), body, badge, logWarning);
}

function renderHistory() {
  replace($('messages'), state.entries.map(renderEntry));
  $('messages').lastElementChild?.scrollIntoView({ block: 'end' });
}

async function loadModels() {
  const select = $('model');
  try {
    const list = apiKey() ? (await call('GET', '/api/v1/models', { key: apiKey() })).data : CATALOG;
    const options = list.map((m) => {
      // The REST catalog prefixes a provider (`<provider>:<id>`); the page sends bare ids.
      const id = m.id.split(':').length > 2 ? m.id.slice(m.id.indexOf(':') + 1) : m.id;
      const label = [id, LABELS[id], m.status !== 'Live' ? m.status : null].filter(Boolean).join(' · ');
      return h('option', { value: id, disabled: m.status !== 'Live' }, label);
    });
    replace(select, options);
    const saved = localStorage.getItem('svc.chat.model');
    const wanted = ARCHIVED[saved] ?? saved;
    if (wanted && [...select.options].some((o) => o.value === wanted && !o.disabled)) select.value = wanted;
  } catch (e) {
    replace(select, h('option', { value: 'gpt-oss:20b' }, 'gpt-oss:20b'));
    setStatus(`The model list could not be loaded: ${sentence(e)}`, 'bad');
  }
}

async function onSend(event) {
  event.preventDefault();
  const prompt = $('prompt').value.trim();
  if (!prompt || !canSend()) return;
  state.busy = true;
  refreshControls();
  setStatus('Sealing and sending…');
  $('prompt').setAttribute('aria-busy', 'true');
  const model = $('model').value;
  localStorage.setItem('svc.chat.model', model);
  try {
    let outcome;
    try {
      outcome = await sendSealed(state.report.keys, prompt, model, apiKey());
    } catch (e) {
      // Contract §3 rule 4: the key may have changed (a new boot). Verify again, retry once.
      if (!(e instanceof StaleKeyError)) throw e;
      setStatus('The enclave key changed: verifying again…');
      await verify();
      if (!canSendAfterReverify()) throw new Error('the enclave could not be verified again');
      outcome = await sendSealed(state.report.keys, prompt, model, apiKey());
    }
    if (outcome.depositRequired) {
      setStatus(sentence(new ApiError(200, 'free_trial_exhausted')), 'bad');
      $('deposit-prompt').hidden = false;
      return;
    }
    state.entries.push({ role: 'user', text: prompt, at: Date.now() });
    state.entries.push({ role: 'assistant', text: outcome.reply, receipt: outcome.receipt, at: Date.now() });
    history.save(state.entries);
    renderHistory();
    $('prompt').value = '';
    const free = outcome.freeMessagesRemaining;
    setStatus(free == null ? 'Reply received and verified.' : `Reply received and verified. Free messages left today: ${free}.`, 'good');
  } catch (e) {
    setStatus(sentence(e), 'bad');
  } finally {
    state.busy = false;
    $('prompt').removeAttribute('aria-busy');
    refreshControls();
  }
}

function canSendAfterReverify() {
  return state.report?.verdict === 'accept' && state.report.keys;
}

function togglePanel(open) {
  const panel = $('panel');
  panel.hidden = open === undefined ? !panel.hidden : !open;
  $('badge').setAttribute('aria-expanded', String(!panel.hidden));
}

function main() {
  $('chat-form').addEventListener('submit', onSend);
  $('prompt').addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) $('chat-form').requestSubmit();
  });
  $('reverify').addEventListener('click', verify);
  $('badge').addEventListener('click', () => togglePanel());
  $('clear').addEventListener('click', () => {
    history.clear();
    state.entries = [];
    renderHistory();
    setStatus('History cleared from this browser.');
  });
  $('who').textContent = apiKey() ? 'Signed in: paid from your balance.' : 'Guest: 5 free private messages a day.';
  renderHistory();
  refreshControls();
  loadModels();
  verify();
}

main();
