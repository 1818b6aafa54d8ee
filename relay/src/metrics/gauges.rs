//! What a scrape reads at the moment it is taken: each configured enclave up (its key is
//! held) or down, by its index in the configuration (never its URL), and the transparency
//! log's size, which also says whether the database answered.

use std::time::Duration;

use super::exposition::{Exposition, Kind};
use crate::state::AppState;

/// A scrape waits at most this long for the database, then reports it down.
const DATABASE_WAIT: Duration = Duration::from_secs(2);

/// `svc_enclave_up{enclave="<index>"}`: 1 while the relay holds the enclave's current key.
pub fn enclaves(app: &AppState, out: &mut Exposition) {
    out.family(
        "svc_enclave_up",
        "1 while the enclave at this index of the configuration answers, else 0.",
        Kind::Gauge,
    );
    for (index, member) in app.enclaves.members().iter().enumerate() {
        let index = index.to_string();
        out.sample("svc_enclave_up", &[("enclave", index.as_str())], u64::from(member.key().is_some()));
    }
}

/// `svc_tlog_size` (when the database answered) and `svc_database_up`.
pub async fn log_size(app: &AppState, out: &mut Exposition) {
    let size = tokio::time::timeout(DATABASE_WAIT, crate::receipts::log::read::size(app.store.pool())).await;
    let size = match size {
        Ok(Ok(n)) => Some(n),
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "metrics: the log size could not be read");
            None
        }
        Err(_) => {
            tracing::warn!("metrics: the database did not answer in time");
            None
        }
    };
    if let Some(n) = size {
        out.family("svc_tlog_size", "Leaves in the transparency log (receipts appended).", Kind::Gauge);
        out.sample("svc_tlog_size", &[], n);
    }
    out.family("svc_database_up", "1 when the database answered this scrape, else 0.", Kind::Gauge);
    out.sample("svc_database_up", &[], u64::from(size.is_some()));
}
