//! The node's answer to `GET /attest?nonce=n` (shared::gpu::node): every GPU reports for
//! `g = gpu_nonce(S, n)`, and the quote's `report_data` binds `S`, `n` and the digest of those
//! reports and chains, so the enclave knows this node, holding this TLS key, collected them now.

use std::sync::Arc;

use shared::gpu::node::{GpuEvidence, NodeEvidence, evidence_digest, gpu_nonce, report_data};

use crate::ocsp::Stapler;

/// One GPU's evidence as the GPU gives it.
#[derive(Debug, Clone)]
pub struct GpuReport {
    /// The SPDM GET_MEASUREMENTS request ‖ response.
    pub report: Vec<u8>,
    /// PEM, leaf first.
    pub certificate_chain: String,
}

/// The node's GPUs. Blocking: a report takes the GPU's firmware some tens of milliseconds.
pub trait Gpus: Send + Sync {
    /// Every GPU's report answering `nonce`, always in the same order.
    fn reports(&self, nonce: &[u8; 32]) -> Result<Vec<GpuReport>, NodeError>;
}

/// The node's TDX quotes. Blocking: the kernel makes one quote at a time.
pub trait Quotes: Send + Sync {
    fn quote(&self, report_data: &[u8; 64]) -> Result<Vec<u8>, NodeError>;
}

/// Where the quote's collateral comes from: Intel signs it, so the node may fetch it.
pub enum Collateral {
    /// Intel's PCS or the operator's PCCS, cached until the collateral's `nextUpdate`.
    Pcs(pcs::CachedPcs),
    /// One fixed collateral set (development quotes).
    Fixed(String),
}

#[derive(Debug, thiserror::Error)]
pub enum NodeError {
    #[error("GPU evidence: {0}")]
    Gpu(String),
    #[error("TDX quote: {0}")]
    Quote(String),
    #[error("collateral: {0}")]
    Collateral(String),
}

/// Everything `/attest` needs.
pub struct Attester {
    pub gpus: Arc<dyn Gpus>,
    pub quotes: Arc<dyn Quotes>,
    pub collateral: Collateral,
    pub ocsp: Stapler,
    /// One collection at a time: GPUs and the TSM serialise anyway, and a flood of `/attest`
    /// calls must not pile up blocking threads.
    collecting: tokio::sync::Mutex<()>,
}

impl Attester {
    pub fn new(gpus: Arc<dyn Gpus>, quotes: Arc<dyn Quotes>, collateral: Collateral, ocsp: Stapler) -> Self {
        Attester { gpus, quotes, collateral, ocsp, collecting: tokio::sync::Mutex::new(()) }
    }

    /// The answer to `nonce` of the node whose TLS key's SubjectPublicKeyInfo hashes to `pin`.
    pub async fn evidence(&self, pin: &[u8; 32], nonce: &[u8; 32]) -> Result<NodeEvidence, NodeError> {
        let _one = self.collecting.lock().await;
        let gpus = self.gpus.clone();
        let asked = gpu_nonce(pin, nonce);
        let reports = blocking(move || gpus.reports(&asked)).await?;
        let digest = evidence_digest(reports.iter().map(|r| (r.report.as_slice(), r.certificate_chain.as_bytes())));
        let quotes = self.quotes.clone();
        let bound = report_data(pin, nonce, &digest);
        let quote = blocking(move || quotes.quote(&bound)).await?;
        let collateral = match &self.collateral {
            Collateral::Pcs(pcs) => pcs
                .collateral_for(&quote, shared::time::unix_now())
                .await
                .map_err(|e| NodeError::Collateral(e.to_string()))?
                .to_string(),
            Collateral::Fixed(json) => json.clone(),
        };
        let mut gpus = Vec::with_capacity(reports.len());
        for r in reports {
            let ocsp = self.ocsp.staple(&r.certificate_chain).await;
            gpus.push(GpuEvidence {
                report: shared::b64::encode(&r.report),
                certificate_chain: r.certificate_chain,
                ocsp: ocsp.iter().map(shared::b64::encode).collect(),
            });
        }
        Ok(NodeEvidence { quote: hex::encode(quote), collateral, gpus })
    }
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, NodeError> + Send + 'static,
) -> Result<T, NodeError> {
    tokio::task::spawn_blocking(f).await.map_err(|e| NodeError::Gpu(format!("collection task failed: {e}")))?
}
