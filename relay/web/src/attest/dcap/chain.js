// Certificate paths as dcap-qvl builds them (`verify_certificate_chain`, webpki path building):
// the end entity's validity and constraints first, then the trust anchor or a candidate
// issuer among the given certificates; every certificate of a path signed by the one above
// it and checked against an authoritative, unexpired CRL. When no path verifies, the most
// specific error found is reported, ranked as webpki ranks them.

import { DerError } from './der.js';
import { checkRevocation } from './crl.js';
import { verifySignedData } from './signature.js';
import { basicConstraints, extendedKeyUsage, parseCertificate, sameBytes, validity } from './x509.js';

/// Intel's chains carry at most an intermediate CA and the root above the leaf.
const MAX_INTERMEDIATE_CERTS = 4;
const MAX_SUB_CA_COUNT = 6;
const SERVER_AUTH = '1.3.6.1.5.5.7.3.1';

const RANK = {
  CertNotValidYet: 290,
  CertExpired: 290,
  CertRevoked: 270,
  UnknownRevocationStatus: 270,
  CrlExpired: 270,
  InvalidCrlSignatureForPublicKey: 260,
  InvalidSignatureForPublicKey: 260,
  SignatureAlgorithmMismatch: 250,
  EmptyEkuExtension: 245,
  RequiredEkuNotFoundContext: 240,
  PathLenConstraintViolated: 220,
  CaUsedAsEndEntity: 210,
  EndEntityUsedAsCa: 210,
  IssuerNotCrlSigner: 200,
  InvalidCertValidity: 190,
  InvalidSerialNumber: 170,
  InvalidCrlNumber: 160,
  UnsupportedCrlSignatureAlgorithmForPublicKeyContext: 150,
  UnsupportedSignatureAlgorithmForPublicKeyContext: 150,
  UnsupportedCrlSignatureAlgorithmContext: 140,
  UnsupportedSignatureAlgorithmContext: 140,
  UnsupportedCriticalExtension: 130,
  UnsupportedCertVersion: 130,
  UnsupportedCrlVersion: 120,
  UnsupportedDeltaCrl: 110,
  UnsupportedIndirectCrl: 100,
  UnsupportedRevocationReason: 90,
  UnsupportedRevocationReasonsPartitioning: 80,
  UnsupportedCrlIssuingDistributionPoint: 70,
  MaximumPathDepthExceeded: 61,
  MalformedExtensions: 40,
  ExtensionValueInvalid: 30,
  BadDerTime: 20,
  BadDer: 10,
};

const rank = (message) => RANK[message.split(' ')[0]] ?? 0;
const mostSpecific = (current, next) => (rank(current) >= rank(next) ? current : next);

/// Validity, basic constraints and extended key usage: what a certificate must satisfy
/// whoever issued it.
function checkIssuerIndependent(cert, now, endEntity, subCaCount) {
  const [notBefore, notAfter] = validity(cert);
  if (notBefore > notAfter) throw new DerError('InvalidCertValidity');
  if (now < notBefore) throw new DerError(`CertNotValidYet { time: UnixTime(${now}), not_before: UnixTime(${notBefore}) }`);
  if (now > notAfter) throw new DerError(`CertExpired { time: UnixTime(${now}), not_after: UnixTime(${notAfter}) }`);
  const bc = basicConstraints(cert);
  if (endEntity && bc.ca) throw new DerError('CaUsedAsEndEntity');
  if (!endEntity && !bc.ca) throw new DerError('EndEntityUsedAsCa');
  if (!endEntity && bc.pathLen !== null && subCaCount > bc.pathLen) throw new DerError('PathLenConstraintViolated');
  const eku = extendedKeyUsage(cert);
  if (eku) {
    if (eku.length === 0) throw new DerError('EmptyEkuExtension');
    if (!eku.includes(SERVER_AUTH)) throw new DerError('RequiredEkuNotFoundContext');
  }
}

/// Signatures and revocation along `path` (end entity first), from the anchor down.
function checkSignedChain(path, anchor, crls, now) {
  let spki = anchor.spki;
  let keyUsage = null;
  for (let i = path.length - 1; i >= 0; i--) {
    const cert = path[i];
    verifySignedData(spki, cert.signed);
    checkRevocation(crls, cert, i === 0, spki, keyUsage, now);
    spki = cert.spki;
    keyUsage = cert.keyUsage;
  }
}

function build(path, intermediates, anchor, crls, now, subCaCount) {
  const head = path[path.length - 1];
  const endEntity = path.length === 1;
  checkIssuerIndependent(head, now, endEntity, subCaCount);
  let error = 'UnknownIssuer';
  if (sameBytes(head.issuer, anchor.subject)) {
    try {
      checkSignedChain(path, anchor, crls, now);
      return path;
    } catch (e) {
      error = mostSpecific(error, e.message);
    }
  }
  for (const der of intermediates) {
    try {
      const candidate = parseCertificate(der);
      if (!sameBytes(candidate.subject, head.issuer)) throw new DerError('UnknownIssuer');
      if (path.some((p) => sameBytes(p.spki, candidate.spki) && sameBytes(p.subject, candidate.subject))) throw new DerError('UnknownIssuer');
      if (path.length > MAX_SUB_CA_COUNT) throw new DerError('MaximumPathDepthExceeded');
      return build([...path, candidate], intermediates, anchor, crls, now, endEntity ? subCaCount : subCaCount + 1);
    } catch (e) {
      error = mostSpecific(error, e.message);
    }
  }
  throw new DerError(error);
}

/// The verified path of `leaf` (parsed) to `anchor` ({ subject, spki }) through
/// `intermediates` (DER), leaf first and the anchor left out. Throws dcap-qvl's error.
export function verifyCertificateChain(leaf, intermediates, anchor, crls, now) {
  if (intermediates.length > MAX_INTERMEDIATE_CERTS) throw new Error(`Too many intermediate certificates: ${intermediates.length}`);
  try {
    return build([leaf], intermediates, anchor, crls, now, 0);
  } catch (e) {
    throw new Error(`Failed to verify certificate chain: ${e.message}`);
  }
}
