// Names the reason behind a DCAP error chain: `classify` of shared/src/attest/policy/tcb.rs,
// table for table (the first needle the chain contains wins). The chains come from
// ../dcap/verify.js, which words them as dcap-qvl 0.7.1 does, or from the @phala/dcap-qvl
// cross-check, whose messages ../dcap/library.js rewords first.

import { MALFORMED, REJECT, UNSUPPORTED } from '../document.js';

const TABLE = [
  ['Unsupported DCAP quote version', UNSUPPORTED, 'unsupported_quote_version'],
  ['Unsupported DCAP attestation key type', UNSUPPORTED, 'unsupported_attestation_key'],
  ['Unsupported cert type', UNSUPPORTED, 'unsupported_cert_type'],
  ['Unsupported DCAP PCK cert format', UNSUPPORTED, 'unsupported_cert_type'],
  ['Unsupported TEE type', REJECT, 'not_tdx'],
  ['Failed to decode TcbInfo', MALFORMED, 'malformed_collateral'],
  ['Failed to decode QeIdentity', MALFORMED, 'malformed_collateral'],
  ['Failed to decode', MALFORMED, 'malformed_quote'],
  // The root CRL is signed by the trusted root: failing that, the evidence is under another root.
  ['root CA CRL: InvalidCrlSignatureForPublicKey', REJECT, 'untrusted_root'],
  ['CRLs required', REJECT, 'crl_missing'],
  ['Failed to parse PCK CRL', REJECT, 'crl_invalid'],
  ['Failed to parse root CA CRL', REJECT, 'crl_invalid'],
  ['Revoked', REJECT, 'pck_revoked'],
  ['CertExpired', REJECT, 'certificate_expired'],
  ['CertNotValidYet', REJECT, 'certificate_not_yet_valid'],
  ['CrlExpired', REJECT, 'collateral_expired'],
  ['UnknownIssuer', REJECT, 'untrusted_root'],
  ['Failed to verify certificate chain', REJECT, 'certificate_chain_invalid'],
  ['TCBInfo expired', REJECT, 'collateral_expired'],
  ['QE Identity expired', REJECT, 'collateral_expired'],
  ['issue date is in the future', REJECT, 'collateral_not_yet_valid'],
  ['Signature is invalid for tcb_info', REJECT, 'collateral_signature_invalid'],
  ['Signature is invalid for qe_identity', REJECT, 'collateral_signature_invalid'],
  ['Signature is invalid for qe_report', REJECT, 'qe_report_signature_invalid'],
  ['QE report hash mismatch', REJECT, 'qe_report_binding_invalid'],
  ['ISV enclave report signature is invalid', REJECT, 'quote_signature_invalid'],
  ['Debug mode is enabled', REJECT, 'debug_enabled'],
  ['No matching TCB level found', REJECT, 'tcb_level_unmatched'],
  ['TCB status is invalid', REJECT, 'tcb_revoked'],
  ['SEPT_VE_DISABLE', REJECT, 'td_attributes_not_allowed'],
  ['Reserved bits in TD attributes', REJECT, 'td_attributes_not_allowed'],
  ['TD migration is enabled', REJECT, 'td_attributes_not_allowed'],
  ['TD profiling is enabled', REJECT, 'td_attributes_not_allowed'],
  ['SGX', REJECT, 'not_tdx'],
  ['non-TDX TCB info', REJECT, 'collateral_not_tdx'],
  ['Fmspc mismatch', REJECT, 'collateral_wrong_platform'],
  ['QE ISVSVN', REJECT, 'qe_identity_unmatched'],
  ['QE report validation failed', REJECT, 'qe_identity_unmatched'],
  ['Failed to load root ca', REJECT, 'untrusted_root'],
];

/// { verdict, reason } for an error chain; `dcap_rejected` for anything not named.
export function classify(chain) {
  const hit = TABLE.find(([needle]) => chain.includes(needle));
  return hit ? { verdict: hit[1], reason: hit[2] } : { verdict: REJECT, reason: 'dcap_rejected' };
}
