//! The `x402` section of the relay configuration and its checked form.

use serde::Deserialize;
use shared::address::Address;

/// Mainnet USDC, the default `asset`.
pub const USDC_MAINNET: &str = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";

/// v1 Solana network names and their CAIP-2 ids (x402 v2), as the reference SDKs map them.
pub const NETWORKS: [(&str, &str); 3] = [
    ("solana", "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"),
    ("solana-devnet", "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1"),
    ("solana-testnet", "solana:4uhcVJyU9pJkvQyS88uRDiswHXSCkY3z"),
];

/// The `x402` section of the relay configuration (docs/billing.md, "x402"). x402 is on when
/// `payTo` is set with one facilitator: `facilitatorUrl` (any facilitator over HTTP) or
/// `rpcUrl` with `feePayerKeyFile` (the built-in one, settling on that chain).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct X402Config {
    /// Facilitator base URL (`/supported`, `/verify`, `/settle`).
    pub facilitator_url: Option<String>,
    /// The built-in facilitator's Solana JSON-RPC (instead of `facilitatorUrl`).
    pub rpc_url: Option<String>,
    /// The built-in facilitator's fee payer (Solana CLI keypair file); it pays network fees.
    pub fee_payer_key_file: Option<std::path::PathBuf>,
    /// The wallet (owner, base58) that receives payments; the transfer goes to its associated
    /// token account for `asset`.
    pub pay_to: Option<String>,
    /// The stablecoin mint (base58).
    pub asset: String,
    /// Decimals of `asset` (for `cost` in whole units).
    pub asset_decimals: u8,
    /// v1 network name: `solana`, `solana-devnet` or `solana-testnet`; v2 uses its CAIP-2 id.
    pub network: String,
    /// Price of one paid call, in base units of `asset`.
    pub price_per_call: u64,
    /// `maxTimeoutSeconds` of the offered requirements.
    pub max_timeout_seconds: u64,
    /// Per facilitator request.
    pub facilitator_timeout_secs: u64,
    /// The built-in facilitator's cap on what one payment's compute budget (unit limit × unit
    /// price) may make its fee payer pay beyond the signature fees, in lamports.
    pub max_priority_fee_lamports: u64,
}

impl Default for X402Config {
    fn default() -> Self {
        X402Config {
            facilitator_url: None,
            rpc_url: None,
            fee_payer_key_file: None,
            pay_to: None,
            asset: USDC_MAINNET.into(),
            asset_decimals: 6,
            network: "solana".into(),
            price_per_call: 5_000,
            max_timeout_seconds: 60,
            facilitator_timeout_secs: 20,
            max_priority_fee_lamports: 10_000,
        }
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum X402ConfigError {
    #[error("x402 needs x402.payTo and one facilitator: x402.facilitatorUrl, or x402.rpcUrl with x402.feePayerKeyFile")]
    Incomplete,
    #[error("x402.facilitatorUrl and x402.rpcUrl name two facilitators; set one")]
    TwoFacilitators,
    #[error("{0}")]
    BuiltIn(String),
    #[error("x402.facilitatorUrl must be an http or https URL")]
    BadFacilitatorUrl,
    #[error("x402.payTo is not a base58 32-byte address")]
    BadPayTo,
    #[error("x402.asset is not a base58 32-byte address")]
    BadAsset,
    #[error("x402.network must be one of solana, solana-devnet, solana-testnet")]
    BadNetwork,
    #[error("x402.pricePerCall must be above 0")]
    ZeroPrice,
    #[error("x402.maxTimeoutSeconds and x402.facilitatorTimeoutSecs must be above 0")]
    ZeroTimeout,
    #[error("x402.assetDecimals must be at most 18")]
    BadDecimals,
}

/// Which facilitator verifies and settles.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FacilitatorChoice {
    Url(String),
    BuiltIn { rpc_url: String, fee_payer_key_file: std::path::PathBuf, max_priority_fee_lamports: u64 },
}

impl FacilitatorChoice {
    /// How the manifest names it: the URL, or `builtin`.
    pub fn name(&self) -> String {
        match self {
            FacilitatorChoice::Url(url) => url.clone(),
            FacilitatorChoice::BuiltIn { .. } => "builtin".into(),
        }
    }
}

/// A checked configuration of an enabled x402 layer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    pub facilitator: FacilitatorChoice,
    pub pay_to: Address,
    pub asset: Address,
    pub asset_decimals: u8,
    /// v1 name.
    pub network: &'static str,
    /// CAIP-2 id (v2).
    pub caip2: &'static str,
    pub price: u64,
    pub max_timeout_seconds: u64,
    pub facilitator_timeout_secs: u64,
}

