//! Fetching a URL the model chose, without reaching anything private (SSRF guard).
//!
//! SKELETON: the interface is fixed; the body is to be written.
//! Rules: only http/https; the host is resolved here, every resolved address is checked
//! (loopback, private, link-local, unique-local, CGNAT, multicast, unspecified, broadcast,
//! documentation, and cloud metadata addresses such as 169.254.169.254 and fd00:ec2::254 are
//! refused), and the connection goes to the checked address only (no second lookup, so DNS
//! rebinding cannot swap it). Redirects are followed by hand, each hop checked the same way,
//! at most `max_redirects`. The body is read up to `max_bytes` and the whole fetch is bounded
//! by `timeout_secs`. `allow` lists exact `ip:port` pairs exempt from the refusal (local tests).

use crate::tool::ToolError;
use crate::tools::FetchConfig;

/// One request to a model-chosen URL.
pub struct FetchRequest<'a> {
    pub method: reqwest::Method,
    pub url: &'a str,
    pub headers: Vec<(String, String)>,
    pub body: Option<Vec<u8>>,
}

/// What came back.
#[derive(Debug, Clone)]
pub struct Fetched {
    /// The URL after redirects.
    pub final_url: String,
    pub status: u16,
    pub content_type: Option<String>,
    pub body: Vec<u8>,
    /// True when the body was cut at `max_bytes`.
    pub truncated: bool,
}

#[derive(Clone)]
pub struct GuardedFetch {
    config: FetchConfig,
}

impl GuardedFetch {
    pub fn new(config: &FetchConfig) -> Self {
        GuardedFetch { config: config.clone() }
    }

    pub async fn fetch(&self, request: FetchRequest<'_>) -> Result<Fetched, ToolError> {
        let _ = (&self.config, request);
        Err(ToolError::Refused("fetching is not written yet".into()))
    }
}
