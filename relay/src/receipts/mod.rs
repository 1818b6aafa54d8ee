//! Receipts: the log that commits each verified receipt, the writer that puts those commits on
//! the chain (`solana` ledger mode), and the public lookups.

pub mod commit_log;
pub mod ledger_writer;
pub mod log;
pub mod lookups;
pub mod outbox;

pub use commit_log::{CommitError, CommitLog, load_or_create_key};

/// The public lookups of receipts and of the transparency log, open to any origin.
pub fn routes() -> axum::Router<crate::state::App> {
    use axum::routing::get;
    axum::Router::new()
        .route("/attestation/by-hash/{hash}", get(lookups::by_hash))
        .route("/attestation/by-tx/{signature}", get(lookups::by_tx))
        .route("/attestation/{address}", get(lookups::by_address))
        .route("/attestation/{address}/ledger", get(lookups::ledger_status))
        .route("/log/v1/sth", get(log::routes::sth))
        .route("/log/v1/proof/inclusion", get(log::routes::inclusion))
        .route("/log/v1/proof/consistency", get(log::routes::consistency))
        .route("/log/v1/entries", get(log::routes::entries))
        .route("/log/v1/anchors", get(log::routes::anchors))
        .layer(axum::middleware::map_response(lookups::cors_open))
}
