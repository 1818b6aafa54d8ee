//! Collateral, parsed once: callers cache a [`Collateral`] until `valid_until` and verify any
//! number of quotes against it without re-reading the JSON.

use dcap_qvl::QuoteCollateralV3;

pub const MAX_COLLATERAL_LEN: usize = 1 << 20;

#[derive(Debug, Clone)]
pub struct Collateral {
    pub(crate) inner: QuoteCollateralV3,
    /// Earliest `nextUpdate` of the TCB info and QE identity: results expire then.
    pub valid_until: Option<u64>,
    /// The TCB info's platform (FMSPC) and `tcbEvaluationDataNumber`: a later number is a
    /// later TCB evaluation, so a client that saw one refuses an earlier (rollback).
    pub tcb_evaluation: Option<TcbEvaluation>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TcbEvaluation {
    pub fmspc: String,
    pub number: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CollateralError {
    #[error("collateral is larger than {MAX_COLLATERAL_LEN} bytes")]
    Oversize,
    #[error("collateral is not dcap-qvl collateral JSON: {0}")]
    Malformed(String),
}

impl CollateralError {
    /// The verification document's reason for this failure.
    pub fn reason(&self) -> &'static str {
        match self {
            CollateralError::Oversize => "oversize",
            CollateralError::Malformed(_) => "malformed_collateral",
        }
    }
}

impl Collateral {
    pub fn from_json(text: &str) -> Result<Self, CollateralError> {
        if text.len() > MAX_COLLATERAL_LEN {
            return Err(CollateralError::Oversize);
        }
        let inner: QuoteCollateralV3 =
            serde_json::from_str(text).map_err(|e| CollateralError::Malformed(e.to_string()))?;
        let valid_until = [&inner.tcb_info, &inner.qe_identity]
            .iter()
            .filter_map(|body| {
                let v: serde_json::Value = serde_json::from_str(body).ok()?;
                crate::time::parse_rfc3339(v.get("nextUpdate")?.as_str()?)
            })
            .min();
        let tcb_evaluation = serde_json::from_str::<serde_json::Value>(&inner.tcb_info).ok().and_then(|v| {
            Some(TcbEvaluation {
                fmspc: v.get("fmspc")?.as_str()?.to_ascii_lowercase(),
                number: u32::try_from(v.get("tcbEvaluationDataNumber")?.as_u64()?).ok()?,
            })
        });
        Ok(Collateral { inner, valid_until, tcb_evaluation })
    }
}

/// What a PCS / PCCS answered, before assembly (`client::pccs` does the fetching).
#[derive(Debug, Clone, Default)]
pub struct PcsResponses {
    /// Header `SGX-PCK-CRL-Issuer-Chain` (already URL-decoded PEM).
    pub pck_crl_issuer_chain: String,
    /// Body of `pckcrl?ca=…&encoding=der`.
    pub pck_crl: Vec<u8>,
    /// The root CA CRL, DER.
    pub root_ca_crl: Vec<u8>,
    /// Header `TCB-Info-Issuer-Chain` (or `SGX-TCB-Info-Issuer-Chain`).
    pub tcb_info_issuer_chain: String,
    /// Body of `tdx/certification/v4/tcb?fmspc=…`: `{"tcbInfo": {…}, "signature": "<hex>"}`.
    pub tcb_info_body: String,
    /// Header `SGX-Enclave-Identity-Issuer-Chain`.
    pub qe_identity_issuer_chain: String,
    /// Body of `tdx/certification/v4/qe/identity`: `{"enclaveIdentity": {…}, "signature": "<hex>"}`.
    pub qe_identity_body: String,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct TcbInfoResponse<'a> {
    #[serde(borrow)]
    tcb_info: &'a serde_json::value::RawValue,
    signature: String,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct QeIdentityResponse<'a> {
    #[serde(borrow)]
    enclave_identity: &'a serde_json::value::RawValue,
    signature: String,
}

impl Collateral {
    /// Assembles collateral from PCS responses. The signed bodies are kept byte for byte (the
    /// signatures cover the exact JSON text), so nothing is re-serialised.
    pub fn from_pcs(r: PcsResponses) -> Result<Self, CollateralError> {
        let bad = |what: &str| CollateralError::Malformed(format!("PCS {what}"));
        let tcb: TcbInfoResponse<'_> = serde_json::from_str(&r.tcb_info_body).map_err(|_| bad("TCB info body"))?;
        let qe: QeIdentityResponse<'_> =
            serde_json::from_str(&r.qe_identity_body).map_err(|_| bad("QE identity body"))?;
        let inner = dcap_qvl::QuoteCollateralV3 {
            pck_crl_issuer_chain: r.pck_crl_issuer_chain,
            root_ca_crl: r.root_ca_crl,
            pck_crl: r.pck_crl,
            tcb_info_issuer_chain: r.tcb_info_issuer_chain,
            tcb_info: tcb.tcb_info.get().to_string(),
            tcb_info_signature: hex::decode(&tcb.signature).map_err(|_| bad("TCB info signature"))?,
            qe_identity_issuer_chain: r.qe_identity_issuer_chain,
            qe_identity: qe.enclave_identity.get().to_string(),
            qe_identity_signature: hex::decode(&qe.signature).map_err(|_| bad("QE identity signature"))?,
            pck_certificate_chain: None,
        };
        Self::from_json(&serde_json::to_string(&inner).expect("collateral serialises"))
    }

    /// The JSON form (what `from_json` reads), for caching.
    pub fn to_json(&self) -> String {
        serde_json::to_string(&self.inner).expect("collateral serialises")
    }
}

/// What to ask a PCS for a quote's collateral: the FMSPC (upper-case hex) and the PCK CA
/// (`platform` or `processor`), both from the quote's PCK certificate.
pub fn pcs_query(quote: &[u8]) -> Result<(String, &'static str), CollateralError> {
    let q = dcap_qvl::quote::Quote::parse(quote).map_err(bad)?;
    let fmspc = dcap_qvl::intel::quote_fmspc(&q).map_err(bad)?;
    let chain = dcap_qvl::intel::extract_cert_chain(&q).map_err(bad)?;
    let leaf = chain.first().ok_or_else(|| CollateralError::Malformed("quote has no PCK certificate".into()))?;
    let ca = dcap_qvl::intel::pck_ca(leaf).map_err(bad)?.as_id_str();
    Ok((hex::encode_upper(fmspc), ca))
}

fn bad(e: impl std::fmt::Display) -> CollateralError {
    CollateralError::Malformed(format!("quote PCK certificate: {e:#}"))
}
