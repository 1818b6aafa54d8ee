// PEM certificate chains, as dcap-qvl's `extract_certs` reads them (the `pem` crate, 4.0): on
// bytes, block after block until no further block is found, whatever the labels say; a block
// that is found but malformed (labels that differ, text that is not UTF-8, bad base64, a
// header line without ':') fails the whole chain. The matcher is the crate's own, quirks
// included: its marker search does not back up after a partial match.

import { b64decode } from '../bytes.js';

const ascii = (text) => Uint8Array.from(text, (c) => c.charCodeAt(0));
const BEGIN = ascii('-----BEGIN ');
const DASHES = ascii('-----');
const END = ascii('-----END ');
const LF2 = ascii('\n\n');
const CRLF2 = ascii('\r\n\r\n');

/// [remaining after the marker, bytes before it], or null (the crate's `read_until`).
function readUntil(input, marker) {
  let index = 0;
  let found = 0;
  while (input.length - index >= marker.length - found) {
    found = input[index] === marker[found] ? found + 1 : 0;
    index += 1;
    if (found === marker.length) return [input.subarray(index), input.subarray(0, index - found)];
  }
  return null;
}

function skipWhitespace(input) {
  let i = 0;
  while (i < input.length && [0x20, 0x09, 0x0a, 0x0d].includes(input[i])) i++;
  return input.subarray(i);
}

/// The next block's { begin, headers, data, end } and what follows it; null when none.
function nextBlock(input) {
  const start = readUntil(input, BEGIN);
  const label = start && readUntil(start[0], DASHES);
  if (!label) return null;
  const payload = readUntil(skipWhitespace(label[0]), END);
  if (!payload) return null;
  const close = readUntil(payload[0], DASHES);
  if (!close) return null;
  const split = readUntil(payload[1], LF2) ?? readUntil(payload[1], CRLF2);
  const [data, headers] = split ?? [payload[1], new Uint8Array(0)];
  return { block: { begin: label[1], headers, data, end: close[1] }, rest: skipWhitespace(close[0]) };
}

function utf8(bytes) {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new Error('Failed to parse certs: NotUtf8');
  }
}

/// Rust's `char::is_whitespace` (Unicode White_Space).
const WHITESPACE = /[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]/g;

function decodeBlock({ begin, headers, data, end }) {
  const tag = utf8(begin);
  if (!tag) throw new Error('Failed to parse certs: MissingBeginTag');
  const tagEnd = utf8(end);
  if (!tagEnd) throw new Error('Failed to parse certs: MissingEndTag');
  if (tag !== tagEnd) throw new Error(`Failed to parse certs: MismatchedTags(${JSON.stringify(tag)}, ${JSON.stringify(tagEnd)})`);
  const der = b64decode(utf8(data).replace(WHITESPACE, ''));
  if (!der) throw new Error('Failed to parse certs: InvalidData');
  const lines = utf8(headers).split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  if (lines.some((line) => !line.replace(/\r$/, '').includes(':'))) throw new Error('Failed to parse certs: InvalidHeader');
  return der;
}

/// The DER of each PEM block in `chain` (a string, or bytes); throws dcap-qvl's error.
export function extractCerts(chain) {
  let input = typeof chain === 'string' ? new TextEncoder().encode(chain) : chain;
  const out = [];
  while (input.length > 0) {
    const next = nextBlock(input);
    if (!next) break;
    out.push(decodeBlock(next.block));
    input = next.rest;
  }
  return out;
}
