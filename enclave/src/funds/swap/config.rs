//! The `swaps` section of the enclave configuration (measured), and the rule for the upstreams
//! it names.

use serde::Deserialize;

/// The `swaps` section of the enclave configuration (measured).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SwapsConfig {
    /// Solana JSON-RPC: the enclave's own view of the chain.
    pub rpc_url: String,
    /// A router speaking Jupiter's wire (quotes at `/swap/v1/quote`).
    pub router_url: String,
    /// How the router's swap is asked for and checked (docs/swaps.md "The router check").
    #[serde(default)]
    pub router_api: RouterApi,
    /// `swap` only: programs a router transaction may call besides token, associated-token and
    /// compute-budget (base58); none of them may name the session key.
    #[serde(default)]
    pub router_programs: Vec<String>,
    #[serde(default = "default_timeout_secs")]
    pub timeout_secs: u64,
    /// Managed wallets' pool: blocks after a boot first wants to sign before it signs anything
    /// (crate::funds::pool; 151 covers every transaction an earlier boot signed).
    #[serde(default = "default_quiet_blocks")]
    pub payout_quiet_blocks: u64,
    /// Managed wallets' pool: the smallest amount (base units) an encrypt, a withdrawal or a
    /// shield moves, per mint (base58); other mints take `defaultMinAmount`. Books then grow
    /// only with holders of real value (DESIGN §13).
    #[serde(default)]
    pub min_amounts: std::collections::HashMap<String, u64>,
    #[serde(default = "default_min_amount")]
    pub default_min_amount: u64,
    /// A one-shot session's `minOut` must be at least the router's quote now less this: the
    /// relay sets the terms, so this is all it can take from a swap (DESIGN §13).
    #[serde(default = "default_oneshot_max_slippage_bps")]
    pub oneshot_max_slippage_bps: u16,
}

/// `build`: Jupiter's Swap API v2 (`GET /swap/v2/build`); the enclave compiles the instructions
/// and signs only what `swap_check::jupiter` accepts. `swap`: a router whose `POST
/// /swap/v1/swap` returns a whole transaction of plain token transfers, co-signed by its pool
/// (the development stand-in; `swap_check::check_swap`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum RouterApi {
    #[default]
    Build,
    Swap,
}

fn default_oneshot_max_slippage_bps() -> u16 {
    1_000
}

fn default_min_amount() -> u64 {
    1_000
}

fn default_quiet_blocks() -> u64 {
    crate::funds::pool::DEFAULT_QUIET_BLOCKS
}

fn default_timeout_secs() -> u64 {
    20
}

/// An upstream the enclave may trust for the chain or the router: https, or plain http to a
/// literal loopback address (a node on the same host, in development). Anything else could be
/// answered by whoever sits on the path, the host included (DESIGN §13).
pub(super) fn tls_or_loopback(url: &str) -> bool {
    if url.starts_with("https://") {
        return true;
    }
    let Some(rest) = url.strip_prefix("http://") else { return false };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host = match authority.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or_default(),
        None => authority.rsplit_once(':').map_or(authority, |(h, _)| h),
    };
    host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    #[test]
    fn upstreams_are_tls_or_literal_loopback() {
        let rows = [
            ("https://api.mainnet-beta.solana.com", true),
            ("http://127.0.0.1:8899", true),
            ("http://127.9.9.9/rpc", true),
            ("http://[::1]:8899", true),
            ("http://localhost:8899", false),
            ("http://10.0.2.2:8899", false),
            ("http://127.0.0.1.evil.example:80", false),
            ("ftp://127.0.0.1", false),
        ];
        for (url, ok) in rows {
            assert_eq!(super::tls_or_loopback(url), ok, "{url}");
        }
    }
}
