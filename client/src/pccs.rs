//! Collateral from an Intel PCS or a PCCS (API v4), cached on disk until its `nextUpdate`.
//! Only the quote's FMSPC and CA type are sent: the quote itself never leaves the client.

use std::path::PathBuf;
use std::time::Duration;

use shared::attest::collateral::{Collateral, PcsResponses, pcs_query};

use crate::error::ClientError;

/// Where Intel publishes the root CA CRL (used when a PCS has no `rootcacrl` route).
pub const INTEL_ROOT_CRL_URL: &str = "https://certificates.trustedservices.intel.com/IntelSGXRootCA.der";

#[derive(Clone, Debug)]
pub struct PccsClient {
    http: reqwest::Client,
    /// e.g. `https://api.trustedservices.intel.com` or `https://pccs.example:8081`.
    base: String,
    cache_dir: Option<PathBuf>,
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

impl PccsClient {
    pub fn new(base: &str, cache_dir: Option<PathBuf>) -> Self {
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(30))
            .build()
            .expect("static reqwest configuration is valid");
        let base = base
            .trim_end_matches('/')
            .trim_end_matches("/sgx/certification/v4")
            .trim_end_matches("/tdx/certification/v4");
        PccsClient { http, base: base.to_string(), cache_dir }
    }

    fn failed(what: &str) -> ClientError {
        ClientError::Malformed(format!("collateral service: {what}"))
    }

    async fn get(&self, url: &str) -> Result<reqwest::Response, ClientError> {
        let r = self.http.get(url).send().await.map_err(|_| ClientError::RelayUnreachable(self.base.clone()))?;
        if !r.status().is_success() {
            return Err(Self::failed(&format!("{url} answered HTTP {}", r.status().as_u16())));
        }
        Ok(r)
    }

    fn header(r: &reqwest::Response, names: &[&str]) -> Result<String, ClientError> {
        names
            .iter()
            .find_map(|n| r.headers().get(*n))
            .and_then(|v| v.to_str().ok())
            .and_then(percent_decode)
            .ok_or_else(|| Self::failed(&format!("missing header {}", names[0])))
    }

    /// Collateral for `quote`: from the cache while valid, else fetched and cached.
    pub async fn collateral_for(&self, quote: &[u8]) -> Result<String, ClientError> {
        let (fmspc, ca) = pcs_query(quote).map_err(|e| ClientError::Malformed(e.to_string()))?;
        let cache = self.cache_dir.as_ref().map(|d| d.join(format!("collateral-{fmspc}-{ca}.json")));
        if let Some(text) = cache.as_ref().and_then(|p| std::fs::read_to_string(p).ok())
            && Collateral::from_json(&text).ok().and_then(|c| c.valid_until).is_some_and(|t| t > crate::unix_now())
        {
            return Ok(text);
        }
        let collateral = self.fetch(&fmspc, ca).await?;
        let text = collateral.to_json();
        if let Some(path) = cache {
            let _ = crate::private_file::write(&path, text.as_bytes());
        }
        Ok(text)
    }

    async fn fetch(&self, fmspc: &str, ca: &str) -> Result<Collateral, ClientError> {
        let b = &self.base;
        let crl = self.get(&format!("{b}/sgx/certification/v4/pckcrl?ca={ca}&encoding=der")).await?;
        let pck_crl_issuer_chain = Self::header(&crl, &["SGX-PCK-CRL-Issuer-Chain"])?;
        let pck_crl = crl.bytes().await.map_err(|_| Self::failed("PCK CRL body"))?.to_vec();

        let tcb = self.get(&format!("{b}/tdx/certification/v4/tcb?fmspc={fmspc}")).await?;
        let tcb_info_issuer_chain = Self::header(&tcb, &["TCB-Info-Issuer-Chain", "SGX-TCB-Info-Issuer-Chain"])?;
        let tcb_info_body = tcb.text().await.map_err(|_| Self::failed("TCB info body"))?;

        let qe = self.get(&format!("{b}/tdx/certification/v4/qe/identity")).await?;
        let qe_identity_issuer_chain = Self::header(&qe, &["SGX-Enclave-Identity-Issuer-Chain"])?;
        let qe_identity_body = qe.text().await.map_err(|_| Self::failed("QE identity body"))?;

        // A PCCS serves the root CRL (hex text); Intel's PCS points at its certificate site.
        let root_ca_crl = match self.get(&format!("{b}/sgx/certification/v4/rootcacrl")).await {
            Ok(r) => {
                let body = r.bytes().await.map_err(|_| Self::failed("root CRL body"))?;
                std::str::from_utf8(&body)
                    .ok()
                    .and_then(|t| hex::decode(t.trim()).ok())
                    .unwrap_or_else(|| body.to_vec())
            }
            Err(_) => {
                self.get(INTEL_ROOT_CRL_URL).await?.bytes().await.map_err(|_| Self::failed("root CRL body"))?.to_vec()
            }
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
        .map_err(|e| ClientError::Malformed(e.to_string()))
    }
}

#[cfg(test)]
mod tests;
