//! The deposit-watcher interface: something that sees confirmed stablecoin or service-token
//! transfers to the service and says which key each one funds. The ledger backend that
//! implements it comes later; the relay only needs the trait and the idempotent credit.

use std::future::Future;
use std::time::Duration;

use crate::billing::{self, Deposit};
use crate::store::Store;

/// A source of confirmed deposits. `poll` returns what it saw since it was last asked; it may
/// return a deposit again (crediting is idempotent by transaction signature).
pub trait DepositSource: Send {
    fn poll(&mut self) -> impl Future<Output = Result<Vec<Deposit>, String>> + Send;
}

/// Polls `source` every `interval` and credits what it reports, until the task is dropped.
pub async fn watch(mut source: impl DepositSource, store: Store, interval: Duration) {
    loop {
        match source.poll().await {
            Ok(deposits) => {
                for deposit in deposits {
                    match billing::credit_deposit(&store, &deposit, crate::unix_now()).await {
                        Ok(Some(after)) => tracing::info!(
                            key_id = %deposit.key_id, currency = %deposit.currency, amount = deposit.amount,
                            balance_after = after, "deposit credited"
                        ),
                        Ok(None) => {}
                        Err(e) => tracing::error!(error = %e, "deposit credit failed; will retry on the next poll"),
                    }
                }
            }
            Err(e) => tracing::warn!(error = %e, "deposit source failed"),
        }
        tokio::time::sleep(interval).await;
    }
}
