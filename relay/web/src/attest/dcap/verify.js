// The DCAP check in dcap-qvl 0.7.1's order (`verify_impl`, the Rust verifier's), so that a
// quote with several faults fails for the same first one: trust anchor, CRLs, the quote's
// header, TCB info, QE identity, PCK chain, QE report signature and binding, QE identity
// policy, the quote's signature, TCB level, attributes. Each failure throws an Error whose
// message is dcap-qvl's error chain (`{err:#}`), which `policy/classify.js` names.
//
// @phala/dcap-qvl (JS 0.3.9, a port of an older dcap-qvl) checks the same quote as well
// (./library.js); see there for where the two differ.

import { sha256 } from '@noble/hashes/sha2.js';
import { concat, equal, utf8 } from '../bytes.js';
import { INTEL_QE_VENDOR_ID, TEE_TYPE_SGX, TEE_TYPE_TDX, parseEnclaveReport } from '../quote.js';
import { parseRfc3339 } from '../time.js';
import { verifyCertificateChain } from './chain.js';
import { decodeQeIdentity, decodeTcbInfo } from './collateral-json.js';
import { checkRevocation, parseCrl, parseCrlVerified } from './crl.js';
import { extractCerts } from './pem.js';
import { parsePckExtension } from './pck-extension.js';
import { verifyQeIdentityPolicy } from './qe-identity.js';
import { verifyRaw } from './signature.js';
import { checkForRelaunch, converge, matchPlatformTcb, merge } from './tcb-level.js';
import { validateAttributes } from './attributes.js';
import { parseCertificate } from './x509.js';

const PCK_CERT_CHAIN = 5;

/// Runs `f`, prefixing any error with `context` (anyhow's `.context()`).
function context(what, f) {
  try {
    return f();
  } catch (e) {
    throw new Error(`${what}: ${e.message}`);
  }
}

function loadAnchor(rootDer) {
  const root = context('Failed to load root ca', () => parseCertificate(rootDer, { trustAnchor: true }));
  return { subject: root.subject, spki: root.spki };
}

/// Dates, chain (issued directly by the root) and signature of a signed collateral body.
function verifyCollateralBody({ name, label, text, signature, certs, skipChain }, anchor, crls, now) {
  const issue = context(`Failed to parse ${label} issue date`, () => parseRfc3339(text.issueDate));
  const next = context(`Failed to parse ${label} next update`, () => parseRfc3339(text.nextUpdate));
  const short = label === 'TCB Info' ? 'TCBInfo' : label;
  if (now < issue) throw new Error(`${short} issue date is in the future`);
  if (now > next) throw new Error(`${short} expired`);
  if (certs.length === 0) throw new Error(`Certificate chain is too short for ${label}`);
  const leaf = context(`Failed to parse ${label} leaf certificate`, () => parseCertificate(certs[0]));
  let path = null;
  if (!skipChain) {
    path = verifyCertificateChain(leaf, certs.slice(1), anchor, crls, now);
    if (path.length !== 1) throw new Error(`${label} signer must be issued directly by the root CA`);
  }
  if (!verifyRaw({ spki: leaf.spki }, utf8(text.raw), signature)) throw new Error(`Signature is invalid for ${name} in quote_collateral`);
  return path;
}

/// The PCK chain (from the collateral when it carries one, else the quote's certification
/// data) verified to the anchor; the leaf and its SGX extension.
function verifyPckChain(collateral, certification, anchor, crls, now) {
  let certs;
  if (collateral.pck_certificate_chain !== null) {
    certs = context('Failed to extract PCK certificates from collateral', () => extractCerts(collateral.pck_certificate_chain));
  } else {
    if (certification.certType !== PCK_CERT_CHAIN) {
      throw new Error(`Unsupported DCAP PCK cert format: ${certification.certType}. Use get_collateral() to fetch PCK certificate.`);
    }
    certs = context('Failed to extract PCK certificates from quote', () => extractCerts(certification.body));
  }
  if (certs.length === 0) throw new Error('Certificate chain is too short in quote');
  const leaf = context('Failed to parse PCK certificate', () => parseCertificate(certs[0]));
  const path = verifyCertificateChain(leaf, certs.slice(1), anchor, crls, now);
  return { leaf, path, extension: parsePckExtension(leaf) };
}

