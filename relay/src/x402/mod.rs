//! x402 pay-per-call (contract §5.2). SKELETON: interface fixed, body to be written.

use serde::Deserialize;

/// The `x402` section of the relay configuration.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
pub struct X402Config {
    /// Facilitator base URL (`/verify`, `/settle`, `/supported`); none = x402 off.
    pub facilitator_url: Option<String>,
}

/// The x402 state a relay holds.
pub struct X402 {
    pub config: X402Config,
}

impl X402 {
    pub fn new(config: &X402Config) -> Self {
        X402 { config: config.clone() }
    }
}
