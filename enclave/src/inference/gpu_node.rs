//! GPU nodes prove themselves before they see a prompt (docs/gpu.md): the node's TDX quote,
//! bound to the TLS key the enclave pins and to a fresh nonce, and every GPU's NVIDIA evidence
//! for that nonce. A verdict is kept for `gpuReattestSecs` and dropped after a transport failure;
//! a node that fails gets no plaintext, and the request fails `502 gpu_not_attested`.

use std::time::{Duration, Instant};

use agent::model::{Endpoint, ModelClient};
use rand_core::{OsRng, RngCore};
use serde::Deserialize;
use shared::attest::{Measurements, Policy, TrustRoot};
use shared::gpu::node::{MAX_GPUS, NodeEvidence, NodePolicy, NodeVerdict};
use shared::gpu::{GpuPolicy, Verified};
use shared::wire::GpuNodeStatus;

use crate::config::ConfigError;

/// One GPU node in the measured configuration, named by its TLS key pin.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GpuNodeConfig {
    /// The node's TLS key, as its models' `tlsPinSha256` name it.
    pub tls_pin_sha256: String,
    /// The node image's reference values (the `measurements/*.json` schema).
    pub measurements: Measurements,
    /// GPUs the node must report, every one verified.
    pub gpus: usize,
    /// The firmware the GPUs may run and its golden measurements (`svc gpu-reference`).
    pub gpu: GpuPolicy,
    /// TCB statuses accepted for the node's quote.
    #[serde(default = "up_to_date")]
    pub allowed_tcb_statuses: Vec<String>,
    /// Development roots for the node's quote and GPUs: only a `dev-quotes` build knows the
    /// field, so the image's enclave trusts Intel's and NVIDIA's roots alone.
    #[cfg(feature = "dev-quotes")]
    #[serde(default)]
    pub dev_roots: Option<DevRoots>,
}

#[cfg(feature = "dev-quotes")]
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DevRoots {
    /// The dev quote PKI's root certificate, DER in hex (`tests/dev-quote`).
    pub tdx_root_der: String,
    /// SHA-256 of the dev GPU PKI root's SubjectPublicKeyInfo, hex (`tests/dev-gpu`).
    pub gpu_root_spki_sha256: String,
}

fn up_to_date() -> Vec<String> {
    vec!["UpToDate".into()]
}

impl GpuNodeConfig {
    pub fn pin(&self) -> Result<[u8; 32], ConfigError> {
        shared::receipt::decode_hex32(&self.tls_pin_sha256)
            .ok_or_else(|| ConfigError::Invalid("gpuNodes: tlsPinSha256 must be 64 lowercase hex".into()))
    }

    pub fn policy(&self) -> Result<NodePolicy, ConfigError> {
        if !(1..=MAX_GPUS).contains(&self.gpus) {
            return Err(ConfigError::Invalid(format!("gpuNodes: gpus must be 1 to {MAX_GPUS}")));
        }
        let mut policy = NodePolicy {
            tdx: Policy::new(TrustRoot::Intel, self.measurements.clone()),
            gpu: self.gpu.clone(),
            gpus: self.gpus,
        };
        policy.tdx.allowed_tcb_statuses = self.allowed_tcb_statuses.clone();
        #[cfg(feature = "dev-quotes")]
        if let Some(dev) = &self.dev_roots {
            let bad = |what: &str| ConfigError::Invalid(format!("gpuNodes: devRoots.{what} is malformed"));
            policy.tdx.root = TrustRoot::Dev(hex::decode(&dev.tdx_root_der).map_err(|_| bad("tdxRootDer"))?);
            let spki =
                shared::receipt::decode_hex32(&dev.gpu_root_spki_sha256).ok_or_else(|| bad("gpuRootSpkiSha256"))?;
            policy.gpu.device_root = shared::gpu::DeviceRoot::Dev(spki);
        }
        Ok(policy)
    }
}

/// Why a node was not trusted with a prompt (never says anything about the prompt).
#[derive(Debug, thiserror::Error)]
pub enum GateError {
    #[error("the GPU node did not answer its attestation: {0}")]
    Unanswered(agent::model::ModelError),
    #[error("the GPU node's attestation is not JSON of the expected shape")]
    Malformed,
    #[error("{0}")]
    Refused(#[from] shared::gpu::node::NodeError),
}

/// One node's gate: its policy and its last verdict.
pub struct NodeGate {
    pin: [u8; 32],
    policy: NodePolicy,
    reattest: Duration,
    /// Signatures over certificates and OCSP answers already checked.
    cache: Verified,
    /// The last verdict and when it was made: read by every request, held only to copy it.
    verdict: std::sync::Mutex<Option<(NodeVerdict, Instant)>>,
    /// Held while the node attests, so concurrent requests wait for one attestation.
    attesting: tokio::sync::Mutex<()>,
}

impl NodeGate {
    pub fn new(config: &GpuNodeConfig, reattest: Duration) -> Result<Self, ConfigError> {
        Ok(NodeGate {
            pin: config.pin()?,
            policy: config.policy()?,
            reattest,
            cache: Verified::default(),
            verdict: std::sync::Mutex::new(None),
            attesting: tokio::sync::Mutex::new(()),
        })
    }

    /// The node's verdict: the cached one while fresh, else a new attestation with a fresh
    /// nonce through `client` (the model's own pinned transport).
    pub async fn verdict(&self, client: &ModelClient, endpoint: &Endpoint) -> Result<NodeVerdict, GateError> {
        if let Some(verdict) = self.fresh() {
            return Ok(verdict);
        }
        let _attesting = self.attesting.lock().await;
        // Another request may have attested the node while this one waited.
        if let Some(verdict) = self.fresh() {
            return Ok(verdict);
        }
        let mut nonce = [0u8; 32];
        OsRng.fill_bytes(&mut nonce);
        let body = client.attestation(endpoint, &nonce).await.map_err(GateError::Unanswered)?;
        let evidence: NodeEvidence = serde_json::from_slice(&body).map_err(|_| GateError::Malformed)?;
        let now = shared::time::unix_now();
        let verdict = shared::gpu::node::verify(&evidence, &self.pin, &nonce, &self.policy, now, &self.cache)?;
        tracing::info!(node = %verdict.tls_spki_sha256, gpus = verdict.gpus.len(), "GPU node attested");
        *self.slot() = Some((verdict.clone(), Instant::now()));
        Ok(verdict)
    }

    /// The node as the attestation document shows it: its last verdict while fresh.
    pub fn status(&self, models: Vec<String>) -> GpuNodeStatus {
        GpuNodeStatus { models, tls_spki_sha256: hex::encode(self.pin), gpus: self.policy.gpus, verdict: self.fresh() }
    }

    /// Forget the verdict: the next request attests again (after a transport failure, the
    /// connection may have gone to whoever now answers on that address).
    pub fn forget(&self) {
        *self.slot() = None;
    }

    fn fresh(&self) -> Option<NodeVerdict> {
        self.slot().as_ref().filter(|(_, at)| at.elapsed() < self.reattest).map(|(v, _)| v.clone())
    }

    /// The verdict slot; a panic while it was held cannot leave it half-written (it is
    /// replaced whole), so a poisoned lock is taken as it is.
    fn slot(&self) -> std::sync::MutexGuard<'_, Option<(NodeVerdict, Instant)>> {
        self.verdict.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
