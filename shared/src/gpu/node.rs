//! A GPU node's attestation (notes/gpu.md §6): the node's agent answers `GET /attest?nonce=` with
//! its TDX quote and every GPU's evidence, and the enclave checks all of it before any plaintext
//! goes to that node.
//!
//! The binding, with `S` the SHA-256 of the node's TLS SubjectPublicKeyInfo (the key the
//! enclave pins and the session runs on) and `n` the enclave's fresh nonce:
//! - each GPU answers `g = SHA-256("svc-gpu-nonce-v1\0" ‖ S ‖ n)`, so a GPU report made for
//!   another node or another nonce does not verify;
//! - the node's quote carries `report_data = SHA-512("svc-gpu-node-v1\0" ‖ S ‖ n ‖ D)`, with
//!   `D` the digest of the GPU reports and chains, so the measured node image vouches that it
//!   holds the TLS key and collected exactly these reports now.
//!
//! The OCSP answers are not bound: NVIDIA signs them, so whoever carries them does not matter.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256, Sha512};

use super::{Evidence, GpuError, GpuPolicy, Verified};
use crate::attest::{self, Binding, Collateral, Verdict};
pub use crate::wire::NodeVerdict;

const GPU_NONCE_DOMAIN: &[u8] = b"svc-gpu-nonce-v1\0";
const NODE_BINDING_DOMAIN: &[u8] = b"svc-gpu-node-v1\0";
const EVIDENCE_DOMAIN: &[u8] = b"svc-gpu-evidence-v1\0";

/// The most GPUs one node may report (an HGX board has eight).
pub const MAX_GPUS: usize = 16;

/// The node agent's answer to `GET /attest?nonce=<64 hex>`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NodeEvidence {
    /// The node's TDX quote, hex.
    pub quote: String,
    /// dcap-qvl collateral JSON for the quote: Intel signs it, so the node may fetch it.
    pub collateral: String,
    pub gpus: Vec<GpuEvidence>,
}

/// One GPU's evidence as NVIDIA's tools give it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GpuEvidence {
    /// The SPDM request ‖ response, base64.
    pub report: String,
    /// PEM, leaf first.
    pub certificate_chain: String,
    /// DER `OCSPResponse`s for the chain, base64.
    #[serde(default)]
    pub ocsp: Vec<String>,
}

/// The nonce each GPU signs for the enclave's nonce `n` on the TLS key `tls_spki_sha256`.
pub fn gpu_nonce(tls_spki_sha256: &[u8; 32], nonce: &[u8; 32]) -> [u8; 32] {
    Sha256::new().chain_update(GPU_NONCE_DOMAIN).chain_update(tls_spki_sha256).chain_update(nonce).finalize().into()
}

/// What the GPU evidence digest covers: each report and chain, length-prefixed, in order.
pub fn evidence_digest<'a>(gpus: impl IntoIterator<Item = (&'a [u8], &'a [u8])>) -> [u8; 32] {
    let mut h = Sha256::new().chain_update(EVIDENCE_DOMAIN);
    for (report, chain) in gpus {
        for part in [report, chain] {
            h.update((part.len() as u64).to_be_bytes());
            h.update(part);
        }
    }
    h.finalize().into()
}

/// The `report_data` the node's quote must carry.
pub fn report_data(tls_spki_sha256: &[u8; 32], nonce: &[u8; 32], evidence_digest: &[u8; 32]) -> [u8; 64] {
    Sha512::new()
        .chain_update(NODE_BINDING_DOMAIN)
        .chain_update(tls_spki_sha256)
        .chain_update(nonce)
        .chain_update(evidence_digest)
        .finalize()
        .into()
}

/// What a node must prove: its image (TDX policy) and its GPUs (count and firmware).
#[derive(Debug, Clone)]
pub struct NodePolicy {
    pub tdx: attest::Policy,
    pub gpu: GpuPolicy,
    /// GPUs the node must report, all of them verified.
    pub gpus: usize,
}

