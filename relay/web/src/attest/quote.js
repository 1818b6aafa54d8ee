// The DCAP quote structure (quote v3, v4 and v5; TD 1.0, TD 1.5 and TD 1.5ex reports), parsed
// exactly as dcap-qvl 0.7.1's `Quote::parse` does, so that the page calls the same bytes
// malformed as the Rust verifier. Shape only: nothing here is trusted until the DCAP check.

import { u16, u32 } from './bytes.js';

export const HEADER_LEN = 48;
export const TEE_TYPE_SGX = 0x00;
export const TEE_TYPE_TDX = 0x81;
export const INTEL_QE_VENDOR_ID = Uint8Array.from([
  0x93, 0x9a, 0x72, 0x33, 0xf7, 0x9c, 0x4c, 0xa9, 0x94, 0x0a, 0x0d, 0xb3, 0x95, 0x7f, 0x06, 0x07,
]);

const ENCLAVE_REPORT_LEN = 384;
const TD_REPORT10_LEN = 584;
const TD_REPORT15_LEN = 648;
const TD_REPORT15_EX_LEN = 885;
const BODY_DESCRIPTOR_LEN = 6;
/// dcap-qvl's bound on any variable-length field.
const MAX_DATA_LEN = 1_048_576;

class Reader {
  constructor(bytes) {
    this.bytes = bytes;
    this.at = 0;
  }
  take(n) {
    if (this.at + n > this.bytes.length) throw new Error('Not enough data to fill buffer');
    const out = this.bytes.subarray(this.at, this.at + n);
    this.at += n;
    return out;
  }
  u8() {
    return this.take(1)[0];
  }
  u16() {
    return u16(this.take(2), 0);
  }
  u32() {
    return u32(this.take(4), 0);
  }
  /// A length-prefixed field (`Data<u16>` / `Data<u32>`).
  data(lengthBytes) {
    const len = lengthBytes === 2 ? this.u16() : this.u32();
    if (len > MAX_DATA_LEN) throw new Error('Data length exceeds maximum');
    return this.take(len);
  }
}

function header(r) {
  return {
    version: r.u16(),
    attestationKeyType: r.u16(),
    teeType: r.u32(),
    qeSvn: r.u16(),
    pceSvn: r.u16(),
    qeVendorId: r.take(16),
    userData: r.take(20),
  };
}

function enclaveReport(r) {
  const raw = r.bytes.subarray(r.at, r.at + ENCLAVE_REPORT_LEN);
  const report = {
    cpuSvn: r.take(16),
    miscSelect: r.u32(),
    reserved1: r.take(28),
    attributes: r.take(16),
    mrEnclave: r.take(32),
    reserved2: r.take(32),
    mrSigner: r.take(32),
    reserved3: r.take(96),
    isvProdId: r.u16(),
    isvSvn: r.u16(),
    reserved4: r.take(60),
    reportData: r.take(64),
  };
  return { ...report, raw };
}

function tdReport10(r) {
  return {
    teeTcbSvn: r.take(16),
    mrSeam: r.take(48),
    mrSignerSeam: r.take(48),
    seamAttributes: r.take(8),
    tdAttributes: r.take(8),
    xfam: r.take(8),
    mrTd: r.take(48),
    mrConfigId: r.take(48),
    mrOwner: r.take(48),
    mrOwnerConfig: r.take(48),
    rtMr0: r.take(48),
    rtMr1: r.take(48),
    rtMr2: r.take(48),
    rtMr3: r.take(48),
    reportData: r.take(64),
  };
}

function tdReport15(r) {
  return { base: tdReport10(r), teeTcbSvn2: r.take(16), mrServiceTd: r.take(48) };
}

