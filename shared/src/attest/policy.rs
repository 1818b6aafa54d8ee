//! What a verifier accepts: the trust root, TCB statuses, the reference values and the key
//! binding it expects. Each check of evidence against it is a small policy of its own in
//! `policy/`, returning its rows and first failure; `verify` runs them in order.

pub(crate) mod binding;
pub(crate) mod measurements;
pub(crate) mod nonce;
pub(crate) mod tcb;
pub(crate) mod td_attributes;

use super::measurements::Measurements;
use crate::keys::{EnclaveKey, TeeKey};

/// Whose root certificate anchors the PCK chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrustRoot {
    /// Intel's SGX/TDX root CA (production).
    Intel,
    /// A development root (DER), trusted only because the caller named it explicitly.
    Dev(Vec<u8>),
}

impl TrustRoot {
    /// `intel`, or `dev:<sha256 of the root certificate>`.
    pub fn label(&self) -> String {
        match self {
            TrustRoot::Intel => "intel".into(),
            TrustRoot::Dev(der) => format!("dev:{}", hex::encode(crate::sha256(der))),
        }
    }
}

/// What `report_data` must bind (contract §2.4b).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Binding {
    /// `GET /tee/attestation`: sha256(X25519 key).
    PublicKey(TeeKey),
    /// Per-request quote: sha256(X25519 key ‖ ed25519 key).
    Keys { tee: TeeKey, enclave: EnclaveKey },
    /// A GPU node's quote: `report_data` as `gpu::node::report_data` computes it.
    ReportData([u8; 64]),
}

impl Binding {
    pub fn report_data(&self) -> [u8; 64] {
        match self {
            Binding::PublicKey(k) => crate::quote::binding_report_data(&[&k.0]),
            Binding::Keys { tee, enclave } => crate::quote::binding_report_data(&[&tee.0, &enclave.0]),
            Binding::ReportData(data) => *data,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Policy {
    pub root: TrustRoot,
    /// TCB statuses accepted (dcap-qvl's names); default `UpToDate` only.
    pub allowed_tcb_statuses: Vec<String>,
    pub measurements: Measurements,
}

impl Policy {
    pub fn new(root: TrustRoot, measurements: Measurements) -> Self {
        Policy { root, allowed_tcb_statuses: vec!["UpToDate".into()], measurements }
    }
}
