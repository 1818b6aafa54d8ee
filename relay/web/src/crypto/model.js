// Model-id resolution as shared/src/catalog.rs `resolve` does it, for the check `svc chat`
// makes that the enclave ran the model asked for (client/src/chat.rs `ran_what_was_asked`).
// The table is the catalog's ids, client-library ids and replacements; the Rust vector test
// writes resolve() for a set of inputs into shared/tests/vectors/envelope_v1.json, and the web
// test compares, so a catalog change shows on both sides.

export const PROVIDER = 'svc-gpu';
export const DEFAULT_MODEL = 'gpt-oss:20b';

const CATALOG = [
  { id: 'gpt-oss:20b', clientId: 'gpt-oss-20b' },
  { id: 'qwen3.8:27b' },
  { id: 'gemma4:31b' },
  { id: 'qwen3:8b', clientId: 'qwen3-8b', replacedBy: 'qwen3.8:27b' },
];

/// Strips our provider prefix, maps client-library ids to catalog ids, follows an archived model
/// to its replacement, and passes anything else through.
export function resolveModel(requested) {
  const prefix = `${PROVIDER}:`;
  const bare = requested.startsWith(prefix) ? requested.slice(prefix.length) : requested;
  const entry = CATALOG.find((m) => m.id === bare || m.clientId === bare);
  if (!entry) return bare;
  return entry.replacedBy ?? entry.id;
}
