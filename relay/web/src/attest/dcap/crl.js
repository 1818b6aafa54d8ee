// Certificate revocation lists as webpki reads and applies them (dcap-qvl's `parse_crls` and
// its revocation options: every certificate of a path needs an authoritative CRL, signed by
// the certificate's issuer and not expired).

import { DerError, DerReader, TAG, children, context, contextPrimitive, unsignedInteger, whole } from './der.js';
import { keyUsageAllows, readExtension, readTime, sameBytes, signedData } from './x509.js';
import { verifySignedData } from './signature.js';

const CRL_SIGN = 6;

/// The last arc of an id-ce (2.5.29.x) extension, or null for any other.
const idCe = (ext) => (ext.rawId.length === 3 && ext.rawId[0] === 0x55 && ext.rawId[1] === 0x1d ? ext.rawId[2] : null);

function unsupported(ext) {
  if (ext.critical) throw new DerError('UnsupportedCriticalExtension');
}

const decodeBool = (value) => {
  if (value.length !== 1 || (value[0] !== 0 && value[0] !== 0xff)) throw new DerError();
  return value[0] === 0xff;
};

/// URIs of a DistributionPointName's fullName; null for a name relative to the issuer.
function fullNameUris(dpName) {
  const [name] = children(dpName);
  if (!name) throw new DerError();
  if (name.tag === context(1)) return null;
  if (name.tag !== context(0)) throw new DerError();
  return children(name.value)
    .filter((g) => g.tag === contextPrimitive(6))
    .map((g) => String.fromCharCode(...g.value));
}

function issuingDistributionPoint(value) {
  const idp = { point: null, onlyUser: false, onlyCa: false };
  const seen = new Set();
  for (const field of children(whole(value, TAG.SEQUENCE).value)) {
    if (field.tag === context(0) || field.tag === contextPrimitive(3)) {
      if (seen.has(field.tag)) throw new DerError('ExtensionValueInvalid');
      seen.add(field.tag);
    }
    if (field.tag === context(0)) idp.point = field.value;
    else if (field.tag === contextPrimitive(1)) idp.onlyUser = decodeBool(field.value);
    else if (field.tag === contextPrimitive(2)) idp.onlyCa = decodeBool(field.value);
    else if (field.tag === contextPrimitive(3)) idp.someReasons = true;
    else if (field.tag === contextPrimitive(4)) idp.indirect = decodeBool(field.value);
    else if (field.tag === contextPrimitive(5)) idp.attributeCerts = decodeBool(field.value);
    else throw new DerError();
  }
  if (idp.attributeCerts) throw new DerError('MalformedExtensions');
  if (idp.indirect) throw new DerError('UnsupportedIndirectCrl');
  if (idp.someReasons) throw new DerError('UnsupportedRevocationReasonsPartitioning');
  try {
    idp.uris = idp.point ? fullNameUris(idp.point) : null;
  } catch {
    throw new DerError('MalformedExtensions');
  }
  if (idp.uris === null) throw new DerError('UnsupportedCrlIssuingDistributionPoint');
  if (idp.onlyUser && idp.onlyCa) throw new DerError('MalformedExtensions');
  return idp;
}

/// The raw serials a CRL lists, every entry read (as webpki's owned CRL does).
function revokedSerials(value) {
  const serials = [];
  for (const entry of children(value)) {
    if (entry.tag !== TAG.SEQUENCE) throw new DerError();
    const r = new DerReader(entry.value);
    if (!r.peek(TAG.INTEGER)) throw new DerError('InvalidSerialNumber');
    serials.push(r.read(TAG.INTEGER).value);
    readTime(r);
    if (!r.atEnd()) {
      const exts = r.read(TAG.SEQUENCE).value;
      r.end();
      const seen = new Set();
      for (const tlv of children(exts)) {
        const ext = readExtension(tlv);
        const id = idCe(ext);
        if (id === 21 || id === 24) {
          if (seen.has(id)) throw new DerError('ExtensionValueInvalid');
          seen.add(id);
          if (id === 21) reasonCode(ext.value);
          else readTime(new DerReader(ext.value));
        } else if (id === 29) throw new DerError('UnsupportedIndirectCrl');
        else unsupported(ext);
      }
    }
  }
  return serials;
}

/// RFC 5280 §5.3.1 reasons webpki knows: 0–10 but 7.
function reasonCode(value) {
  const tlv = whole(value, TAG.ENUMERATED);
  if (tlv.value.length !== 1) throw new DerError();
  if (tlv.value[0] > 10 || tlv.value[0] === 7) throw new DerError('UnsupportedRevocationReason');
}

