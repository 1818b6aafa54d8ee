// The TCB appraisal of dcap-qvl 0.7.1 (steps 8–10 of its `verify_impl`): the platform's TCB
// level in the TCB info (levels in Intel QVL's order; for TDX, module version > 0 leaves TDX
// components 0 and 1 to the TDX module identity), the module's own level, signer and SEAM
// attributes, and the statuses converged as Intel QVL converges them.

import { compareArrays, equal, hexUpper, unhex } from '../bytes.js';
import { td10, td15 } from '../quote.js';
import { parseRfc3339 } from '../time.js';

const TCB_INFO_STATUSES = ['UpToDate', 'OutOfDate', 'ConfigurationNeeded', 'Revoked', 'OutOfDateConfigurationNeeded', 'SWHardeningNeeded', 'ConfigurationAndSWHardeningNeeded'];
const TDX_MODULE_STATUSES = ['UpToDate', 'OutOfDate', 'Revoked'];
export const QE_IDENTITY_STATUSES = ['UpToDate', 'OutOfDate', 'ConfigurationNeeded', 'Revoked', 'OutOfDateConfigurationNeeded'];

export function ensureValidStatus(status, valid, structure) {
  if (!valid.includes(status)) throw new Error(`Unrecognized TCB status ${status} in ${structure}`);
}

/// Intel QVL's `convergeTcbStatuses`: only an OutOfDate or Revoked component moves the platform.
export function converge(platform, component) {
  if (component === 'Revoked') return 'Revoked';
  if (component === 'OutOfDate') {
    if (platform === 'UpToDate' || platform === 'SWHardeningNeeded') return 'OutOfDate';
    if (platform === 'ConfigurationNeeded' || platform === 'ConfigurationAndSWHardeningNeeded') return 'OutOfDateConfigurationNeeded';
  }
  return platform;
}

/// Intel QVL's `checkForRelaunch` for a TD 1.5's launch and current statuses.
export function checkForRelaunch(launch, current) {
  const configurationNeeded = (s) => ['ConfigurationNeeded', 'OutOfDateConfigurationNeeded', 'ConfigurationAndSWHardeningNeeded', 'TDRelaunchAdvisedConfigurationNeeded'].includes(s);
  if (['OutOfDate', 'OutOfDateConfigurationNeeded'].includes(launch) && ['UpToDate', 'SWHardeningNeeded', 'ConfigurationNeeded', 'ConfigurationAndSWHardeningNeeded'].includes(current)) {
    return configurationNeeded(launch) || configurationNeeded(current) ? 'TDRelaunchAdvisedConfigurationNeeded' : 'TDRelaunchAdvised';
  }
  return launch;
}

/// A status with advisories merged with another's (platform with QE).
export function merge(a, b) {
  return { status: converge(a.status, b.status), advisoryIds: [...a.advisoryIds, ...b.advisoryIds.filter((id) => !a.advisoryIds.includes(id))] };
}

/// Intel QVL's order: SGX components, then PCE SVN, then (TDX) TDX components, highest first.
function canonicalLevels(tcbInfo) {
  const tdx = tcbInfo.version >= 3 && tcbInfo.id === 'TDX';
  return [...tcbInfo.tcbLevels].sort(
    (a, b) =>
      compareArrays(b.tcb.sgxComponents, a.tcb.sgxComponents) ||
      b.tcb.pceSvn - a.tcb.pceSvn ||
      (tdx ? compareArrays(b.tcb.tdxComponents, a.tcb.tdxComponents) : 0),
  );
}

/// Whether the platform meets `level` (errors on component count mismatches).
function meets(level, cpuSvn, pceSvn, teeTcbSvn) {
  const { tcb } = level;
  if (tcb.sgxComponents.length !== cpuSvn.length) throw new Error(`SGX component count mismatch: expected ${cpuSvn.length}, got ${tcb.sgxComponents.length}`);
  let ok = tcb.sgxComponents.every((needs, i) => cpuSvn[i] >= needs) && pceSvn >= tcb.pceSvn;
  if (teeTcbSvn) {
    if (tcb.tdxComponents.length !== teeTcbSvn.length) throw new Error(`TDX component count mismatch: expected ${teeTcbSvn.length}, got ${tcb.tdxComponents.length}`);
    const skip = teeTcbSvn[1] > 0 ? 2 : 0;
    ok = ok && tcb.tdxComponents.every((needs, i) => i < skip || teeTcbSvn[i] >= needs);
  }
  return ok;
}

function findTcbLevel(levels, cpuSvn, pceSvn, teeTcbSvn) {
  for (const level of levels) {
    if (meets(level, cpuSvn, pceSvn, teeTcbSvn)) {
      ensureValidStatus(level.tcbStatus, TCB_INFO_STATUSES, 'TCB Info');
      return level;
    }
  }
  throw new Error('No matching TCB level found');
}

/// The TDX module identity for the module version `teeTcbSvn[1]`; null for version 0.
function moduleIdentity(tcbInfo, teeTcbSvn) {
  if (teeTcbSvn[1] === 0) return null;
  const wanted = `TDX_${teeTcbSvn[1].toString(16).toUpperCase().padStart(2, '0')}`;
  const identity = tcbInfo.tdxModuleIdentities.find((m) => m.id.toUpperCase() === wanted);
  if (!identity) throw new Error(`No TDX module identity with id ${wanted} found in TCB Info`);
  return identity;
}

