// The Intel SGX extension of a PCK certificate (OID 1.2.840.113741.1.13.1), read as dcap-qvl's
// `parse_pck_extension`: the platform's CPUSVN, PCESVN and FMSPC that TCB matching uses, and
// the fields dcap-qvl requires to be there.

import { DerError, TAG, children, oid, readTlv, whole } from './der.js';
import { SGX_EXTENSION } from './x509.js';

const SGX = SGX_EXTENSION;
const PATH = {
  ppid: [`${SGX}.1`],
  cpuSvn: [`${SGX}.2`, `${SGX}.2.18`],
  pceSvn: [`${SGX}.2`, `${SGX}.2.17`],
  pceId: [`${SGX}.3`],
  fmspc: [`${SGX}.4`],
  sgxType: [`${SGX}.5`],
  platformInstanceId: [`${SGX}.6`],
  dynamicPlatform: [`${SGX}.7`, `${SGX}.7.1`],
  cachedKeys: [`${SGX}.7`, `${SGX}.7.2`],
  smtEnabled: [`${SGX}.7`, `${SGX}.7.3`],
};

/// The value (contents) at `path` of OIDs, each level a SEQUENCE of SEQUENCE { OID, value };
/// null when an OID is missing.
function find(extension, path) {
  let tlv = readTlv(extension, 0);
  for (const id of path) {
    if (tlv.tag !== TAG.SEQUENCE) throw new Error('Failed to load sequence');
    const entry = children(tlv.value).find((e) => {
      const [name] = e.tag === TAG.SEQUENCE ? children(e.value) : [];
      if (!name || children(e.value).length < 2) throw new Error('Failed to load nested sequence');
      return oid(name.value) === id;
    });
    if (!entry) return null;
    tlv = children(entry.value)[1];
  }
  return tlv.value;
}

function required(extension, name) {
  const value = find(extension, PATH[name]);
  if (value === null) throw new Error(`Intel extension path ${PATH[name].join(' / ')} is missing`);
  return value;
}

function boolean(value) {
  if (value === null) return null;
  if (value.length !== 1) throw new Error(`Unexpected BOOLEAN length: ${value.length}`);
  return value[0] !== 0;
}

/// `cert`: a parsed certificate (./x509.js). Throws dcap-qvl's error.
export function parsePckExtension(cert) {
  const found = cert.extensions.get(SGX) ?? [];
  if (found.length > 1) throw new Error(`extension ${SGX} appears more than once`);
  const raw = found[0];
  if (!raw) throw new Error('Intel extension not found');
  try {
    whole(raw, TAG.SEQUENCE);
    required(raw, 'ppid');
    const cpuSvn = required(raw, 'cpuSvn');
    if (cpuSvn.length !== 16) throw new Error('CpuSvn length mismatch');
    const pce = find(raw, PATH.pceSvn);
    if (pce === null) throw new Error('Failed to find PceSvn');
    if (pce.length !== 1 && pce.length !== 2) throw new Error('PceSvn length mismatch');
    const pceSvn = pce.length === 1 ? pce[0] : (pce[0] << 8) | pce[1];
    required(raw, 'pceId');
    const fmspc = find(raw, PATH.fmspc);
    if (fmspc === null) throw new Error('Failed to find Fmspc');
    if (fmspc.length !== 6) throw new Error('Fmspc length mismatch');
    const sgxType = required(raw, 'sgxType');
    if (sgxType.length !== 1 && sgxType.length !== 2) throw new Error('Unexpected ENUMERATED length');
    find(raw, PATH.platformInstanceId);
    for (const flag of ['dynamicPlatform', 'cachedKeys', 'smtEnabled']) boolean(find(raw, PATH[flag]));
    return { cpuSvn, pceSvn, fmspc };
  } catch (e) {
    if (e instanceof DerError) throw new Error(`Failed to decode DER object: ${e.message}`);
    throw e;
  }
}
