//! Intel's collateral for a TDX quote, from Intel's PCS or an operator's PCCS (API v4).
//! Only the quote's FMSPC and PCK CA type are sent: the quote itself never leaves the caller.

mod cache;

use std::time::Duration;

pub use cache::CachedPcs;
use shared::attest::collateral::{Collateral, PcsResponses, pcs_query};

/// Where Intel publishes the root CA CRL (used when a PCS has no `rootcacrl` route).
pub const INTEL_ROOT_CRL_URL: &str = "https://certificates.trustedservices.intel.com/IntelSGXRootCA.der";

#[derive(Debug, thiserror::Error)]
pub enum PcsError {
    #[error("the collateral service {0} cannot be reached")]
    Unreachable(String),
    /// It answered, but not with what the v4 API promises.
    #[error("collateral service: {0}")]
    BadAnswer(String),
    /// The quote names no FMSPC or CA, or the answers do not assemble into collateral.
    #[error("{0}")]
    Malformed(String),
}

#[derive(Clone, Debug)]
pub struct PcsClient {
    http: reqwest::Client,
    /// e.g. `https://api.trustedservices.intel.com` or `https://pccs.example:8081`.
    base: String,
}

/// Percent-decoding of the issuer-chain headers (PCS sends URL-encoded PEM).
fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

impl PcsClient {
    /// `base` may end in `/sgx/certification/v4` or `/tdx/certification/v4`; both are accepted.
    pub fn new(base: &str) -> Self {
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(30))
            .build()
            .expect("static reqwest configuration is valid");
        let base = base
            .trim_end_matches('/')
            .trim_end_matches("/sgx/certification/v4")
            .trim_end_matches("/tdx/certification/v4");
        PcsClient { http, base: base.to_string() }
    }

    pub fn base(&self) -> &str {
        &self.base
    }

    async fn get(&self, url: &str) -> Result<reqwest::Response, PcsError> {
        let r = self.http.get(url).send().await.map_err(|_| PcsError::Unreachable(self.base.clone()))?;
        if !r.status().is_success() {
            return Err(PcsError::BadAnswer(format!("{url} answered HTTP {}", r.status().as_u16())));
        }
        Ok(r)
    }

    fn header(r: &reqwest::Response, names: &[&str]) -> Result<String, PcsError> {
        names
            .iter()
            .find_map(|n| r.headers().get(*n))
            .and_then(|v| v.to_str().ok())
            .and_then(percent_decode)
            .ok_or_else(|| PcsError::BadAnswer(format!("missing header {}", names[0])))
    }

    async fn body(r: reqwest::Response, what: &str) -> Result<Vec<u8>, PcsError> {
        Ok(r.bytes().await.map_err(|_| PcsError::BadAnswer(format!("{what} body")))?.to_vec())
    }

    async fn text(r: reqwest::Response, what: &str) -> Result<String, PcsError> {
        String::from_utf8(Self::body(r, what).await?).map_err(|_| PcsError::BadAnswer(format!("{what} body")))
    }

    /// The collateral for `quote`'s platform, fetched now.
    pub async fn collateral_for(&self, quote: &[u8]) -> Result<Collateral, PcsError> {
        let (fmspc, ca) = pcs_query(quote).map_err(|e| PcsError::Malformed(e.to_string()))?;
        self.fetch(&fmspc, ca).await
    }

    /// The collateral for one FMSPC (upper-case hex) and PCK CA (`platform` or `processor`).
    pub async fn fetch(&self, fmspc: &str, ca: &str) -> Result<Collateral, PcsError> {
        let b = &self.base;
        let crl = self.get(&format!("{b}/sgx/certification/v4/pckcrl?ca={ca}&encoding=der")).await?;
        let pck_crl_issuer_chain = Self::header(&crl, &["SGX-PCK-CRL-Issuer-Chain"])?;
        let pck_crl = Self::body(crl, "PCK CRL").await?;

        let tcb = self.get(&format!("{b}/tdx/certification/v4/tcb?fmspc={fmspc}")).await?;
        let tcb_info_issuer_chain = Self::header(&tcb, &["TCB-Info-Issuer-Chain", "SGX-TCB-Info-Issuer-Chain"])?;
        let tcb_info_body = Self::text(tcb, "TCB info").await?;

        let qe = self.get(&format!("{b}/tdx/certification/v4/qe/identity")).await?;
        let qe_identity_issuer_chain = Self::header(&qe, &["SGX-Enclave-Identity-Issuer-Chain"])?;
        let qe_identity_body = Self::text(qe, "QE identity").await?;

        // A PCCS serves the root CRL (hex text); Intel's PCS points at its certificate site.
        let root_ca_crl = match self.get(&format!("{b}/sgx/certification/v4/rootcacrl")).await {
            Ok(r) => {
                let body = Self::body(r, "root CRL").await?;
                std::str::from_utf8(&body).ok().and_then(|t| hex::decode(t.trim()).ok()).unwrap_or(body)
            }
            Err(_) => Self::body(self.get(INTEL_ROOT_CRL_URL).await?, "root CRL").await?,
        };
        Collateral::from_pcs(PcsResponses {
            pck_crl_issuer_chain,
            pck_crl,
            root_ca_crl,
            tcb_info_issuer_chain,
            tcb_info_body,
            qe_identity_issuer_chain,
            qe_identity_body,
        })
        .map_err(|e| PcsError::Malformed(e.to_string()))
    }
}

#[cfg(test)]
mod tests;