/// Verifies `raw` (parsed as `quote`) with `collateral` (parsed, ../collateral.js `inner`)
/// under the root certificate `rootDer` at `now`. Returns { status, advisoryIds, paths }, the
/// paths (DER, leaf first, root left out) each chain verified along; throws dcap-qvl's error
/// chain.
export function verifyDcap(raw, quote, collateral, rootDer, now) {
  const anchor = loadAnchor(rootDer);
  const rootCrl = context('Failed to parse root CA CRL', () => parseCrlVerified(collateral.root_ca_crl, anchor.spki));
  const pckCrl = context('Failed to parse PCK CRL', () => parseCrl(collateral.pck_crl));
  const crls = [rootCrl, pckCrl];
  // The root itself, as an end entity (webpki's `check_single_cert_revocation`).
  const root = parseCertificate(rootDer);
  checkRevocation(crls, root, true, root.spki, null, now);

  const { header, auth } = quote;
  if (![3, 4, 5].includes(header.version)) throw new Error('Unsupported DCAP quote version');
  if (!equal(header.qeVendorId, INTEL_QE_VENDOR_ID)) throw new Error('Unknown QE vendor ID');
  if (header.teeType !== TEE_TYPE_SGX && header.teeType !== TEE_TYPE_TDX) throw new Error(`Unsupported TEE type: ${header.teeType}`);
  const isTdx = header.teeType === TEE_TYPE_TDX;
  if (!isTdx && header.version !== 3) throw new Error('SGX TEE quote must have version 3');
  if (isTdx && header.version !== 4 && header.version !== 5) throw new Error('TDX TEE quote must have version 4 or 5');
  if (header.attestationKeyType !== 2) throw new Error('Unsupported DCAP attestation key type');

  // Step 1: TCB info. Step 2: QE identity (skipping the chain Intel shares with the TCB info).
  const tcbCerts = extractCerts(collateral.tcb_info_issuer_chain);
  const tcbInfo = decodeTcbInfo(collateral.tcb_info);
  const tcbPath = verifyCollateralBody(
    { name: 'tcb_info', label: 'TCB Info', text: { ...tcbInfo, raw: collateral.tcb_info }, signature: collateral.tcb_info_signature, certs: tcbCerts },
    anchor,
    crls,
    now,
  );
  const qeCerts = extractCerts(collateral.qe_identity_issuer_chain);
  const qeIdentity = decodeQeIdentity(collateral.qe_identity);
  const sameChain = qeCerts.length === tcbCerts.length && qeCerts.every((c, i) => equal(c, tcbCerts[i]));
  const qeBody = { name: 'qe_identity', label: 'QE Identity', text: { ...qeIdentity, raw: collateral.qe_identity }, signature: collateral.qe_identity_signature };
  const qePath = verifyCollateralBody({ ...qeBody, certs: qeCerts, skipChain: sameChain }, anchor, crls, now) ?? tcbPath;
  const [expectedId, versions] = isTdx ? ['TD_QE', [2, 3]] : ['QE', [2]];
  if (qeIdentity.id !== expectedId || !versions.includes(qeIdentity.version)) {
    throw new Error(`Unsupported QE Identity id/version for the quote TEE type: ${qeIdentity.id} version ${qeIdentity.version} (expected ${expectedId} version [${versions.join(', ')}])`);
  }

  // Step 3: the PCK chain. Steps 4–5: the QE report, signed by the PCK key, binds the
  // attestation key. Step 6: the QE against its identity. Step 7: the quote's signature.
  const pck = verifyPckChain(collateral, auth.certificationData, anchor, crls, now);
  if (!verifyRaw({ spki: pck.leaf.spki }, auth.qeReport, auth.qeReportSignature)) throw new Error('Signature is invalid for qe_report in quote');
  const qeReport = parseEnclaveReport(auth.qeReport);
  if (auth.qeAuthData.length !== 32) throw new Error('Invalid QE auth data length');
  if (!equal(sha256(concat(auth.ecdsaAttestationKey, auth.qeAuthData)), qeReport.reportData.subarray(0, 32))) {
    throw new Error('QE report hash mismatch');
  }
  const qeLevel = verifyQeIdentityPolicy(qeReport, qeIdentity);
  if (!verifyRaw({ xy: auth.ecdsaAttestationKey }, raw.subarray(0, quote.signedLength), auth.ecdsaSignature)) {
    throw new Error('ISV enclave report signature is invalid');
  }

  // Steps 8–10: TCB level, converged with the QE's; Revoked is refused whatever the policy.
  const { level, current } = matchPlatformTcb(tcbInfo, quote, isTdx, pck.extension);
  const statusOf = (l) => ({ status: l.tcbStatus, advisoryIds: l.advisoryIds });
  const final = merge(statusOf(level), statusOf(qeLevel));
  const currentStatus = current ? converge(current.tcbStatus, qeLevel.tcbStatus) : null;
  if (final.status === 'Revoked' || currentStatus === 'Revoked') throw new Error('TCB status is invalid: Revoked');
  if (currentStatus) final.status = checkForRelaunch(final.status, currentStatus);

  validateAttributes(quote.report);
  const ders = (path) => path.map((cert) => cert.der);
  return { status: final.status, advisoryIds: final.advisoryIds, paths: { tcb: ders(tcbPath), qe: ders(qePath), pck: ders(pck.path) } };
}