function tdReport15Ex(r) {
  return {
    base: tdReport15(r),
    vmid: r.u8(),
    tdId: r.take(32),
    devInfo: r.take(48),
    initServiceTdHash: r.take(48),
    initServiceTdAttributes: r.take(8),
    initCpuSvn: r.take(16),
    initTeeTcbSvn: r.take(16),
    initTeeFmspc: r.take(12),
    curServiceTdHash: r.take(48),
    curServiceTdAttributes: r.take(8),
  };
}

const REPORT_LEN = { sgx: ENCLAVE_REPORT_LEN, td10: TD_REPORT10_LEN, td15: TD_REPORT15_LEN, td15ex: TD_REPORT15_EX_LEN };

function report(r, h) {
  const as = (kind, decode) => ({ kind, data: decode(r) });
  switch (h.version) {
    case 3:
      if (h.teeType !== TEE_TYPE_SGX) throw new Error('Invalid TEE type');
      return as('sgx', enclaveReport);
    case 4:
      if (h.teeType === TEE_TYPE_SGX) return as('sgx', enclaveReport);
      if (h.teeType === TEE_TYPE_TDX) return as('td10', tdReport10);
      throw new Error('Invalid TEE type');
    case 5: {
      const bodyType = r.u16();
      const size = r.u32();
      const decoders = { 1: ['sgx', enclaveReport], 2: ['td10', tdReport10], 3: ['td15', tdReport15], 4: ['td15ex', tdReport15Ex] };
      const decoder = decoders[bodyType];
      if (!decoder) throw new Error('Unsupported body type');
      const parsed = as(...decoder);
      if (size !== REPORT_LEN[parsed.kind]) throw new Error('Invalid body size');
      return parsed;
    }
    default:
      throw new Error('Unsupported quote version');
  }
}

function certificationData(r) {
  return { certType: r.u16(), body: r.data(4) };
}

/// Auth data v3 (quote v3/v4), or v4 (quote v5: the QE report certification data is nested in
/// the outer certification data), both brought to the v3 shape as dcap-qvl's `into_v3` does.
function authData(version, bytes) {
  const r = new Reader(bytes);
  const ecdsaSignature = r.take(64);
  const ecdsaAttestationKey = r.take(64);
  if (version === 3) {
    return {
      ecdsaSignature,
      ecdsaAttestationKey,
      qeReport: r.take(ENCLAVE_REPORT_LEN),
      qeReportSignature: r.take(64),
      qeAuthData: r.data(2),
      certificationData: certificationData(r),
    };
  }
  if (version !== 4) throw new Error('Unsupported auth data version');
  const outer = certificationData(r);
  const inner = new Reader(outer.body);
  return {
    ecdsaSignature,
    ecdsaAttestationKey,
    qeReport: inner.take(ENCLAVE_REPORT_LEN),
    qeReportSignature: inner.take(64),
    qeAuthData: inner.data(2),
    certificationData: certificationData(inner),
  };
}

/// Parses a quote; throws an Error whose message is dcap-qvl's for the same bytes.
export function parseQuote(bytes) {
  const r = new Reader(bytes);
  const h = header(r);
  const rep = report(r, h);
  const auth = authData(h.version === 5 ? 4 : h.version, r.data(4));
  const signedLength = HEADER_LEN + REPORT_LEN[rep.kind] + (h.version === 5 ? BODY_DESCRIPTOR_LEN : 0);
  return { header: h, report: rep, auth, signedLength };
}

/// An SGX enclave report (the QE's report in the auth data).
export const parseEnclaveReport = (bytes) => enclaveReport(new Reader(bytes));

/// The TD 1.0 fields every TD report starts with; null for an SGX report.
export function td10(report) {
  if (report.kind === 'td10') return report.data;
  if (report.kind === 'td15') return report.data.base;
  if (report.kind === 'td15ex') return report.data.base.base;
  return null;
}

/// The TD 1.5 fields (TD 1.5 and TD 1.5ex reports); null otherwise.
export function td15(report) {
  if (report.kind === 'td15') return report.data;
  if (report.kind === 'td15ex') return report.data.base;
  return null;
}
