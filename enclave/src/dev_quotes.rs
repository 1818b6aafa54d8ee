//! The development quote provider (feature `dev-quotes`): quotes signed by a seeded test PKI
//! through real DCAP structures, with their collateral. A client accepts them only when told
//! to trust this PKI's root (`svc --dev-root`); under Intel's root they fail.

use shared::dev_quote::{CollateralOptions, DevPki, QuoteVersion, TdReport};

use crate::attestation::QuoteProvider;
use crate::config::{ConfigError, DevQuotesConfig};
use crate::tsm::TsmError;

pub struct DevQuotes {
    pki: DevPki,
    template: TdReport,
    version: QuoteVersion,
    collateral: String,
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
        Ok(DevQuotes { pki, template, version, collateral })
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
        Some(self.collateral.clone())
    }
}
