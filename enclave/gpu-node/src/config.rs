//! The agent's configuration: one JSON file, part of the node's measured image.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;

use crate::attest::{Attester, Collateral};
use crate::ocsp::{NVIDIA_OCSP_URL, Stapler};

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Config {
    /// Where the enclave connects, e.g. `0.0.0.0:8443`.
    pub listen: SocketAddr,
    /// The node's TLS key (PKCS#8 PEM), made on the first start. The SHA-256 of its
    /// SubjectPublicKeyInfo is what the enclave pins (`gpuNodes[].tlsPinSha256`).
    pub tls_key: PathBuf,
    /// The model server's `/v1` base URL, on the node itself.
    pub model_server: String,
    #[serde(default = "nvidia_ocsp")]
    pub ocsp_url: String,
    /// How long an OCSP answer is stapled before it is asked for again (NVIDIA's are current
    /// for a day; the enclave's `maxOcspAgeSecs` bounds what it takes).
    #[serde(default = "hour")]
    pub ocsp_refresh_secs: u64,
    /// Intel's PCS or the operator's PCCS, for the quote's collateral.
    #[serde(default)]
    pub pccs_url: Option<String>,
    /// configfs-tsm's report directory.
    #[serde(default = "tsm_root")]
    pub tsm_root: PathBuf,
    /// Development GPUs and quotes instead of NVML and configfs-tsm: only a build with the
    /// feature `dev` takes it.
    #[serde(default)]
    pub dev: Option<DevConfig>,
}

/// A development board (`dev.rs`).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DevConfig {
    /// 64 hex characters each.
    pub tdx_seed: String,
    pub gpu_seed: String,
    pub gpus: u8,
    /// The real report each development GPU re-issues.
    pub template: PathBuf,
    /// The node image's measurements (a `measurements.json`).
    pub measurements: PathBuf,
}

fn nvidia_ocsp() -> String {
    NVIDIA_OCSP_URL.into()
}
fn hour() -> u64 {
    3600
}
fn tsm_root() -> PathBuf {
    PathBuf::from(shared::tsm::DEFAULT_ROOT)
}

impl Config {
    pub fn read(path: &std::path::Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// The evidence sources this configuration names.
    pub fn attester(&self) -> Result<Attester, String> {
        let ocsp = Stapler::new(&self.ocsp_url, Duration::from_secs(self.ocsp_refresh_secs));
        if let Some(dev) = &self.dev {
            return dev_attester(dev, ocsp);
        }
        let pccs = self.pccs_url.as_deref().ok_or("pccsUrl is required: the quote's collateral comes from it")?;
        let collateral = Collateral::Pcs(pcs::CachedPcs::new(pcs::PcsClient::new(pccs)));
        let quotes = Arc::new(crate::quotes::Tsm::new(self.tsm_root.clone()));
        Ok(Attester::new(nvml_gpus()?, quotes, collateral, ocsp))
    }
}

#[cfg(feature = "nvml")]
fn nvml_gpus() -> Result<Arc<dyn crate::attest::Gpus>, String> {
    Ok(Arc::new(crate::nvml::NvmlGpus::init().map_err(|e| e.to_string())?))
}

#[cfg(not(feature = "nvml"))]
fn nvml_gpus() -> Result<Arc<dyn crate::attest::Gpus>, String> {
    Err("this build has no NVML (feature `nvml`)".into())
}

#[cfg(feature = "dev")]
fn dev_attester(dev: &DevConfig, ocsp: Stapler) -> Result<Attester, String> {
    let seed = |hex_seed: &str| -> Result<[u8; 32], String> {
        hex::decode(hex_seed).ok().and_then(|s| s.try_into().ok()).ok_or("a dev seed is 64 hex characters".into())
    };
    let template = std::fs::read(&dev.template).map_err(|e| format!("{}: {e}", dev.template.display()))?;
    let text =
        std::fs::read_to_string(&dev.measurements).map_err(|e| format!("{}: {e}", dev.measurements.display()))?;
    let image = shared::attest::Measurements::from_json(&text).map_err(|e| e.to_string())?;
    let board =
        Arc::new(crate::dev::DevBoard::new(&seed(&dev.tdx_seed)?, &seed(&dev.gpu_seed)?, dev.gpus, template, image));
    Ok(Attester::new(board.clone(), board.clone(), Collateral::Fixed(board.collateral()), ocsp))
}

#[cfg(not(feature = "dev"))]
fn dev_attester(_: &DevConfig, _: Stapler) -> Result<Attester, String> {
    Err("`dev` needs a build with the feature `dev`; a node image never has it".into())
}