function moduleLevel(tcbInfo, teeTcbSvn) {
  const identity = moduleIdentity(tcbInfo, teeTcbSvn);
  if (!identity) return null;
  const level = identity.tcbLevels.find((l) => teeTcbSvn[0] >= l.isvsvn);
  if (!level) throw new Error(`TDX module ISVSVN ${teeTcbSvn[0]} is below minimum required from TDX module TCB levels`);
  ensureValidStatus(level.tcbStatus, TDX_MODULE_STATUSES, 'TDX module identity');
  return level;
}

function evaluateTdxTcb(tcbInfo, levels, cpuSvn, pceSvn, teeTcbSvn) {
  const level = { ...findTcbLevel(levels, cpuSvn, pceSvn, teeTcbSvn) };
  let module;
  try {
    module = moduleLevel(tcbInfo, teeTcbSvn);
  } catch (e) {
    throw new Error(`TDX module TCB level check: ${e.message}`);
  }
  if (!module) return level;
  level.tcbStatus = converge(level.tcbStatus, module.tcbStatus);
  level.advisoryIds = [...level.advisoryIds, ...module.advisoryIds.filter((id) => !level.advisoryIds.includes(id))];
  const date = (text, what) => {
    try {
      return parseRfc3339(text);
    } catch (e) {
      throw new Error(`${what}: ${e.message}`);
    }
  };
  if (date(module.tcbDate, 'Invalid TDX module tcbDate') < date(level.tcbDate, 'Invalid TCB level tcbDate')) level.tcbDate = module.tcbDate;
  return level;
}

function fixedHex(text, n, field) {
  const bytes = unhex(text);
  if (!bytes) throw new Error(`Failed to decode ${field} as hex`);
  if (bytes.length !== n) throw new Error(`${field} has invalid length ${bytes.length}, expected ${n}`);
  return bytes;
}

/// The TD's SEAM module signer and attributes against the TCB info.
function verifyModuleIdentity(tcbInfo, td) {
  if (!tcbInfo.tdxModule) throw new Error('TDX TCB Info is missing tdxModule field');
  let source = tcbInfo.tdxModule;
  let names = ['tdxModule.mrsigner', 'tdxModule.attributes', 'tdxModule.attributesMask'];
  const identity = moduleIdentity(tcbInfo, td.teeTcbSvn);
  if (identity) {
    source = identity;
    names = ['tdxModuleIdentity.mrsigner', 'tdxModuleIdentity.attributes', 'tdxModuleIdentity.attributesMask'];
  }
  const mrsigner = fixedHex(source.mrsigner, 48, names[0]);
  const attributes = fixedHex(source.attributes, 8, names[1]);
  const mask = fixedHex(source.attributesMask, 8, names[2]);
  if (!equal(td.mrSignerSeam, mrsigner)) {
    throw new Error(`TDX module MRSIGNER mismatch: expected ${hexUpper(mrsigner)}, got ${hexUpper(td.mrSignerSeam)}`);
  }
  for (let i = 0; i < 8; i++) {
    const expected = attributes[i] & mask[i];
    const actual = td.seamAttributes[i] & mask[i];
    const h = (b) => b.toString(16).toUpperCase().padStart(2, '0');
    if (expected !== actual) throw new Error(`TDX module SEAMATTRIBUTES mismatch at byte ${i}: expected ${h(expected)} (masked), got ${h(actual)} (masked)`);
    if (td.seamAttributes[i] & ~mask[i] & 0xff) throw new Error(`TDX module SEAMATTRIBUTES has bits set outside mask at byte ${i}`);
  }
}

/// The platform's TCB level (and, for a TD 1.5, the level of its current TCB). `quote`: the
/// parsed quote; `pck`: the PCK certificate's { cpuSvn, pceSvn, fmspc }.
export function matchPlatformTcb(tcbInfo, quote, isTdx, pck) {
  const tcbFmspc = unhex(tcbInfo.fmspc);
  if (!tcbFmspc) throw new Error('Failed to decode TCB FMSPC');
  if (!equal(pck.fmspc, tcbFmspc)) throw new Error('Fmspc mismatch');
  if (isTdx && (tcbInfo.version < 3 || tcbInfo.id !== 'TDX')) throw new Error('TDX quote with non-TDX TCB info in the collateral');
  if (!isTdx && (tcbInfo.version < 2 || tcbInfo.id !== 'SGX')) throw new Error('SGX quote with non-SGX TCB info in the collateral');
  const levels = canonicalLevels(tcbInfo);
  if (!isTdx) return { level: findTcbLevel(levels, pck.cpuSvn, pck.pceSvn, null), current: null };
  const td = td10(quote.report);
  if (!td) throw new Error('Failed to get TD10 report');
  const level = evaluateTdxTcb(tcbInfo, levels, pck.cpuSvn, pck.pceSvn, td.teeTcbSvn);
  try {
    verifyModuleIdentity(tcbInfo, td);
  } catch (e) {
    throw new Error(`TDX module identity check: ${e.message}`);
  }
  const t15 = td15(quote.report);
  let current = null;
  if (t15) {
    try {
      current = evaluateTdxTcb(tcbInfo, levels, pck.cpuSvn, pck.pceSvn, t15.teeTcbSvn2);
    } catch (e) {
      throw new Error(`Failed to evaluate the current TDX TCB (TEE_TCB_SVN2): ${e.message}`);
    }
  }
  return { level, current };
}
