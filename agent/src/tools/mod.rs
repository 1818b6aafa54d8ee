//! The five tools of encrypted mode and the upstreams they call.
//!
//! Upstreams (base URL and the name of the environment variable that holds a credential) come
//! from configuration; nothing has a built-in default, so the configuration lists every host a
//! binary may call.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;
use zeroize::Zeroizing;

use crate::tool::{ToolError, ToolSpec, read_specs};

pub mod http;
pub mod solana_balance;
pub mod swap_quote;
pub mod token_price;
pub mod trending_tokens;
pub mod web_search;

/// The five tools of encrypted mode (contract §2.4), in registration order.
pub const PRIVATE_TOOL_NAMES: [&str; 5] =
    ["web_search", "token_price", "trending_tokens", "swap_quote", "solana_balance"];

/// What the model is told about the five tools (`specs.json`).
pub fn specs() -> Vec<ToolSpec> {
    read_specs(include_str!("specs.json"))
}

/// The `tools` section of the enclave configuration (the relay extends it).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolsConfig {
    /// Provider id → upstream. Provider ids: `brave`, `jupiter`, `coingecko`, `solanaRpc`,
    /// `deepwiki`, `colosseum`, `paysh`, `github`, `notion`.
    #[serde(default)]
    pub upstreams: BTreeMap<String, UpstreamConfig>,
    #[serde(default = "default_timeout_secs")]
    pub timeout_secs: u64,
    #[serde(default = "default_max_output_bytes")]
    pub max_output_bytes: usize,
}

impl Default for ToolsConfig {
    fn default() -> Self {
        ToolsConfig {
            upstreams: BTreeMap::new(),
            timeout_secs: default_timeout_secs(),
            max_output_bytes: default_max_output_bytes(),
        }
    }
}

fn default_timeout_secs() -> u64 {
    20
}
fn default_max_output_bytes() -> usize {
    16 * 1024
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UpstreamConfig {
    /// Base URL, no trailing slash needed.
    pub base_url: String,
    /// Environment variable holding the credential, read once at start.
    #[serde(default)]
    pub api_key_env: Option<String>,
}

/// A resolved upstream: where to call and with which credential.
#[derive(Clone)]
pub struct Upstream {
    pub base_url: String,
    pub api_key: Option<Zeroizing<String>>,
    /// No credential yet because the enclave is waiting for its secrets bundle.
    pub awaiting_bundle: bool,
}

impl Upstream {
    /// `base_url` + `path` (which starts with `/`).
    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base_url.trim_end_matches('/'), path)
    }

    /// The credential `tool` needs, or why there is none.
    pub fn credential(&self, tool: &'static str) -> Result<&str, ToolError> {
        match (&self.api_key, self.awaiting_bundle) {
            (Some(key), _) => Ok(key.as_str()),
            (None, true) => Err(ToolError::NotProvisioned(tool)),
            (None, false) => Err(ToolError::NotConfigured(tool)),
        }
    }
}

impl std::fmt::Debug for Upstream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Upstream")
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

/// What a tool gets at construction.
#[derive(Clone)]
pub struct ToolContext {
    /// For configured upstreams: web PKI roots, the tool timeout, no redirects.
    pub http: reqwest::Client,
    pub upstreams: BTreeMap<String, Upstream>,
}

impl ToolContext {
    /// Resolves credentials from the environment once; an unset variable means "no credential".
    pub fn from_config(config: &ToolsConfig) -> Self {
        let upstreams = config
            .upstreams
            .iter()
            .map(|(id, u)| {
                let api_key = u
                    .api_key_env
                    .as_deref()
                    .and_then(|var| std::env::var(var).ok())
                    .filter(|k| !k.is_empty())
                    .map(Zeroizing::new);
                (id.clone(), Upstream { base_url: u.base_url.clone(), api_key, awaiting_bundle: false })
            })
            .collect();
        ToolContext { http: upstream_client(Duration::from_secs(config.timeout_secs.max(1))), upstreams }
    }

    /// The enclave's tools: credentials come only from its secrets bundle (`None` until it is
    /// provisioned), keyed by provider id; the configuration's `apiKeyEnv` is not read.
    pub fn provisioned(config: &ToolsConfig, credentials: Option<&BTreeMap<String, Zeroizing<String>>>) -> Self {
        let upstreams = config
            .upstreams
            .iter()
            .map(|(id, u)| {
                let api_key = credentials.and_then(|c| c.get(id)).cloned();
                (id.clone(), Upstream { base_url: u.base_url.clone(), api_key, awaiting_bundle: credentials.is_none() })
            })
            .collect();
        ToolContext { http: upstream_client(Duration::from_secs(config.timeout_secs.max(1))), upstreams }
    }

    pub fn upstream(&self, provider: &str) -> Option<&Upstream> {
        self.upstreams.get(provider)
    }
}

/// An HTTP client that trusts the web PKI (compiled-in Mozilla roots, so the enclave needs
/// no system store) and never follows redirects: an API that redirects is misconfigured.
pub fn upstream_client(timeout: Duration) -> reqwest::Client {
    reqwest::Client::builder()
        .use_preconfigured_tls(chain::web_pki())
        .timeout(timeout)
        .connect_timeout(Duration::from_secs(10))
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(concat!("svc-agent/", env!("CARGO_PKG_VERSION")))
        .build()
        .expect("static reqwest configuration is valid")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `specs.json` describes the five tools, in registration order, with the bounds and
    /// defaults their code applies.
    #[test]
    fn the_specs_are_the_five_tools_with_their_bounds() {
        let specs = specs();
        let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, PRIVATE_TOOL_NAMES);
        let arg = |tool: &str, arg: &str| {
            specs.iter().find(|s| s.name == tool).unwrap().parameters["properties"][arg].clone()
        };
        let count = arg("web_search", "count");
        assert_eq!(count["maximum"], web_search::MAX_COUNT);
        assert_eq!(count["description"], format!("Number of results (default {}).", web_search::DEFAULT_COUNT));
        let limit = arg("trending_tokens", "limit");
        assert_eq!(limit["maximum"], trending_tokens::MAX_LIMIT);
        assert_eq!(limit["description"], format!("Number of coins (default {}).", trending_tokens::DEFAULT_LIMIT));
        let slippage = arg("swap_quote", "slippageBps");
        assert_eq!(slippage["maximum"], swap_quote::MAX_SLIPPAGE_BPS);
        let default = format!("(default {}).", swap_quote::DEFAULT_SLIPPAGE_BPS);
        assert!(slippage["description"].as_str().unwrap().ends_with(&default));
        let mints = arg("token_price", "mints");
        assert_eq!(mints["anyOf"][1]["maxItems"], token_price::MAX_MINTS);
        assert!(mints["description"].as_str().unwrap().starts_with(&format!("Up to {} ", token_price::MAX_MINTS)));
    }
}
