//! `svc attest --pccs`: Intel's collateral through the `pcs` crate, cached on disk until its
//! `nextUpdate` so repeated checks of one platform ask once per period.

use std::path::PathBuf;

use pcs::{PcsClient, PcsError};
use shared::attest::collateral::{Collateral, pcs_query};

use crate::error::ClientError;

#[derive(Clone, Debug)]
pub struct PccsClient {
    pcs: PcsClient,
    cache_dir: Option<PathBuf>,
}

impl PccsClient {
    pub fn new(base: &str, cache_dir: Option<PathBuf>) -> Self {
        PccsClient { pcs: PcsClient::new(base), cache_dir }
    }

    /// Collateral for `quote`: from the cache while valid, else fetched and cached.
    pub async fn collateral_for(&self, quote: &[u8]) -> Result<String, ClientError> {
        let (fmspc, ca) = pcs_query(quote).map_err(|e| ClientError::Malformed(e.to_string()))?;
        let cache = self.cache_dir.as_ref().map(|d| d.join(format!("collateral-{fmspc}-{ca}.json")));
        if let Some(text) = cache.as_ref().and_then(|p| std::fs::read_to_string(p).ok())
            && Collateral::from_json(&text)
                .ok()
                .and_then(|c| c.valid_until)
                .is_some_and(|t| t > shared::time::unix_now())
        {
            return Ok(text);
        }
        let text = self.pcs.fetch(&fmspc, ca).await.map_err(|e| match e {
            PcsError::Unreachable(base) => ClientError::RelayUnreachable(base),
            other => ClientError::Malformed(other.to_string()),
        })?;
        let text = text.to_json();
        if let Some(path) = cache {
            let _ = crate::private_file::write(&path, text.as_bytes());
        }
        Ok(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/test-vectors/dcap-qvl-samples");

    #[tokio::test]
    async fn fresh_cache_is_used_without_fetching() {
        let dir = tempfile::tempdir().unwrap();
        // A far-future dev collateral in the cache under the sample quote's FMSPC/CA name.
        let quote = std::fs::read(format!("{SAMPLES}/tdx_quote")).unwrap();
        let (fmspc, ca) = pcs_query(&quote).unwrap();
        let pki = dev_quote::DevPki::from_seed(&[1; 32]);
        let cached = String::from_utf8(pki.collateral(&dev_quote::CollateralOptions::default())).unwrap();
        std::fs::write(dir.path().join(format!("collateral-{fmspc}-{ca}.json")), &cached).unwrap();
        // Nothing listens on this port: any fetch would fail.
        let client = PccsClient::new("http://127.0.0.1:9", Some(dir.path().to_path_buf()));
        assert_eq!(client.collateral_for(&quote).await.unwrap(), cached);
    }
}
