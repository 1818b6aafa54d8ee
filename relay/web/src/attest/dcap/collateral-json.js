// The signed JSON bodies of the collateral, TCB info and QE identity, decoded with the types
// dcap-qvl 0.7.1 gives them (serde: required fields, integer ranges, hex byte arrays, TCB
// statuses by name). A body that does not decode fails as dcap-qvl's does
// ("Failed to decode TcbInfo: …"), which the verdict names `malformed_collateral`.

import { unhex } from '../bytes.js';

export const TCB_STATUSES = [
  'UpToDate',
  'OutOfDateConfigurationNeeded',
  'OutOfDate',
  'ConfigurationAndSWHardeningNeeded',
  'ConfigurationNeeded',
  'SWHardeningNeeded',
  'Revoked',
  'TDRelaunchAdvised',
  'TDRelaunchAdvisedConfigurationNeeded',
];

class Shape {
  constructor(value, where) {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error(`invalid type: expected struct ${where}`);
    this.value = value;
  }
  has(key) {
    return this.value[key] !== undefined;
  }
  get(key) {
    if (!this.has(key)) throw new Error(`missing field \`${key}\``);
    return this.value[key];
  }
  string(key) {
    const v = this.get(key);
    if (typeof v !== 'string') throw new Error(`invalid type for \`${key}\`: expected a string`);
    return v;
  }
  uint(key, max) {
    const v = this.get(key);
    if (!Number.isInteger(v) || v < 0 || v > max) throw new Error(`invalid value for \`${key}\`: expected an integer 0..=${max}`);
    return v;
  }
  bytes(key, len) {
    const v = unhex(this.get(key));
    if (!v || v.length !== len) throw new Error(`invalid value for \`${key}\`: expected ${len} bytes of hex`);
    return v;
  }
  list(key, item, { optional = false } = {}) {
    if (optional && !this.has(key)) return [];
    const v = this.get(key);
    if (!Array.isArray(v)) throw new Error(`invalid type for \`${key}\`: expected a sequence`);
    return v.map(item);
  }
  status(key) {
    const v = this.string(key);
    if (!TCB_STATUSES.includes(v)) throw new Error(`unknown variant \`${v}\``);
    return v;
  }
}

const svn = (v) => new Shape(v, 'TcbComponents').uint('svn', 0xff);

function tcbLevel(v) {
  const s = new Shape(v, 'TcbLevel');
  const tcb = new Shape(s.get('tcb'), 'Tcb');
  return {
    tcb: {
      sgxComponents: tcb.list('sgxtcbcomponents', svn),
      tdxComponents: tcb.list('tdxtcbcomponents', svn, { optional: true }),
      pceSvn: tcb.uint('pcesvn', 0xffff),
    },
    tcbDate: s.string('tcbDate'),
    tcbStatus: s.status('tcbStatus'),
    advisoryIds: s.list('advisoryIDs', advisory, { optional: true }),
  };
}

function advisory(v) {
  if (typeof v !== 'string') throw new Error('invalid type: expected a string');
  return v;
}

function tdxModule(v) {
  const s = new Shape(v, 'TdxModule');
  return { mrsigner: s.string('mrsigner'), attributes: s.string('attributes'), attributesMask: s.string('attributesMask') };
}

function tdxModuleIdentity(v) {
  const s = new Shape(v, 'TdxModuleIdentity');
  return {
    id: s.string('id'),
    ...tdxModule(v),
    tcbLevels: s.list('tcbLevels', (l) => {
      const level = new Shape(l, 'TdxModuleTcbLevel');
      return {
        isvsvn: new Shape(level.get('tcb'), 'TdxModuleTcb').uint('isvsvn', 0xff),
        tcbDate: level.string('tcbDate'),
        tcbStatus: level.status('tcbStatus'),
        advisoryIds: level.list('advisoryIDs', advisory, { optional: true }),
      };
    }),
  };
}

function parseJson(text) {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new Error(e.message);
  }
}

/// TCB info (`tcbInfo` of Intel's TDX or SGX TCB info body).
export function decodeTcbInfo(text) {
  try {
    const s = new Shape(parseJson(text), 'TcbInfo');
    const module = s.has('tdxModule') && s.get('tdxModule') !== null ? tdxModule(s.get('tdxModule')) : null;
    return {
      id: s.string('id'),
      version: s.uint('version', 0xff),
      issueDate: s.string('issueDate'),
      nextUpdate: s.string('nextUpdate'),
      fmspc: s.string('fmspc'),
      pceId: s.string('pceId'),
      tcbType: s.uint('tcbType', 0xffffffff),
      tcbEvaluationDataNumber: s.uint('tcbEvaluationDataNumber', 0xffffffff),
      tcbLevels: s.list('tcbLevels', tcbLevel),
      tdxModule: module,
      tdxModuleIdentities: s.list('tdxModuleIdentities', tdxModuleIdentity, { optional: true }),
    };
  } catch (e) {
    throw new Error(`Failed to decode TcbInfo: ${e.message}`);
  }
}

/// QE identity (`enclaveIdentity` of Intel's QE identity body).
export function decodeQeIdentity(text) {
  try {
    const s = new Shape(parseJson(text), 'QeIdentity');
    return {
      id: s.string('id'),
      version: s.uint('version', 0xff),
      issueDate: s.string('issueDate'),
      nextUpdate: s.string('nextUpdate'),
      tcbEvaluationDataNumber: s.uint('tcbEvaluationDataNumber', 0xffffffff),
      miscselect: s.bytes('miscselect', 4),
      miscselectMask: s.bytes('miscselectMask', 4),
      attributes: s.bytes('attributes', 16),
      attributesMask: s.bytes('attributesMask', 16),
      mrsigner: s.bytes('mrsigner', 32),
      isvprodid: s.uint('isvprodid', 0xffff),
      tcbLevels: s.list('tcbLevels', (l) => {
        const level = new Shape(l, 'QeTcbLevel');
        return {
          isvsvn: new Shape(level.get('tcb'), 'QeTcb').uint('isvsvn', 0xffff),
          tcbDate: level.string('tcbDate'),
          tcbStatus: level.status('tcbStatus'),
          advisoryIds: level.list('advisoryIDs', advisory, { optional: true }),
        };
      }),
    };
  } catch (e) {
    throw new Error(`Failed to decode QeIdentity: ${e.message}`);
  }
}
