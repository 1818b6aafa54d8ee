// The decrypted request of DESIGN.md §4.1 as the enclave reads it (shared::envelope::
// PromptPlaintext): `prompt` or `messages`, then `model`, `maxTokens`, `temperature`,
// `timestamp`. Serialised in the Rust struct's member order with absent members left out, so
// the page's bytes are the bytes `svc chat` would seal; checked first, because the enclave
// refuses unknown members, both or neither of prompt/messages, an empty conversation and a
// temperature outside 0..2 (after it has used up the envelope).

export class PlaintextError extends Error {
  constructor(message) {
    super(message);
    this.name = 'PlaintextError';
  }
}

const MEMBERS = ['prompt', 'messages', 'model', 'maxTokens', 'temperature', 'timestamp'];
const ROLES = new Set(['system', 'user', 'assistant']);
const U32_MAX = 2 ** 32 - 1;

const present = (v) => v !== undefined && v !== null;
// JSON.stringify writes a lone surrogate as an escape that serde_json refuses to read.
const wellFormed = (s) => typeof s === 'string' && !/[\uD800-\uDFFF]/u.test(s);

function requireString(value, name) {
  if (!wellFormed(value)) throw new PlaintextError(`\`${name}\` must be a well-formed string`);
  return value;
}

function message(m, i) {
  if (typeof m !== 'object' || m === null || Array.isArray(m)) throw new PlaintextError(`messages[${i}] must be an object`);
  const extra = Object.keys(m).find((k) => k !== 'role' && k !== 'content');
  if (extra !== undefined) throw new PlaintextError(`messages[${i}] has an unknown member \`${extra}\``);
  if (!ROLES.has(m.role)) throw new PlaintextError(`messages[${i}].role must be system, user or assistant`);
  return { role: m.role, content: requireString(m.content, `messages[${i}].content`) };
}

/// The checked plaintext object, members in the Rust order; throws PlaintextError.
export function promptPlaintext(input) {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new PlaintextError('the plaintext must be an object');
  }
  const extra = Object.keys(input).find((k) => !MEMBERS.includes(k));
  if (extra !== undefined) throw new PlaintextError(`the plaintext has an unknown member \`${extra}\``);
  const out = {};
  if (present(input.prompt) === present(input.messages)) {
    throw new PlaintextError('the plaintext must have exactly one of `prompt` and `messages`');
  }
  if (present(input.prompt)) out.prompt = requireString(input.prompt, 'prompt');
  if (present(input.messages)) {
    if (!Array.isArray(input.messages)) throw new PlaintextError('`messages` must be an array');
    if (input.messages.length === 0) throw new PlaintextError('`messages` must not be empty');
    out.messages = input.messages.map(message);
  }
  if (present(input.model)) out.model = requireString(input.model, 'model');
  if (present(input.maxTokens)) {
    const n = input.maxTokens;
    if (!Number.isInteger(n) || n < 0 || n > U32_MAX) throw new PlaintextError('`maxTokens` must be an integer from 0 to 2^32-1');
    out.maxTokens = n;
  }
  if (present(input.temperature)) {
    const t = input.temperature;
    if (typeof t !== 'number' || !(t >= 0 && t <= 2)) throw new PlaintextError('`temperature` must be between 0 and 2');
    out.temperature = t;
  }
  if (present(input.timestamp)) {
    const t = input.timestamp;
    if (!Number.isSafeInteger(t) || t < 0) throw new PlaintextError('`timestamp` must be unix seconds');
    out.timestamp = t;
  }
  return out;
}

/// The UTF-8 JSON bytes of the checked plaintext.
export const promptPlaintextBytes = (input) => new TextEncoder().encode(JSON.stringify(promptPlaintext(input)));
