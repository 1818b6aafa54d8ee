//! `GET /metrics`: the relay's counters in the Prometheus text exposition format 0.0.4,
//! hand-written over atomics (no metrics crate).
//!
//! What is counted, and only this: requests by route template, method and status, with a
//! latency histogram per route template (`requests`); usage rows completed or refunded and
//! x402 settlements (`billing`). Read at scrape time: each configured enclave up or down (by
//! its index, never its URL), the transparency log's size and whether the database answered.
//!
//! Labels hold only values from fixed sets (route templates, method names, status codes,
//! outcome words, enclave indices): never a raw path, a body, a key, an address or a URL, so
//! nothing a caller sends can reach a scrape, and the number of series stays bounded.

pub mod billing;
pub mod exposition;
pub mod gauges;
pub mod requests;
pub mod route;

pub use billing::Billing;
pub use requests::Requests;

/// Every counter the relay keeps; one per relay process, in the shared state.
#[derive(Debug, Default)]
pub struct Metrics {
    pub requests: Requests,
    pub billing: Billing,
}

/// `GET /metrics`.
pub fn routes() -> axum::Router<crate::state::App> {
    axum::Router::new().route("/metrics", axum::routing::get(route::handle))
}
