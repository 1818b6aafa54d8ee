// Receipt addresses (DESIGN.md §4.5, shared/src/address.rs): the Solana program-derived address
// of the seeds ("attestation_v2", sha256(ciphertext)) under the attestation program id, found
// as `find_program_address` does: bump 255 down to 1, the first
// sha256(seeds ‖ bump ‖ program id ‖ "ProgramDerivedAddress") that is not an ed25519 point.

import { sha256 } from '@noble/hashes/sha2.js';
import { base58 } from '@scure/base';
import { concat, utf8 } from './bytes.js';
import { decompress } from './ed25519.js';

export const RECEIPT_SEED = 'attestation_v2';
const PDA_MARKER = utf8('ProgramDerivedAddress');

/// The program id receipts are addressed under when none is configured
/// (shared::address::default_program_id): sha256 of a label, so nobody holds its key. A relay
/// configured with another `programId` needs that one passed to verifyReceipt.
export const DEFAULT_PROGRAM_ID = base58.encode(sha256(utf8('svc attestation program v2 (embedded ledger)')));

/// A base58 address of exactly 32 bytes (shared::address::Address::parse); null otherwise.
export function parseAddress(text) {
  if (typeof text !== 'string' || text.length === 0 || text.length > 44) return null;
  try {
    const bytes = base58.decode(text);
    return bytes.length === 32 ? bytes : null;
  } catch {
    return null;
  }
}

/// `find_program_address(seeds, programId)` → {address (32 bytes), bump}; null in the 2^-255 case.
export function findProgramAddress(seeds, programId) {
  const prefix = concat(...seeds);
  for (let bump = 255; bump >= 1; bump--) {
    const digest = sha256(concat(prefix, Uint8Array.of(bump), programId, PDA_MARKER));
    if (!decompress(digest)) return { address: digest, bump };
  }
  return null;
}

/// The base58 receipt address of a ciphertext hash under `programId` (base58).
export function receiptAddress(ciphertextHash, programId = DEFAULT_PROGRAM_ID) {
  const program = parseAddress(programId);
  if (!program) throw new TypeError('programId is not a base58 address of 32 bytes');
  return base58.encode(findProgramAddress([utf8(RECEIPT_SEED), ciphertextHash], program).address);
}
