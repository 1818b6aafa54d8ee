// One private exchange: seal the prompt to the verified key, send it, open the reply, and
// check what the enclave signed (as `svc chat` does, client/src/chat.rs). Any check that
// fails fails the call: the page never shows a reply it could not verify.

import { openReplyJson, ReplyError } from '../crypto/reply.js';
import { verifyReceipt } from '../crypto/receipt.js';
import { hex, unhexLower } from '../crypto/bytes.js';
import { sealPrompt } from '../crypto/envelope.js';
import { chatEntry, checkInclusion, leafHash } from '../crypto/tlog.js';
import { ApiError, call } from './api.js';

/// The enclave key is stale (contract §3 rule 4): verify again and retry once.
export class StaleKeyError extends Error {}

const STALE_CODES = new Set(['tee_unreachable', 'decrypt_failed']);

export async function sendSealed(keys, prompt, model, key) {
  const plaintext = { prompt, timestamp: Math.floor(Date.now() / 1000), model };
  const sealed = await sealPrompt({ teePublicKey: keys.tee, plaintext, purpose: key ? 'prompt' : 'agent' });
  let answer;
  try {
    answer = key
      ? await call('POST', '/tee/process', { key, body: { encryptedPrompt: sealed.encryptedPrompt, model } })
      : await call('POST', '/agent', { body: { prompt: '', encryptedPrompt: sealed.encryptedPrompt, model } });
  } catch (e) {
    if (e instanceof ApiError && STALE_CODES.has(e.code)) throw new StaleKeyError(e.code);
    throw e;
  }
  if (answer?.requiresDeposit) return { depositRequired: true, freeMessagesRemaining: 0 };
  if (answer?.success !== true) throw new ApiError(200, answer?.error ?? 'malformed', answer?.message);
  let inner;
  try {
    inner = openReplyJson(sealed.context, answer.encryptedResponse);
  } catch (e) {
    if (e instanceof ReplyError && !e.staleKey) throw new Error('the reply opened but is not JSON');
    throw new StaleKeyError('the reply did not open');
  }
  const problems = checkAnswer(sealed, answer, inner, keys, model);
  if (problems.length) throw new Error(`the reply failed its checks: ${problems.join('; ')}`);
  return {
    reply: inner.reply,
    receipt: { address: inner.receipt.address, log: await logCheck(inner.receipt) },
    freeMessagesRemaining: answer.freeMessagesRemaining ?? null,
  };
}

const LOG_KEY = 'svc.logKey';

/// The receipt's place in the transparency log, against the log key this browser pinned on
/// first use (as `svc` pins it): `{ok, detail}`. A receipt missing from the log is a finding,
/// shown beside the reply, not a reason to hide a reply that verified.
async function logCheck(receipt) {
  try {
    const leaf = hex(leafHash(chatEntry(receipt)));
    const proof = await call('GET', `/log/v1/proof/inclusion?leafHash=${leaf}`);
    const pinned = localStorage.getItem(LOG_KEY);
    const named = typeof proof?.sth?.logKey === 'string' ? proof.sth.logKey : '';
    if (pinned && pinned !== named) return { ok: false, detail: `the log key changed (pinned ${pinned.slice(0, 16)}…)` };
    const key = unhexLower(named, 32);
    if (!key) return { ok: false, detail: 'the tree head names no log key' };
    const check = checkInclusion(receipt, proof, key);
    if (check.ok && !pinned) localStorage.setItem(LOG_KEY, named);
    return check;
  } catch (e) {
    return { ok: false, detail: e instanceof ApiError ? `no inclusion proof (${e.code})` : String(e.message ?? e) };
  }
}

const sameJson = (a, b) => JSON.stringify(a) === JSON.stringify(b);

function checkAnswer(sealed, outer, inner, keys, model) {
  const problems = [];
  const checks = verifyReceipt(inner.receipt, {
    ...sealed.sent,
    enclavePublicKey: keys.enclave,
    bindingQuoteSha256: keys.bindingQuoteSha256,
    model,
    replyModel: inner.model,
    servedBy: inner.servedBy,
  });
  for (const c of checks) if (!c.ok) problems.push(`${c.name}${c.detail ? ` (${c.detail})` : ''}`);
  // The relay could swap what it shows outside the sealed reply.
  if (!sameJson(outer.receipt, inner.receipt)) problems.push('the receipt outside differs from the sealed one');
  if (outer.model !== inner.model) problems.push('the model outside differs from the sealed one');
  if (outer.onchainAttestation && outer.onchainAttestation.address !== inner.receipt.address) {
    problems.push('the ledger record names another address');
  }
  return problems;
}