/// Why a node is refused; the enclave answers `502 gpu_not_attested` with this as the reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NodeError {
    #[error("the node's evidence is malformed: {0}")]
    Malformed(&'static str),
    #[error("the node's TDX quote is refused: {0}")]
    Quote(String),
    #[error("the node reported {got} GPUs, the policy wants {expected}")]
    GpuCount { expected: usize, got: usize },
    #[error("GPU {index}: {error}")]
    Gpu { index: usize, error: GpuError },
    #[error("GPU {index} is the same device as an earlier one")]
    SameDevice { index: usize },
}

/// Checks a node's answer to nonce `nonce` on the TLS key `tls_spki_sha256` against `policy` at
/// `now`: the quote first (the image, then its binding of the key, the nonce and the GPU
/// evidence), then every GPU. Certificate and OCSP signatures seen before come from `cache`.
pub fn verify(
    evidence: &NodeEvidence,
    tls_spki_sha256: &[u8; 32],
    nonce: &[u8; 32],
    policy: &NodePolicy,
    now: u64,
    cache: &Verified,
) -> Result<NodeVerdict, NodeError> {
    let quote = hex::decode(&evidence.quote).map_err(|_| NodeError::Malformed("quote is not hex"))?;
    let collateral = Collateral::from_json(&evidence.collateral).map_err(|_| NodeError::Malformed("collateral"))?;
    if evidence.gpus.len() > MAX_GPUS {
        return Err(NodeError::Malformed("too many GPUs"));
    }
    let gpus = evidence
        .gpus
        .iter()
        .map(|g| {
            let report = crate::b64::decode(&g.report).map_err(|_| NodeError::Malformed("report is not base64"))?;
            let ocsp = g
                .ocsp
                .iter()
                .map(|r| crate::b64::decode(r).map_err(|_| NodeError::Malformed("OCSP response is not base64")))
                .collect::<Result<Vec<_>, _>>()?;
            Ok((report, g.certificate_chain.as_bytes(), ocsp))
        })
        .collect::<Result<Vec<_>, NodeError>>()?;
    let digest = evidence_digest(gpus.iter().map(|(report, chain, _)| (report.as_slice(), *chain)));

    let binding = Binding::ReportData(report_data(tls_spki_sha256, nonce, &digest));
    let document = attest::verify(
        &attest::Evidence { quote: &quote, collateral: &collateral, binding: Some(binding), nonce: None },
        &policy.tdx,
        now,
    );
    if document.verdict != Verdict::Accept {
        return Err(NodeError::Quote(document.reason.unwrap_or_else(|| "refused".into())));
    }
    if gpus.len() != policy.gpus {
        return Err(NodeError::GpuCount { expected: policy.gpus, got: gpus.len() });
    }
    let gpu_nonce = gpu_nonce(tls_spki_sha256, nonce);
    let verdicts = gpus
        .iter()
        .enumerate()
        .map(|(index, (report, chain, ocsp))| {
            let evidence = Evidence { report, certificate_chain: chain, ocsp };
            super::verify(&evidence, &gpu_nonce, &policy.gpu, now, cache)
                .map_err(|error| NodeError::Gpu { index, error })
        })
        .collect::<Result<Vec<_>, _>>()?;
    // One good GPU's evidence repeated would otherwise stand for GPUs in devtools mode.
    if let Some(index) = (1..verdicts.len()).find(|&i| verdicts[..i].iter().any(|v| v.device == verdicts[i].device)) {
        return Err(NodeError::SameDevice { index });
    }
    Ok(NodeVerdict {
        tls_spki_sha256: hex::encode(tls_spki_sha256),
        quote_sha256: hex::encode(Sha256::digest(&quote)),
        evidence_digest: hex::encode(digest),
        trust_root: document.trust_root,
        tcb_status: document.tcb_status,
        device_root: policy.gpu.device_root.label(),
        gpus: verdicts,
        verified_at: now,
    })
}
