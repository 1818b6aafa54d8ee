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
            match self.0.collateral_for(&bytes, now).await {
                Ok(json) => {
                    quote.collateral = Some(json.to_string());
                    added = true;
                }
                Err(e) => tracing::warn!(pccs = self.0.base(), error = %e, "no collateral for an enclave's quote"),
            }
        }
        if !added {
            return None;
        }
        serde_json::to_vec(&doc).ok()
    }
}
