//! Collateral for the dev platform, in the JSON layout of dcap-qvl's `QuoteCollateralV3`
//! (PEM chains as strings, DER and raw signatures as lowercase hex, TCB info and QE identity
//! as the exact signed JSON strings).

use serde::Serialize;
use shared::time::rfc3339;

use super::pki::Pki;
use super::x509::pem;
use super::{PkiOptions, Y2025, platform};

/// Status of the dev TCB level that [`super::TdReport::default`] matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TcbStatus {
    UpToDate,
    OutOfDate,
}

/// What the collateral says and when it is valid (unix seconds).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CollateralOptions {
    /// TCB info and QE identity issueDate, CRL thisUpdate.
    pub issue_date: u64,
    /// TCB info and QE identity nextUpdate, CRL nextUpdate.
    pub next_update: u64,
    pub tcb_status: TcbStatus,
    /// Leave the PCK CRL out (an empty `pck_crl` field).
    pub omit_pck_crl: bool,
}

impl Default for CollateralOptions {
    fn default() -> Self {
        Self {
            issue_date: Y2025,
            next_update: 4_102_358_400, // 2099-12-31T00:00:00Z
            tcb_status: TcbStatus::UpToDate,
            omit_pck_crl: false,
        }
    }
}

/// Field order as in dcap-qvl's samples; structs (not maps) keep the bytes independent of
/// serde_json's `preserve_order` feature.
#[derive(Serialize)]
struct Collateral {
    pck_crl_issuer_chain: String,
    root_ca_crl: String,
    pck_crl: String,
    tcb_info_issuer_chain: String,
    tcb_info: String,
    tcb_info_signature: String,
    qe_identity_issuer_chain: String,
    qe_identity: String,
    qe_identity_signature: String,
}

pub(super) fn build(pki: &Pki, pki_options: &PkiOptions, options: &CollateralOptions) -> Vec<u8> {
    let (root_crl, pck_crl) = pki.crls(options.issue_date, options.next_update, pki_options.revoke_pck);
    let signer_chain = [pem(&pki.signer.der), pem(&pki.root.der)].concat();
    let tcb_info = tcb_info(options);
    let qe_identity = qe_identity(options);
    let collateral = Collateral {
        pck_crl_issuer_chain: [pem(&pki.pck_ca.der), pem(&pki.root.der)].concat(),
        root_ca_crl: hex::encode(root_crl),
        pck_crl: if options.omit_pck_crl { String::new() } else { hex::encode(pck_crl) },
        tcb_info_issuer_chain: signer_chain.clone(),
        tcb_info_signature: hex::encode(pki.signer.key.sign_raw(tcb_info.as_bytes())),
        tcb_info,
        qe_identity_issuer_chain: signer_chain,
        qe_identity_signature: hex::encode(pki.signer.key.sign_raw(qe_identity.as_bytes())),
        qe_identity,
    };
    // Serializing plain strings cannot fail.
    serde_json::to_vec_pretty(&collateral).unwrap_or_default()
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct TcbInfo {
    id: &'static str,
    version: u8,
    issue_date: String,
    next_update: String,
    fmspc: String,
    pce_id: String,
    tcb_type: u8,
    tcb_evaluation_data_number: u32,
    tdx_module: TdxModule,
    tdx_module_identities: [TdxModuleIdentity; 1],
    tcb_levels: [TcbLevel<PlatformTcb>; 1],
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct TdxModule {
    mrsigner: String,
    attributes: String,
    attributes_mask: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct TdxModuleIdentity {
    id: String,
    #[serde(flatten)]
    module: TdxModule,
    tcb_levels: [TcbLevel<IsvSvn>; 1],
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct TcbLevel<T> {
    tcb: T,
    tcb_date: String,
    tcb_status: &'static str,
}

#[derive(Serialize)]
struct PlatformTcb {
    sgxtcbcomponents: Vec<Svn>,
    pcesvn: u16,
    tdxtcbcomponents: Vec<Svn>,
}

#[derive(Serialize)]
struct Svn {
    svn: u8,
}

#[derive(Serialize)]
struct IsvSvn {
    isvsvn: u16,
}

/// One TDX TCB level, exactly the dev platform's SVNs, with the requested status; the TDX
/// module identity (TDX_01, Intel's all-zero signer) is up to date.
fn tcb_info(options: &CollateralOptions) -> String {
    let svns = |svns: &[u8]| svns.iter().map(|&svn| Svn { svn }).collect();
    let module = || TdxModule {
        mrsigner: hex::encode_upper([0u8; 48]),
        attributes: hex::encode_upper([0u8; 8]),
        attributes_mask: hex::encode_upper([0xFFu8; 8]),
    };
    let [module_svn, module_version, ..] = platform::TEE_TCB_SVN;
    let info = TcbInfo {
        id: "TDX",
        version: 3,
        issue_date: rfc3339(options.issue_date),
        next_update: rfc3339(options.next_update),
        fmspc: hex::encode_upper(platform::FMSPC),
        pce_id: hex::encode_upper(platform::PCE_ID),
        tcb_type: 0,
        tcb_evaluation_data_number: platform::TCB_EVALUATION_DATA_NUMBER,
        tdx_module: module(),
        tdx_module_identities: [TdxModuleIdentity {
            id: format!("TDX_{module_version:02X}"),
            module: module(),
            tcb_levels: [TcbLevel {
                tcb: IsvSvn { isvsvn: module_svn.into() },
                tcb_date: rfc3339(options.issue_date),
                tcb_status: "UpToDate",
            }],
        }],
        tcb_levels: [TcbLevel {
            tcb: PlatformTcb {
                sgxtcbcomponents: svns(&platform::CPU_SVN),
                pcesvn: platform::PCE_SVN,
                tdxtcbcomponents: svns(&platform::TEE_TCB_SVN),
            },
            tcb_date: rfc3339(options.issue_date),
            tcb_status: match options.tcb_status {
                TcbStatus::UpToDate => "UpToDate",
                TcbStatus::OutOfDate => "OutOfDate",
            },
        }],
    };
    serde_json::to_string(&info).unwrap_or_default()
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct QeIdentity {
    id: &'static str,
    version: u8,
    issue_date: String,
    next_update: String,
    tcb_evaluation_data_number: u32,
    miscselect: String,
    miscselect_mask: String,
    attributes: String,
    attributes_mask: String,
    mrsigner: String,
    isvprodid: u16,
    tcb_levels: [TcbLevel<IsvSvn>; 1],
}

/// The dev TD-QE's identity; masks as in Intel's TD_QE identity.
fn qe_identity(options: &CollateralOptions) -> String {
    let identity = QeIdentity {
        id: "TD_QE",
        version: 2,
        issue_date: rfc3339(options.issue_date),
        next_update: rfc3339(options.next_update),
        tcb_evaluation_data_number: platform::TCB_EVALUATION_DATA_NUMBER,
        miscselect: "00000000".into(),
        miscselect_mask: "FFFFFFFF".into(),
        attributes: "11000000000000000000000000000000".into(),
        attributes_mask: "FBFFFFFFFFFFFFFF0000000000000000".into(),
        mrsigner: hex::encode_upper(platform::QE_MRSIGNER),
        isvprodid: platform::QE_PROD_ID,
        tcb_levels: [TcbLevel {
            tcb: IsvSvn { isvsvn: platform::QE_SVN },
            tcb_date: rfc3339(options.issue_date),
            tcb_status: "UpToDate",
        }],
    };
    serde_json::to_string(&identity).unwrap_or_default()
}
