//! Quote assembly: header ‖ [v5 body descriptor] ‖ TD report body ‖ signature data, with
//! the QE report certification data (type 6) wrapping the PEM PCK chain (type 5).

use sha2::{Digest, Sha256};
use shared::quote::{INTEL_QE_VENDOR_ID, TEE_TYPE_TDX};

use super::pki::Pki;
use super::platform;
use super::x509::pem;

/// Which quote layout to emit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QuoteVersion {
    /// Quote v4, TD 1.0 report (584 bytes).
    V4,
    /// Quote v5, body type 3: TD 1.5 report (648 bytes; TEE_TCB_SVN2 = TEE_TCB_SVN, no
    /// service TD).
    V5,
    /// Quote v5, body type 2: TD 1.0 report.
    V5Td10,
}

/// The TD report fields a quote carries (TD 1.0 layout, tdx.md §3.1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TdReport {
    pub tee_tcb_svn: [u8; 16],
    pub mr_seam: [u8; 48],
    pub mr_signer_seam: [u8; 48],
    pub seam_attributes: [u8; 8],
    pub td_attributes: [u8; 8],
    pub xfam: [u8; 8],
    pub mr_td: [u8; 48],
    pub mr_config_id: [u8; 48],
    pub mr_owner: [u8; 48],
    pub mr_owner_config: [u8; 48],
    pub rtmr: [[u8; 48]; 4],
    pub report_data: [u8; 64],
}

/// TD_ATTRIBUTES.SEPT_VE_DISABLE (bit 28), which dcap-qvl requires.
const SEPT_VE_DISABLE: u64 = 1 << 28;

impl Default for TdReport {
    /// A report the dev collateral rates UpToDate: the dev platform's TEE_TCB_SVN, Intel's
    /// all-zero module signer, SEPT_VE_DISABLE on and DEBUG off; measurements zero.
    fn default() -> Self {
        Self {
            tee_tcb_svn: platform::TEE_TCB_SVN,
            mr_seam: [0; 48],
            mr_signer_seam: [0; 48],
            seam_attributes: [0; 8],
            td_attributes: SEPT_VE_DISABLE.to_le_bytes(),
            // x87, SSE, AVX, AVX-512 state, PKRU, CET: what a typical TD enables.
            xfam: 0x0006_02E7_u64.to_le_bytes(),
            mr_td: [0; 48],
            mr_config_id: [0; 48],
            mr_owner: [0; 48],
            mr_owner_config: [0; 48],
            rtmr: [[0; 48]; 4],
            report_data: [0; 64],
        }
    }
}

impl TdReport {
    /// The 584-byte TD 1.0 report body.
    fn body(&self) -> Vec<u8> {
        [
            &self.tee_tcb_svn[..],
            &self.mr_seam,
            &self.mr_signer_seam,
            &self.seam_attributes,
            &self.td_attributes,
            &self.xfam,
            &self.mr_td,
            &self.mr_config_id,
            &self.mr_owner,
            &self.mr_owner_config,
            &self.rtmr.concat(),
            &self.report_data,
        ]
        .concat()
    }
}

/// Arbitrary, like the bytes Intel's QE puts there.
const QE_AUTH_DATA: [u8; 32] = *b"SVC DEV QE authentication data.\0";

pub(super) fn build(pki: &Pki, report: &TdReport, version: QuoteVersion) -> Vec<u8> {
    let mut body = report.body();
    let (quote_version, descriptor) = match version {
        QuoteVersion::V4 => (4u16, None),
        QuoteVersion::V5Td10 => (5, Some(2u16)),
        QuoteVersion::V5 => {
            body.extend_from_slice(&report.tee_tcb_svn); // TEE_TCB_SVN2: no module update
            body.extend_from_slice(&[0; 48]); // MR_SERVICETD: no service TD
            (5, Some(3))
        }
    };

    let mut signed = Vec::with_capacity(54 + body.len());
    signed.extend_from_slice(&quote_version.to_le_bytes());
    signed.extend_from_slice(&2u16.to_le_bytes()); // ECDSA-256 with P-256
    signed.extend_from_slice(&TEE_TYPE_TDX.to_le_bytes());
    signed.extend_from_slice(&platform::QE_SVN.to_le_bytes());
    signed.extend_from_slice(&platform::PCE_SVN.to_le_bytes());
    signed.extend_from_slice(&INTEL_QE_VENDOR_ID); // dcap-qvl accepts Intel's QE only
    signed.extend_from_slice(&pki.qe_id);
    signed.extend_from_slice(&[0; 4]);
    if let Some(body_type) = descriptor {
        signed.extend_from_slice(&body_type.to_le_bytes());
        signed.extend_from_slice(&len32(&body));
    }
    signed.extend_from_slice(&body);

    let attestation_key = pki.attestation.public_xy();
    let qe_report = qe_report(&attestation_key);
    let chain = [pem(&pki.pck.der), pem(&pki.pck_ca.der), pem(&pki.root.der)].concat();

    let mut qe_cert_data = Vec::new();
    qe_cert_data.extend_from_slice(&qe_report);
    qe_cert_data.extend_from_slice(&pki.pck.key.sign_raw(&qe_report));
    qe_cert_data.extend_from_slice(&(QE_AUTH_DATA.len() as u16).to_le_bytes());
    qe_cert_data.extend_from_slice(&QE_AUTH_DATA);
    qe_cert_data.extend_from_slice(&5u16.to_le_bytes()); // PCK cert chain, PEM
    qe_cert_data.extend_from_slice(&len32(chain.as_bytes()));
    qe_cert_data.extend_from_slice(chain.as_bytes());

    let mut auth = Vec::new();
    auth.extend_from_slice(&pki.attestation.sign_raw(&signed));
    auth.extend_from_slice(&attestation_key);
    auth.extend_from_slice(&6u16.to_le_bytes()); // QE report certification data
    auth.extend_from_slice(&len32(&qe_cert_data));
    auth.extend_from_slice(&qe_cert_data);

    let mut quote = signed;
    quote.extend_from_slice(&len32(&auth));
    quote.extend_from_slice(&auth);
    quote
}

/// The 384-byte SGX report of the dev TD-QE, binding the attestation key:
/// report_data = SHA-256(attestation key ‖ QE auth data) ‖ 32 zero bytes.
fn qe_report(attestation_key: &[u8; 64]) -> [u8; 384] {
    let mut report = [0u8; 384];
    report[..16].copy_from_slice(&platform::CPU_SVN);
    // misc_select (16..20) and the reserved bytes stay zero.
    report[48..64].copy_from_slice(&platform::QE_ATTRIBUTES);
    report[64..96].copy_from_slice(&platform::QE_MRENCLAVE);
    report[128..160].copy_from_slice(&platform::QE_MRSIGNER);
    report[256..258].copy_from_slice(&platform::QE_PROD_ID.to_le_bytes());
    report[258..260].copy_from_slice(&platform::QE_SVN.to_le_bytes());
    let hash = Sha256::new().chain_update(attestation_key).chain_update(QE_AUTH_DATA).finalize();
    report[320..352].copy_from_slice(&hash);
    report
}

/// Every length here is a few kilobytes at most.
fn len32(data: &[u8]) -> [u8; 4] {
    (data.len() as u32).to_le_bytes()
}
