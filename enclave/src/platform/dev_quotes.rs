//! The development quote provider (feature `dev-quotes`): quotes signed by a seeded test PKI
//! through real DCAP structures, with their collateral. A client accepts them only when told
//! to trust this PKI's root (`svc --dev-root`); under Intel's root they fail.

use std::path::PathBuf;

use dev_quote::{CollateralOptions, DevPki, QuoteVersion, TdReport};
use serde::Deserialize;

use crate::config::ConfigError;
use crate::platform::attestation::QuoteProvider;
use crate::platform::tsm::TsmError;

/// The dev quote provider's settings. Measurement defaults equal `measurements/dev.json`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DevQuotesConfig {
    /// 64 hex characters: the test PKI is derived from it.
    pub seed: String,
    /// 4 or 5.
    #[serde(default = "default_quote_version")]
    pub quote_version: u8,
    #[serde(default = "dev_mr::mrtd")]
    pub mrtd: String,
    #[serde(default = "dev_mr::rtmr0")]
    pub rtmr0: String,
    #[serde(default = "dev_mr::rtmr1")]
    pub rtmr1: String,
    #[serde(default = "dev_mr::rtmr2")]
    pub rtmr2: String,
    /// Where to write the dev root certificate (PEM) for clients' `--dev-root`.
    #[serde(default)]
    pub write_root_pem: Option<PathBuf>,
    /// `false`: quotes carry no collateral, as configfs-tsm's do, so clients (or the relay's
    /// `collateral.pccsUrl`) must fetch it; for testing that path without TDX hardware.
    #[serde(default = "yes")]
    pub collateral: bool,
}

fn yes() -> bool {
    true
}

fn default_quote_version() -> u8 {
    4
}

/// Placeholder measurements for dev quotes (`measurements/dev.json`): recognisable patterns,
/// never the values of a real image.
pub mod dev_mr {
    pub fn mrtd() -> String {
        "d0".repeat(48)
    }
    pub fn rtmr0() -> String {
        "d1".repeat(48)
    }
    pub fn rtmr1() -> String {
        "d2".repeat(48)
    }
    pub fn rtmr2() -> String {
        "d3".repeat(48)
    }
}

pub struct DevQuotes {
    pki: DevPki,
    template: TdReport,
    version: QuoteVersion,
    /// `None` when `devQuotes.collateral` is false.
    collateral: Option<String>,
}

fn hex_exact<const N: usize>(name: &str, text: &str) -> Result<[u8; N], ConfigError> {
    let mut out = [0u8; N];
    hex::decode_to_slice(text, &mut out)
        .map_err(|_| ConfigError::Invalid(format!("devQuotes.{name} must be {} hex characters", 2 * N)))?;
    Ok(out)
}

impl DevQuotes {
    pub fn new(config: &DevQuotesConfig) -> Result<Self, ConfigError> {
        let seed: [u8; 32] = hex_exact("seed", &config.seed)?;
        let version = match config.quote_version {
            4 => QuoteVersion::V4,
            5 => QuoteVersion::V5,
            v => {
                return Err(ConfigError::Invalid(format!("devQuotes.quoteVersion {v} is not 4 or 5")));
            }
        };
        let rtmr = [
            hex_exact("rtmr0", &config.rtmr0)?,
            hex_exact("rtmr1", &config.rtmr1)?,
            hex_exact("rtmr2", &config.rtmr2)?,
            [0; 48],
        ];
        let template = TdReport { mr_td: hex_exact("mrtd", &config.mrtd)?, rtmr, ..TdReport::default() };
        let pki = DevPki::from_seed(&seed);
        let collateral = String::from_utf8(pki.collateral(&CollateralOptions::default()))
            .map_err(|_| ConfigError::Invalid("dev collateral is not UTF-8".into()))?;
        if let Some(path) = &config.write_root_pem {
            std::fs::write(path, pki.root_cert_pem())
                .map_err(|e| ConfigError::Invalid(format!("devQuotes.writeRootPem {}: {e}", path.display())))?;
        }
        Ok(DevQuotes { pki, template, version, collateral: config.collateral.then_some(collateral) })
    }
}

impl QuoteProvider for DevQuotes {
    fn name(&self) -> &'static str {
        "dev"
    }

    fn quote(&self, report_data: &[u8; 64]) -> Result<Vec<u8>, TsmError> {
        let report = TdReport { report_data: *report_data, ..self.template };
        Ok(self.pki.quote(&report, self.version))
    }

    fn collateral(&self) -> Option<String> {
        self.collateral.clone()
    }
}
