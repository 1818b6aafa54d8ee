// Report attributes as dcap-qvl 0.7.1 validates them (`validate_attrs`, with neither debug nor
// service TDs allowed): for a TD, DEBUG and the other TUD bits off, the TDX 1.5 must-be-zero
// bits zero, no migration, no SERVTD_EXT, SEPT_VE_DISABLE on; for a TD 1.5, no service TD.

import { isZero } from '../bytes.js';

/// Bits 1–3, 7–15, 23–26 and 32–61 of TD_ATTRIBUTES (Intel TDX Module ABI 348551-008US,
/// Table 3.23), as BigInt.
const ones = (from, to) => ((1n << BigInt(to - from + 1)) - 1n) << BigInt(from);
const RESERVED_MBZ = ones(1, 3) | ones(7, 15) | ones(23, 26) | ones(32, 61);
const bit = (n) => 1n << BigInt(n);

const le64 = (bytes) => bytes.reduceRight((n, b) => (n << 8n) | BigInt(b), 0n);

export function validateSgxAttributes(report) {
  if (report.attributes[0] & 0x02) throw new Error('Debug mode is enabled');
}

function validateTd10(td, allowServtdExt) {
  const attributes = le64(td.tdAttributes);
  const tud = td.tdAttributes[0];
  if (tud & 0x01) throw new Error('Debug mode is enabled');
  if (tud & 0x70) throw new Error('TD profiling is enabled');
  if (attributes & RESERVED_MBZ) throw new Error('Reserved bits in TD attributes are set');
  if (attributes & bit(29)) throw new Error('TD migration is enabled');
  if (attributes & bit(17) && !allowServtdExt) throw new Error('SERVTD_EXT is enabled');
  if (!(attributes & bit(28))) throw new Error('SEPT_VE_DISABLE is not enabled');
}

function validateTd15(td15) {
  if (!isZero(td15.mrServiceTd)) throw new Error('Invalid MR service TD');
  validateTd10(td15.base, false);
}

/// `report`: the parsed quote's report ({ kind, data }).
export function validateAttributes(report) {
  switch (report.kind) {
    case 'td15':
      return validateTd15(report.data);
    case 'td15ex':
      return validateTd15(report.data.base);
    case 'td10':
      return validateTd10(report.data, false);
    default:
      return validateSgxAttributes(report.data);
  }
}
