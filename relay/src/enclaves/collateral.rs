//! Intel's collateral for quotes that arrive without it (`collateral.pccsUrl`). Real TDX quotes
//! from configfs-tsm carry none, and a page cannot ask Intel's PCS itself, so the relay attaches
//! it to `/tee/attestation`. It adds nothing it could forge: Intel signs the collateral, and
//! every client refuses one below its TCB floor (docs/web.md).

use serde::Deserialize;
use shared::wire::AttestationResponse;

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CollateralConfig {
    /// Intel's PCS (`https://api.trustedservices.intel.com`) or a PCCS. Unset: quotes pass
    /// through as the enclave sent them.
    pub pccs_url: Option<String>,
}

/// How long one attestation waits for the PCS on a cache miss.
const FETCH_LIMIT: std::time::Duration = std::time::Duration::from_secs(10);

pub struct CollateralSource(pcs::CachedPcs);

impl CollateralSource {
    pub fn from_config(config: &CollateralConfig) -> Option<Self> {
        let url = config.pccs_url.as_deref().filter(|u| !u.is_empty())?;
        Some(CollateralSource(pcs::CachedPcs::new(pcs::PcsClient::new(url))))
    }

    /// `body`, an enclave's attestation document, with collateral attached to each quote that
    /// has none; `None` when nothing was added (the caller then passes the enclave's bytes).
    /// A quote whose collateral cannot be had is left as it was: clients say `no_collateral`.
    pub async fn attach(&self, body: &[u8], now: u64) -> Option<Vec<u8>> {
        let mut doc: AttestationResponse = serde_json::from_slice(body).ok()?;
        let mut added = false;
        for quote in [doc.tdx_quote.as_mut(), doc.binding_tdx_quote.as_mut()].into_iter().flatten() {
            if quote.collateral.is_some() {
                continue;
            }
            let Ok(bytes) = shared::b64::decode(&quote.quote) else { continue };
            // A PCS that hangs must not hold the page's attestation for the client's 30 s per
            // request; after one failure the other quote (same platform) is not tried again.
            match tokio::time::timeout(FETCH_LIMIT, self.0.collateral_for(&bytes, now)).await {
                Ok(Ok(json)) => {
                    quote.collateral = Some(json.to_string());
                    added = true;
                }
                Ok(Err(e)) => {
                    tracing::warn!(pccs = self.0.base(), error = %e, "no collateral for an enclave's quote");
                    break;
                }
                Err(_) => {
                    tracing::warn!(
                        pccs = self.0.base(),
                        "no collateral for an enclave's quote: the PCS did not answer in time"
                    );
                    break;
                }
            }
        }
        if !added {
            return None;
        }
        serde_json::to_vec(&doc).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE_QUOTE: &str =
        concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/test-vectors/dcap-qvl-samples/tdx_quote");

    #[tokio::test]
    async fn a_pcs_that_never_answers_costs_one_bounded_wait_and_changes_nothing() {
        // Accepts connections and never answers.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let silent = tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((stream, _)) = listener.accept().await {
                held.push(stream);
            }
        });
        let source = CollateralSource::from_config(&CollateralConfig { pccs_url: Some(format!("http://{addr}")) })
            .expect("configured");
        let quote = shared::b64::encode(std::fs::read(SAMPLE_QUOTE).unwrap());
        let body = serde_json::json!({
            "teePublicKey": "", "teePublicKeySha256": "", "reportDataHex": "",
            "tdxQuote": {"quote": quote, "provider": "tdx_guest"},
            "generatedAt": "2026-11-28T00:00:00Z", "enclavePublicKey": "", "bindingReportDataHex": "",
            "bindingTdxQuote": {"quote": quote, "provider": "tdx_guest"},
            "provisioning": {"provisioned": true}
        })
        .to_string();
        // The document is one the relay would otherwise fill: a parse failure would pass vacuously.
        serde_json::from_str::<AttestationResponse>(&body).unwrap();

        let started = std::time::Instant::now();
        assert_eq!(source.attach(body.as_bytes(), 1_800_000_000).await, None);
        let waited = started.elapsed();
        // One wait for the first quote; the second (same platform) is not tried after it failed.
        assert!(waited >= FETCH_LIMIT && waited < FETCH_LIMIT + std::time::Duration::from_secs(5), "{waited:?}");
        silent.abort();
    }

    #[test]
    fn only_an_http_url_configures_a_source() {
        assert!(CollateralSource::from_config(&CollateralConfig { pccs_url: None }).is_none());
        assert!(CollateralSource::from_config(&CollateralConfig { pccs_url: Some(String::new()) }).is_none());
    }
}
