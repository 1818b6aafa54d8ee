// The quote's shape, before any cryptography (shared/src/attest/evidence.rs): rows `size`,
// `quote_parse` and `tee_type`, and the parsed quote when there is one to check further.

import { equal, u16 } from './bytes.js';
import { MALFORMED, Outcome, UNSUPPORTED } from './document.js';
import { INTEL_QE_VENDOR_ID, TEE_TYPE_TDX, parseQuote } from './quote.js';

/// Quotes above this are not DCAP quotes (tdx.md §2.2).
export const MAX_QUOTE_LEN = 16 * 1024;

export function parseEvidence(quote) {
  const out = new Outcome();
  if (quote.length > MAX_QUOTE_LEN) {
    out.record('size', false, `quote ≤ ${MAX_QUOTE_LEN} B`, `${quote.length} B`);
    out.fail(MALFORMED, 'oversize');
    return { outcome: out, quote: null };
  }
  let parsed;
  try {
    parsed = parseQuote(quote);
  } catch (e) {
    out.record('quote_parse', false, null, null, e.message);
    const unsupported = headerUnsupported(quote);
    if (unsupported) out.fail(UNSUPPORTED, unsupported);
    else out.fail(MALFORMED, 'malformed_quote');
    return { outcome: out, quote: null };
  }
  out.record('quote_parse', true, null, `version ${parsed.header.version}`);
  const tee = parsed.header.teeType;
  const tdx = 'TDX (0x81)';
  out.compare('tee_type', 'not_tdx', tdx, tee === TEE_TYPE_TDX ? tdx : `0x${tee.toString(16)}`);
  return { outcome: out, quote: parsed };
}

/// Why a quote that did not parse did not: a recognisable Intel quote header of a version or
/// key type we do not handle is unsupported; anything else is malformed input.
function headerUnsupported(quote) {
  if (quote.length < 28 || !equal(quote.subarray(12, 28), INTEL_QE_VENDOR_ID)) return null;
  const version = u16(quote, 0);
  if (version < 3 || version > 5) return 'unsupported_quote_version';
  if (u16(quote, 2) !== 2) return 'unsupported_attestation_key';
  return null;
}
