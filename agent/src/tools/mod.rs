//! The tools and the upstreams they call.
//!
//! Which tools a binary contains is a cargo feature: `private-tools` builds the five of
//! encrypted mode (the enclave builds only these), `all-tools` adds the thirteen of the
//! relay's plaintext path. Upstreams (base URL and the name of the environment variable that
//! holds a credential) come from configuration; nothing has a built-in default, so the
//! configuration lists every host a binary may call.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;
use zeroize::Zeroizing;

#[cfg(feature = "private-tools")]
mod http;
#[cfg(feature = "private-tools")]
pub mod solana_balance;
#[cfg(feature = "private-tools")]
pub mod swap_quote;
#[cfg(feature = "private-tools")]
pub mod token_price;
#[cfg(feature = "private-tools")]
pub mod trending_tokens;
#[cfg(feature = "private-tools")]
pub mod web_search;

#[cfg(feature = "all-tools")]
pub mod colosseum;
#[cfg(feature = "all-tools")]
pub mod crawl_url;
#[cfg(feature = "all-tools")]
pub mod deepwiki;
#[cfg(feature = "all-tools")]
pub mod github;
#[cfg(feature = "all-tools")]
pub mod notion;
#[cfg(feature = "all-tools")]
pub mod paysh;
#[cfg(feature = "all-tools")]
pub mod scrape_url;

/// The five tools of encrypted mode (contract §2.4), in registration order.
pub const PRIVATE_TOOL_NAMES: [&str; 5] =
    ["web_search", "token_price", "trending_tokens", "swap_quote", "solana_balance"];

/// All eighteen tools of the default path (contract §2.4), in registration order.
pub const ALL_TOOL_NAMES: [&str; 18] = [
    "web_search",
    "scrape_url",
    "crawl_url",
    "solana_balance",
    "token_price",
    "swap_quote",
    "trending_tokens",
    "deepwiki",
    "colosseum_search",
    "colosseum_archives",
    "paysh_search_apis",
    "paysh_call_api",
    "github_list_repos",
    "github_issues",
    "github_read_file",
    "notion_search",
    "notion_get_page",
    "notion_query_database",
];

/// The `tools` section of a relay or enclave configuration file.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolsConfig {
    /// Provider id → upstream. Provider ids: `brave`, `jupiter`, `coingecko`, `solanaRpc`,
    /// `deepwiki`, `colosseum`, `paysh`, `github`, `notion`.
    #[serde(default)]
    pub upstreams: BTreeMap<String, UpstreamConfig>,
    /// Limits of tools that fetch a URL the model chose (`scrape_url`, `crawl_url`, `paysh_call_api`).
    #[serde(default)]
    pub fetch: FetchConfig,
    #[serde(default = "default_timeout_secs")]
    pub timeout_secs: u64,
    #[serde(default = "default_max_output_bytes")]
    pub max_output_bytes: usize,
}

impl Default for ToolsConfig {
    fn default() -> Self {
        ToolsConfig {
            upstreams: BTreeMap::new(),
            fetch: FetchConfig::default(),
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

/// A resolved upstream: where to call and with which credential.
#[derive(Clone)]
pub struct Upstream {
    pub base_url: String,
    pub api_key: Option<Zeroizing<String>>,
}

impl Upstream {
    /// `base_url` + `path` (which starts with `/`).
    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base_url.trim_end_matches('/'), path)
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
    pub fetch: FetchConfig,
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
                (id.clone(), Upstream { base_url: u.base_url.clone(), api_key })
            })
            .collect();
        ToolContext {
            http: upstream_client(Duration::from_secs(config.timeout_secs.max(1))),
            upstreams,
            fetch: config.fetch.clone(),
        }
    }

    pub fn upstream(&self, provider: &str) -> Option<&Upstream> {
        self.upstreams.get(provider)
    }
}

/// An HTTP client that trusts the web PKI (compiled-in Mozilla roots, so the enclave needs
/// no system store) and never follows redirects: an API that redirects is misconfigured.
pub fn upstream_client(timeout: Duration) -> reqwest::Client {
    reqwest::Client::builder()
        .use_preconfigured_tls(web_pki_tls())
        .timeout(timeout)
        .connect_timeout(Duration::from_secs(10))
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(concat!("svc-agent/", env!("CARGO_PKG_VERSION")))
        .build()
        .expect("static reqwest configuration is valid")
}

/// The web PKI: compiled-in Mozilla roots, ring, safe default protocol versions.
pub(crate) fn web_pki_tls() -> rustls::ClientConfig {
    let roots = rustls::RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.to_vec() };
    rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .expect("ring supports the default protocol versions")
        .with_root_certificates(roots)
        .with_no_client_auth()
}
