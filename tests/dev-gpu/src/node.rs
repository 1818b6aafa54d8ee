//! A development GPU node's answer to `GET /attest` (feature `node`): what an honest node agent
//! builds (docs/gpu.md), from the development quote PKI (`dev-quote`) and development GPUs, and
//! the ways a hostile node would change it. The stand-in node, the verifier's tests and its
//! bench all build evidence here, so they test the same bytes.

use dev_quote::{CollateralOptions, DevPki, QuoteVersion, TdReport};
use shared::attest::Measurements;
use shared::gpu::node::{GpuEvidence, NodeEvidence, evidence_digest, gpu_nonce, report_data};
use shared::gpu::{Firmware, Report};

use super::{DevGpu, ReportChanges};

/// A node: its quote PKI and its GPUs (numbered devices of one seed), re-issuing `template`.
pub struct DevNode {
    pub tdx: DevPki,
    pub gpus: Vec<DevGpu>,
    template: Vec<u8>,
}

/// How the node builds one answer; [`Answer::honest`] is what the protocol says.
#[derive(Debug, Clone, Copy)]
pub struct Answer {
    /// GPUs reported (the first ones of the node).
    pub gpus: usize,
    /// The TLS key and nonce the quote binds.
    pub quote_pin: [u8; 32],
    pub quote_nonce: [u8; 32],
    /// The nonce the GPU reports answer.
    pub gpu_nonce: [u8; 32],
    /// The GPU in NVIDIA's devtools mode: its SPDM measurement block 5 differs.
    pub devtools: Option<usize>,
    /// Another MRTD than the image's (another node image).
    pub mrtd: Option<[u8; 48]>,
    /// When NVIDIA's responder produced the stapled OCSP answers.
    pub ocsp_produced_at: u64,
}

impl Answer {
    /// The answer to `nonce` of the node whose TLS key hashes to `pin`, with `gpus` GPUs.
    pub fn honest(pin: &[u8; 32], nonce: &[u8; 32], gpus: usize, ocsp_produced_at: u64) -> Self {
        Answer {
            gpus,
            quote_pin: *pin,
            quote_nonce: *nonce,
            gpu_nonce: gpu_nonce(pin, nonce),
            devtools: None,
            mrtd: None,
            ocsp_produced_at,
        }
    }
}

impl DevNode {
    /// `devices` GPUs of `gpu_seed` and the quote PKI of `tdx_seed`; `template` is the real
    /// report each GPU re-issues (`DevGpu::report`).
    pub fn new(tdx_seed: &[u8; 32], gpu_seed: &[u8; 32], devices: u8, template: Vec<u8>) -> Self {
        DevNode {
            tdx: DevPki::from_seed(tdx_seed),
            gpus: (0..devices).map(|i| DevGpu::device(gpu_seed, i)).collect(),
            template,
        }
    }

    /// Device `i`'s report for `nonce`, with SPDM block `flip` changed.
    pub fn report(&self, i: usize, nonce: &[u8; 32], flip: Option<u8>) -> Vec<u8> {
        self.gpus[i]
            .report(&self.template, nonce, &ReportChanges { flip_measurement: flip })
            .expect("the template parses")
    }

    /// The node's answer: `image`'s measurements in a quote binding what `answer` says.
    pub fn evidence(&self, image: &Measurements, answer: &Answer) -> NodeEvidence {
        let devices = &self.gpus[..answer.gpus];
        let reports: Vec<Vec<u8>> = (0..answer.gpus)
            .map(|i| self.report(i, &answer.gpu_nonce, (answer.devtools == Some(i)).then_some(5)))
            .collect();
        let chains: Vec<String> = devices.iter().map(DevGpu::certificate_chain_pem).collect();
        let digest = evidence_digest(reports.iter().zip(&chains).map(|(r, c)| (r.as_slice(), c.as_bytes())));
        let gpus = reports
            .iter()
            .zip(chains)
            .zip(devices)
            .map(|((report, certificate_chain), device)| GpuEvidence {
                report: shared::b64::encode(report),
                certificate_chain,
                ocsp: device.ocsp(answer.ocsp_produced_at).iter().map(shared::b64::encode).collect(),
            })
            .collect();
        let td = TdReport {
            mr_td: answer.mrtd.unwrap_or(image.images[0].mrtd),
            rtmr: [image.rtmr0[0].value, image.images[0].rtmr1, image.images[0].rtmr2, [0; 48]],
            report_data: report_data(&answer.quote_pin, &answer.quote_nonce, &digest),
            ..TdReport::default()
        };
        NodeEvidence {
            quote: hex::encode(self.tdx.quote(&td, QuoteVersion::V4)),
            collateral: String::from_utf8(self.tdx.collateral(&CollateralOptions::default()))
                .expect("dev collateral is JSON"),
            gpus,
        }
    }

    /// The firmware every GPU of this node runs, with every measurement of the template pinned
    /// (RIM index = SPDM block − 1): the golden values a verifier's policy holds for it.
    pub fn firmware(&self) -> Firmware {
        let report = Report::parse(&self.template).expect("the template parses");
        let o = &report.opaque;
        Firmware {
            driver: o.driver.clone(),
            vbios: o.vbios.clone(),
            project: o.project.clone(),
            project_sku: o.project_sku.clone(),
            chip_sku: o.chip_sku.clone(),
            measurements: report.measurements.iter().map(|m| (m.index - 1, vec![hex::encode(&m.value)])).collect(),
            rims: vec![],
        }
    }

    /// The roots a verifier must be told: the quote PKI's root certificate (DER) and the SHA-256
    /// of the GPU root's public key.
    pub fn dev_roots(&self) -> (Vec<u8>, [u8; 32]) {
        (self.tdx.root_cert_der(), self.gpus[0].root_spki_sha256())
    }
}
