//! Receipts: the log that commits each verified receipt, the writer that puts those commits on
//! the chain (`solana` ledger mode), and the public lookups.

pub mod commit_log;
pub mod ledger_writer;
pub mod log;
pub mod lookups;
pub mod outbox;

use std::sync::Arc;

use axum::extract::FromRef;
use ed25519_dalek::SigningKey;

pub use commit_log::{CommitError, CommitLog, load_or_create_key};

use crate::config::RelayConfig;
use crate::state::App;
use crate::store::Store;

/// What the receipts subsystem holds, and all its routes and workers see.
pub struct Receipts {
    pub store: Store,
    pub commits: CommitLog,
    /// `solana` ledger mode: the writer that puts commits on the chain.
    pub ledger: Option<ledger_writer::LedgerWriter>,
    /// The transparency log of receipts (`/log/v1`).
    pub log: log::TransparencyLog,
}

impl FromRef<App> for Arc<Receipts> {
    fn from_ref(app: &App) -> Self {
        app.receipts.clone()
    }
}

impl Receipts {
    /// One key for commits, anchors and tree heads (docs/log.md "Keys").
    pub fn new(config: &RelayConfig, store: Store, key: SigningKey) -> Result<Receipts, String> {
        let program_id = config.program_id().map_err(|e| e.to_string())?;
        let log = log::TransparencyLog::new(key.clone(), store.clone(), config.log.clone());
        let ledger = ledger_writer::LedgerWriter::from_config(&config.ledger, key.clone(), program_id, store.clone())?;
        let commits = match ledger {
            Some(_) => CommitLog::new(key, program_id, store.clone()).queue_for_chain(),
            None => CommitLog::new(key, program_id, store.clone()),
        };
        Ok(Receipts { store, commits, ledger, log })
    }
}

/// Starts the anchoring of log heads and, in `solana` mode, the chain writer.
pub fn start(receipts: &Arc<Receipts>) {
    log::anchor::start(receipts);
    ledger_writer::start(receipts);
}

/// The public lookups of receipts and of the transparency log, open to any origin.
pub fn routes() -> axum::Router<App> {
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
