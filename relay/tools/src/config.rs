//! The `tools` section of the relay configuration: the enclave's section (upstreams and
//! limits) plus the limits of the tools that fetch a URL the model chose.

use std::collections::BTreeMap;

use agent::tools::UpstreamConfig;
use serde::Deserialize;

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolsConfig {
    /// Provider id → upstream. Provider ids: `brave`, `jupiter`, `coingecko`, `solanaRpc`,
    /// `deepwiki`, `colosseum`, `paysh`, `github`, `notion`.
    #[serde(default)]
    pub upstreams: BTreeMap<String, UpstreamConfig>,
    /// Limits of `scrape_url`, `crawl_url` and `paysh_call_api`.
    #[serde(default)]
    pub fetch: FetchConfig,
    #[serde(default = "default_timeout_secs")]
    pub timeout_secs: u64,
    #[serde(default = "default_max_output_bytes")]
    pub max_output_bytes: usize,
}

impl Default for ToolsConfig {
    fn default() -> Self {
        serde_json::from_str("{}").expect("every field has a default")
    }
}

impl ToolsConfig {
    /// The part the five shared tools read.
    pub fn shared(&self) -> agent::tools::ToolsConfig {
        agent::tools::ToolsConfig {
            upstreams: self.upstreams.clone(),
            timeout_secs: self.timeout_secs,
            max_output_bytes: self.max_output_bytes,
        }
    }
}

fn default_timeout_secs() -> u64 {
    agent::tools::ToolsConfig::default().timeout_secs
}
fn default_max_output_bytes() -> usize {
    agent::tools::ToolsConfig::default().max_output_bytes
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FetchConfig {
    #[serde(default = "default_fetch_max_bytes")]
    pub max_bytes: usize,
    #[serde(default = "default_fetch_max_redirects")]
    pub max_redirects: u32,
    #[serde(default = "default_fetch_timeout_secs")]
    pub timeout_secs: u64,
    /// Pages `crawl_url` visits at most.
    #[serde(default = "default_crawl_max_pages")]
    pub crawl_max_pages: usize,
    /// Exact `ip:port` pairs exempt from the private-address refusal (local test servers).
    /// Leave empty in production.
    #[serde(default)]
    pub allow: Vec<String>,
}

impl Default for FetchConfig {
    fn default() -> Self {
        FetchConfig {
            max_bytes: default_fetch_max_bytes(),
            max_redirects: default_fetch_max_redirects(),
            timeout_secs: default_fetch_timeout_secs(),
            crawl_max_pages: default_crawl_max_pages(),
            allow: Vec::new(),
        }
    }
}

fn default_fetch_max_bytes() -> usize {
    1024 * 1024
}
fn default_fetch_max_redirects() -> u32 {
    5
}
fn default_fetch_timeout_secs() -> u64 {
    15
}
fn default_crawl_max_pages() -> usize {
    10
}