/// Parses a CRL (version 2, with extensions, `nextUpdate` present); throws webpki's error.
export function parseCrl(der) {
  const signed = signedData(der);
  const r = new DerReader(signed.tbs);
  const version = unsignedInteger(r.read(TAG.INTEGER).value);
  if (version.length !== 1 || version[0] !== 1) throw new DerError('UnsupportedCrlVersion');
  if (!sameBytes(r.read(TAG.SEQUENCE).raw, signed.algorithm)) throw new DerError('SignatureAlgorithmMismatch');
  const issuer = r.read(TAG.SEQUENCE).value;
  readTime(r);
  const nextUpdate = readTime(r);
  const revokedList = r.peek(TAG.SEQUENCE) ? r.read(TAG.SEQUENCE).value : new Uint8Array(0);
  const exts = r.read(context(0), 'MalformedExtensions');
  r.end();
  let idpValue = null;
  for (const tlv of children(whole(exts.value, TAG.SEQUENCE).value)) {
    const ext = readExtension(tlv);
    const id = idCe(ext);
    if (id === 20) {
      let n;
      try {
        n = unsignedInteger(whole(ext.value, TAG.INTEGER).value);
      } catch {
        throw new DerError('InvalidCrlNumber');
      }
      if (n.length > 20) throw new DerError('InvalidCrlNumber');
    } else if (id === 27) throw new DerError('UnsupportedDeltaCrl');
    else if (id === 28) {
      if (idpValue) throw new DerError('ExtensionValueInvalid');
      idpValue = ext.value;
    } else if (id !== 35) unsupported(ext);
  }
  const idp = idpValue ? issuingDistributionPoint(idpValue) : null;
  const revoked = revokedSerials(revokedList);
  return { signed, issuer, nextUpdate, revoked, idp, verifiedBy: null };
}

/// Parses and checks the signature with `spki` (the root CA CRL, with the trust anchor's key).
export function parseCrlVerified(der, spki) {
  const crl = parseCrl(der);
  verifyCrlSignature(crl, spki);
  return crl;
}

function verifyCrlSignature(crl, spki) {
  if (crl.verifiedBy && sameBytes(crl.verifiedBy, spki)) return;
  try {
    verifySignedData(spki, crl.signed);
  } catch (e) {
    const crlName = {
      InvalidSignatureForPublicKey: 'InvalidCrlSignatureForPublicKey',
      UnsupportedSignatureAlgorithmContext: 'UnsupportedCrlSignatureAlgorithmContext',
      UnsupportedSignatureAlgorithmForPublicKeyContext: 'UnsupportedCrlSignatureAlgorithmForPublicKeyContext',
    }[e.message];
    throw new DerError(crlName ?? e.message);
  }
  crl.verifiedBy = spki;
}

/// Whether a CRL with an issuing distribution point covers `cert`: its scope, and a URI of one
/// of the certificate's distribution points among the CRL's (webpki's `authoritative_for`).
function coveredByIdp(idp, cert, isEndEntity) {
  if ((idp.onlyCa && isEndEntity) || (idp.onlyUser && !isEndEntity)) return false;
  if (cert.crlDistributionPoints === null) return true;
  for (const dp of children(cert.crlDistributionPoints)) {
    let uris;
    try {
      const fields = children(dp.value);
      if (fields.some((f) => f.tag !== context(0))) continue;
      uris = fields.length ? fullNameUris(fields[0].value) : null;
    } catch {
      continue;
    }
    if (uris?.some((uri) => idp.uris.includes(uri))) return true;
  }
  return false;
}

/// Revocation of `cert` (issued by the holder of `issuerSpki`, with `issuerKeyUsage`) at `now`:
/// an authoritative CRL, verified, not expired, from an issuer allowed to sign CRLs, not
/// listing the serial. Throws webpki's error.
export function checkRevocation(crls, cert, isEndEntity, issuerSpki, issuerKeyUsage, now) {
  const crl = crls.find((c) => sameBytes(c.issuer, cert.issuer) && (!c.idp || coveredByIdp(c.idp, cert, isEndEntity)));
  if (!crl) throw new DerError('UnknownRevocationStatus');
  verifyCrlSignature(crl, issuerSpki);
  if (now >= crl.nextUpdate) throw new DerError(`CrlExpired { time: UnixTime(${now}), next_update: UnixTime(${crl.nextUpdate}) }`);
  if (!keyUsageAllows(issuerKeyUsage, CRL_SIGN)) throw new DerError('IssuerNotCrlSigner');
  if (crl.revoked.some((serial) => sameBytes(serial, cert.serial))) throw new DerError('CertRevoked');
}
