//! The node's TDX quote through configfs-tsm (`shared::tsm`, the enclave's own client).

use std::path::PathBuf;

use shared::tsm::{self, Retry, StdFs};

use crate::attest::{NodeError, Quotes};

pub struct Tsm {
    fs: StdFs,
}

impl Tsm {
    /// Quotes from configfs-tsm's report directory at `root` (`shared::tsm::DEFAULT_ROOT`).
    pub fn new(root: PathBuf) -> Self {
        Tsm { fs: StdFs { root } }
    }
}

impl Quotes for Tsm {
    fn quote(&self, report_data: &[u8; 64]) -> Result<Vec<u8>, NodeError> {
        tsm::get_quote(&self.fs, report_data, Retry::default()).map_err(|e| NodeError::Quote(e.to_string()))
    }
}