impl X402Config {
    /// `Ok(None)` when x402 is off (neither `facilitatorUrl` nor `payTo`).
    pub fn settings(&self) -> Result<Option<Settings>, X402ConfigError> {
        let asset = Address::parse(&self.asset).ok_or(X402ConfigError::BadAsset)?;
        let (network, caip2) =
            NETWORKS.iter().find(|(name, _)| *name == self.network).copied().ok_or(X402ConfigError::BadNetwork)?;
        if self.price_per_call == 0 {
            return Err(X402ConfigError::ZeroPrice);
        }
        if self.max_timeout_seconds == 0 || self.facilitator_timeout_secs == 0 {
            return Err(X402ConfigError::ZeroTimeout);
        }
        if self.asset_decimals > 18 {
            return Err(X402ConfigError::BadDecimals);
        }
        let facilitator = match (&self.facilitator_url, &self.rpc_url, &self.fee_payer_key_file) {
            (None, None, None) if self.pay_to.is_none() => return Ok(None),
            (Some(_), Some(_), _) => return Err(X402ConfigError::TwoFacilitators),
            (Some(url), None, _) => {
                let parsed = reqwest::Url::parse(url).map_err(|_| X402ConfigError::BadFacilitatorUrl)?;
                if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
                    return Err(X402ConfigError::BadFacilitatorUrl);
                }
                FacilitatorChoice::Url(url.trim_end_matches('/').to_string())
            }
            (None, Some(rpc_url), Some(file)) => FacilitatorChoice::BuiltIn {
                rpc_url: rpc_url.clone(),
                fee_payer_key_file: file.clone(),
                max_priority_fee_lamports: self.max_priority_fee_lamports,
            },
            _ => return Err(X402ConfigError::Incomplete),
        };
        let pay_to = self.pay_to.as_ref().ok_or(X402ConfigError::Incomplete)?;
        Ok(Some(Settings {
            facilitator,
            pay_to: Address::parse(pay_to).ok_or(X402ConfigError::BadPayTo)?,
            asset,
            asset_decimals: self.asset_decimals,
            network,
            caip2,
            price: self.price_per_call,
            max_timeout_seconds: self.max_timeout_seconds,
            facilitator_timeout_secs: self.facilitator_timeout_secs,
        }))
    }
}

impl Settings {
    /// The price in whole units of the asset (`cost` of a paid call): 5000 base units with 6
    /// decimals is 0.005.
    pub fn price_in_units(&self) -> f64 {
        self.price as f64 / 10f64.powi(i32::from(self.asset_decimals))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAY_TO: &str = "2wKupLR9q6wXYppw8Gr2NvWxKBUqm4PPJKkQfoxHDBg4";

    fn on() -> X402Config {
        X402Config {
            facilitator_url: Some("http://127.0.0.1:9/".into()),
            pay_to: Some(PAY_TO.into()),
            ..X402Config::default()
        }
    }

    #[test]
    fn defaults_are_off_and_mainnet_usdc() {
        let config: X402Config = serde_json::from_str("{}").unwrap();
        assert_eq!(config.settings(), Ok(None));
        assert_eq!(config.price_per_call, 5_000);
        assert_eq!(config.asset, USDC_MAINNET);
        assert_eq!(config.network, "solana");
        assert_eq!(config.max_timeout_seconds, 60);
    }

    #[test]
    fn enabled_settings_derive_the_caip2_id() {
        let s = on().settings().unwrap().unwrap();
        assert_eq!(s.facilitator, FacilitatorChoice::Url("http://127.0.0.1:9".into()));
        assert_eq!(s.caip2, "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp");
        assert_eq!(s.pay_to.to_string(), PAY_TO);
        assert_eq!(s.price_in_units(), 0.005);
        let devnet = X402Config { network: "solana-devnet".into(), ..on() }.settings().unwrap().unwrap();
        assert_eq!(devnet.caip2, "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1");
    }

    #[test]
    fn bad_configurations_are_refused() {
        let only_url = X402Config { pay_to: None, ..on() };
        assert_eq!(only_url.settings(), Err(X402ConfigError::Incomplete));
        let only_pay_to = X402Config { facilitator_url: None, ..on() };
        assert_eq!(only_pay_to.settings(), Err(X402ConfigError::Incomplete));
        let cases = [
            (X402Config { facilitator_url: Some("ftp://x".into()), ..on() }, X402ConfigError::BadFacilitatorUrl),
            (X402Config { facilitator_url: Some("not a url".into()), ..on() }, X402ConfigError::BadFacilitatorUrl),
            (X402Config { pay_to: Some("0OIl".into()), ..on() }, X402ConfigError::BadPayTo),
            (X402Config { asset: "abc".into(), ..on() }, X402ConfigError::BadAsset),
            (
                X402Config { network: "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp".into(), ..on() },
                X402ConfigError::BadNetwork,
            ),
            (X402Config { price_per_call: 0, ..on() }, X402ConfigError::ZeroPrice),
            (X402Config { max_timeout_seconds: 0, ..on() }, X402ConfigError::ZeroTimeout),
            (X402Config { asset_decimals: 30, ..on() }, X402ConfigError::BadDecimals),
        ];
        let built_in = X402Config {
            facilitator_url: None,
            rpc_url: Some("http://127.0.0.1:8899".into()),
            fee_payer_key_file: Some("fee-payer.json".into()),
            ..on()
        };
        assert_eq!(built_in.settings().unwrap().unwrap().facilitator.name(), "builtin");
        assert_eq!(
            X402Config { fee_payer_key_file: None, ..built_in.clone() }.settings(),
            Err(X402ConfigError::Incomplete)
        );
        assert_eq!(
            X402Config { facilitator_url: Some("http://127.0.0.1:9".into()), ..built_in }.settings(),
            Err(X402ConfigError::TwoFacilitators)
        );
        for (config, want) in cases {
            assert_eq!(config.settings(), Err(want));
        }
        assert!(serde_json::from_str::<X402Config>(r#"{"facilitator": "x"}"#).is_err(), "unknown fields are refused");
    }
}
