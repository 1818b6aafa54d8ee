//! DEVELOPMENT GPUs and quotes (feature `dev`): the seeded development PKIs of `tests/dev-gpu`
//! and `tests/dev-quote`, re-issuing a real H100 report for each nonce, so the agent runs end to
//! end on a machine without a GPU or a TDX host. Only an enclave built with `dev-quotes` and
//! told both development roots accepts what they sign.

use dev_gpu::node::DevNode;
use dev_quote::{CollateralOptions, QuoteVersion, TdReport};
use shared::attest::Measurements;

use crate::attest::{GpuReport, Gpus, NodeError, Quotes};

/// A development board: its quote PKI, its GPUs and the node image's measurements.
pub struct DevBoard {
    node: DevNode,
    image: Measurements,
}

impl DevBoard {
    pub fn new(tdx_seed: &[u8; 32], gpu_seed: &[u8; 32], gpus: u8, template: Vec<u8>, image: Measurements) -> Self {
        DevBoard { node: DevNode::new(tdx_seed, gpu_seed, gpus, template), image }
    }

    /// The collateral for this board's quotes.
    pub fn collateral(&self) -> String {
        String::from_utf8(self.node.tdx.collateral(&CollateralOptions::default())).expect("dev collateral is JSON")
    }

    /// Every GPU's OCSP answers, produced at `at` (what the OCSP stand-in serves).
    pub fn ocsp_answers(&self, at: u64) -> Vec<Vec<u8>> {
        self.node.gpus.iter().flat_map(|g| g.ocsp(at)).collect()
    }
}

impl Gpus for DevBoard {
    fn reports(&self, nonce: &[u8; 32]) -> Result<Vec<GpuReport>, NodeError> {
        Ok((0..self.node.gpus.len())
            .map(|i| GpuReport {
                report: self.node.report(i, nonce, None),
                certificate_chain: self.node.gpus[i].certificate_chain_pem(),
            })
            .collect())
    }
}

impl Quotes for DevBoard {
    fn quote(&self, report_data: &[u8; 64]) -> Result<Vec<u8>, NodeError> {
        let (image, rtmr0) = match (self.image.images.first(), self.image.rtmr0.first()) {
            (Some(image), Some(rtmr0)) => (image, rtmr0),
            _ => return Err(NodeError::Quote("the development measurements name no image".into())),
        };
        let td = TdReport {
            mr_td: image.mrtd,
            rtmr: [rtmr0.value, image.rtmr1, image.rtmr2, [0; 48]],
            report_data: *report_data,
            ..TdReport::default()
        };
        Ok(self.node.tdx.quote(&td, QuoteVersion::V4))
    }
}
