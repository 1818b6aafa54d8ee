// The second opinion: @phala/dcap-qvl's `QuoteVerifier` (JS 0.3.9) checks every quote the
// page accepts. Bundled for the browser it takes its pure-JS path (elliptic, hash.js, asn1.js;
// `isBrowser`), independent of ./verify.js and @noble/curves.
//
// Why ./verify.js decides and this library only vetoes: 0.3.9 is a port of an older dcap-qvl,
// and on its browser path it checks less than the Rust verifier (dcap-qvl 0.7.1):
// - no certificate validity dates (its browser X509Certificate has no validFrom/validTo, so
//   the comparison is always false): an expired PCK would pass;
// - no CRL signatures, no CRL expiry, no CRL issuer: a relay could hand it any CRL, or none
//   that covers the PCK (parse errors are ignored);
// - no QE vendor ID check, no "TCB signer issued directly by the root";
// - no TDX module identity (MRSIGNER_SEAM, SEAM attributes, module TCB levels), TDX
//   components 0 and 1 compared as platform components, statuses merged by severity instead
//   of Intel QVL's convergence, no TD 1.5 current TCB (TEE_TCB_SVN2);
// - an older TD attribute table: it refuses ICSSD, bits 18–22, LASS and TPA (bits 16, 18–22,
//   27, 62), which 0.7.1 allows, and names other refusals differently (profiling as debug,
//   SERVTD_EXT and migration as reserved bits);
// - it cannot parse TD 1.5ex reports (quote v5 body type 4), which real TDX hosts emit.
// So its verdict on the TCB level and on attributes is superseded, and TD 1.5ex quotes are
// judged by ./verify.js alone; any other refusal of a quote ./verify.js accepted is kept.

import { isBrowser } from '@phala/dcap-qvl/src/crypto-compat.js';
import { QuoteVerifier } from '@phala/dcap-qvl/src/verify.js';
// The library's own Buffer (the `buffer` package it depends on; Node's in Node): its ASN.1
// decoder takes nothing else, and the page has no other use for it.
import { Buffer } from 'buffer';
import { b64encode } from '../bytes.js';

/// Whether the library runs its browser code path (true in the page's bundle).
export const libraryInBrowserMode = () => isBrowser;

/// Refusals whose subject ./verify.js appraises as dcap-qvl 0.7.1 does (see above).
const SUPERSEDED = [
  /^No matching TCB level found$/,
  /^TCB status is invalid/,
  /^No (SGX|TDX) components in the TCB info$/,
  /^Failed to get TD10 report$/,
  /^Debug mode is enabled$/,
  /^Reserved bits in TD attributes are set$/,
  /^SEPT_VE_DISABLE is not enabled$/,
  /^Invalid mr service td$/,
];

/// The library's messages where they differ from dcap-qvl 0.7.1's, so that `classify` names
/// them. It cannot tell an expired certificate from one not yet valid (one message for both;
/// and on the browser path it never checks either), nor, by message, which chain failed.
const REWORDED = [
  [/^Unsupported DCAP TEE type$/, 'Unsupported TEE type'],
  [/^Certificate is revoked$/, 'Failed to verify certificate chain: CertRevoked'],
  [/^Certificate is expired or not yet valid$/, 'Failed to verify certificate chain: certificate expired or not yet valid'],
  [/^CaUsedAsEndEntity$/, 'Failed to verify certificate chain: CaUsedAsEndEntity'],
];

const pem = (ders) =>
  ders.map((der) => `-----BEGIN CERTIFICATE-----\n${b64encode(der).replace(/.{64}/g, '$&\n').replace(/\n$/, '')}\n-----END CERTIFICATE-----\n`).join('');

/// null when the library accepts `raw`, or refuses it only where ./verify.js supersedes it;
/// else its refusal as an error chain for `classify`.
///
/// The library is given the certificate paths ./verify.js built (`paths`, with the root),
/// not the chains as presented: webpki takes the trusted root as soon as a certificate names
/// it, and ignores the rest of a chain (a relay can append anything to the quote's PCK chain,
/// which no signature covers), while the library would check every certificate presented.
export function libraryVeto(raw, quote, collateral, root, now, paths, rootDer) {
  if (quote.report.kind === 'td15ex') return null;
  const verifier = root.kind === 'intel' ? QuoteVerifier.newProd() : QuoteVerifier.newWithRootCa(Buffer.from(root.der));
  const checked = {
    ...collateral,
    tcb_info_issuer_chain: pem([...paths.tcb, rootDer]),
    qe_identity_issuer_chain: pem([...paths.qe, rootDer]),
    pck_certificate_chain: pem([...paths.pck, rootDer]),
  };
  try {
    verifier.verify(raw, checked, now);
    return null;
  } catch (e) {
    const message = String(e?.message ?? e);
    if (SUPERSEDED.some((re) => re.test(message))) return null;
    const reworded = REWORDED.find(([re]) => re.test(message));
    return `dcap-qvl-js: ${reworded ? reworded[1] : message}`;
  }
}
