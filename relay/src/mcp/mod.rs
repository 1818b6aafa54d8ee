//! The MCP server at `/mcp/v1` (contract §4.4; docs/mcp.md): Streamable HTTP (rmcp), stateless
//! JSON, with the thirteen tools of contract §4.4.
//!
//! Each tool is a call of one public route, dispatched inside the relay through the same
//! router, with the caller's `Authorization` header (and, for the x402 tool, its payment): the
//! routes' own checks, prices and errors apply unchanged, and a route's refusal comes back as
//! an MCP tool error carrying the contract's code, never as a transport failure. The MCP server
//! holds no key and sees no plaintext: `private_inference_paid` takes an `encryptedPrompt`.

mod call;
mod tools;

use std::sync::Arc;

use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

pub use tools::{TOOL_NAMES, Tools};

/// The service to nest at `/mcp/v1`: tools dispatch into `api` (the relay's routes).
pub fn service(
    api: axum::Router,
    public_url: &str,
    extra_hosts: &[String],
) -> StreamableHttpService<Tools, LocalSessionManager> {
    let mut hosts: Vec<String> = vec!["localhost".into(), "127.0.0.1".into(), "::1".into()];
    if let Some(authority) = public_url.split("://").nth(1).map(|rest| rest.split('/').next().unwrap_or_default()) {
        hosts.push(authority.to_string());
        if let Some((host, _port)) = authority.rsplit_once(':') {
            hosts.push(host.to_string());
        }
    }
    hosts.extend(extra_hosts.iter().cloned());
    let mut config = StreamableHttpServerConfig::default().with_allowed_hosts(hosts);
    // Stateless: no session lives in one relay's memory, so any relay answers any call.
    config.legacy_session_mode = false;
    config.json_response = true;
    StreamableHttpService::new(move || Ok(Tools::new(api.clone())), Arc::new(LocalSessionManager::default()), config)
}
