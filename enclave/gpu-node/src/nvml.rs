//! GPU evidence through NVIDIA's NVML (`libnvidia-ml.so`, loaded when the agent starts):
//! `nvmlDeviceGetConfComputeGpuAttestationReport` with the nonce, and the attestation
//! certificate chain (PEM, leaf first) from `nvmlDeviceGetConfComputeGpuCertificate`, for every
//! GPU in NVML's order. Whether a GPU is in CC mode is not asked: NVML's answer is not signed,
//! and the enclave learns it from the signed measurements.
//!
//! Not run on this project's machines (they have no GPU); docs/gpu.md says what was checked.

use nvml_wrapper::Nvml;

use crate::attest::{GpuReport, Gpus, NodeError};

pub struct NvmlGpus {
    nvml: Nvml,
}

impl NvmlGpus {
    pub fn init() -> Result<Self, NodeError> {
        Ok(NvmlGpus { nvml: Nvml::init().map_err(|e| NodeError::Gpu(format!("NVML: {e}")))? })
    }
}

impl Gpus for NvmlGpus {
    fn reports(&self, nonce: &[u8; 32]) -> Result<Vec<GpuReport>, NodeError> {
        let nvml = |e: nvml_wrapper::error::NvmlError| NodeError::Gpu(format!("NVML: {e}"));
        let count = self.nvml.device_count().map_err(nvml)?;
        (0..count)
            .map(|i| {
                let device = self.nvml.device_by_index(i).map_err(nvml)?;
                let report = device.confidential_compute_gpu_attestation_report(*nonce).map_err(nvml)?;
                let certificate = device.confidential_compute_gpu_certificate().map_err(nvml)?;
                let chain = String::from_utf8(certificate.attestation_cert_chain)
                    .map_err(|_| NodeError::Gpu(format!("GPU {i}: the attestation chain is not PEM text")))?;
                Ok(GpuReport {
                    report: report.attestation_report,
                    certificate_chain: chain.trim_end_matches('\0').to_string(),
                })
            })
            .collect()
    }
}
