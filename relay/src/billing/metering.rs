//! Who pays for a call, the charge taken before the work, and the guard that settles or gives
//! it back after.
//!
//! The charge is taken before the work starts (so concurrent calls can never overdraw) and is
//! held by a [`Held`] guard until the work ends: [`Held::settle`] when it succeeded and the
//! answer can still be delivered, [`Held::refund`] on any failure. A guard dropped without
//! either (a panic) refunds from a task of its own, so no usage row stays `pending` and no x402
//! reservation stays held. Callers run the work detached from the connection
//! ([`detached`]), so a client that goes away cannot stop billing half-way.

use std::future::Future;
use std::net::IpAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use axum::http::HeaderMap;
use serde::Serialize;
use shared::wire::Usage;
use sqlx::Row;

use super::balances::{self, BillingError, NewUsage};
use crate::accounts::Caller;
use crate::http::error::RelayError;
use crate::state::{App, AppState};
use crate::store::{Store, StoreError};
use crate::x402::{Settlement, VerifiedPayment, X402Error};

/// The currency prices are in unless a table of another currency says otherwise.
pub const CALL_CURRENCY: &str = "usdc";

/// Who pays.
#[derive(Debug, Clone)]
pub enum Payer {
    /// A key's prepaid balance.
    Key(Caller),
    /// An x402 payment in these request headers, for `resource` (its URL).
    X402 { headers: HeaderMap, resource: String },
    /// A guest's free message of the day.
    Guest(IpAddr),
}

impl Payer {
    /// An x402 payer from the request's payment headers (kept alone, so the payer can outlive
    /// the request); `None` when the request carries no payment.
    pub fn x402(headers: &HeaderMap, resource: String) -> Option<Payer> {
        let mut kept = HeaderMap::new();
        for name in [crate::x402::requirements::X_PAYMENT, crate::x402::requirements::PAYMENT_SIGNATURE] {
            if let Some(v) = headers.get(name) {
                kept.insert(name, v.clone());
            }
        }
        (!kept.is_empty()).then_some(Payer::X402 { headers: kept, resource })
    }
}

/// What a call costs, in the stablecoin; [`PriceTable`]s say what it costs in another currency.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Price {
    PerCall(u64),
    /// `per_million` base units per million tokens; the most a call can cost (`max_tokens` at
    /// that price) is taken first and the rest given back.
    PerToken {
        per_million: u64,
        max_tokens: u64,
    },
}

impl Price {
    fn up_front(self) -> u64 {
        match self {
            Price::PerCall(n) => n,
            Price::PerToken { per_million, max_tokens } => token_price(per_million, max_tokens),
        }
    }

    fn final_amount(self, usage: Usage) -> Option<i64> {
        match self {
            Price::PerCall(_) => None,
            Price::PerToken { per_million, .. } => {
                Some(i64::try_from(token_price(per_million, usage.total_tokens)).unwrap_or(i64::MAX))
            }
        }
    }
}

/// What the calls a key pays for cost in one currency other than the stablecoin
/// (configuration `currencyPrices`). A call without a price here is paid in the stablecoin.
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PriceTable {
    /// Catalog id → price per million tokens (chat completions).
    #[serde(default)]
    pub price_per_million_tokens: std::collections::BTreeMap<String, u64>,
    /// One `/agent` call.
    pub agent_price_per_call: Option<u64>,
    /// One `/tee/process` call.
    pub tee_process_price_per_call: Option<u64>,
}

impl PriceTable {
    /// `price` (in the stablecoin) of a call to `route` with `model`, in this table's currency.
    fn convert(&self, price: Price, route: &str, model: &str) -> Option<Price> {
        match price {
            Price::PerCall(_) => match route {
                "/agent" => self.agent_price_per_call.map(Price::PerCall),
                "/tee/process" => self.tee_process_price_per_call.map(Price::PerCall),
                _ => None,
            },
            Price::PerToken { max_tokens, .. } => {
                self.price_per_million_tokens.get(model).map(|&per_million| Price::PerToken { per_million, max_tokens })
            }
        }
    }
}

/// `price` in `currency`, when the call has a price in it.
pub fn price_in(app: &AppState, currency: &str, price: Price, usage: &NewUsage<'_>) -> Option<Price> {
    match currency {
        CALL_CURRENCY => Some(price),
        other => app.prices.other.get(other)?.convert(price, usage.route, usage.model),
    }
}

/// Base units for `tokens` at `per_million`, rounded up (a call is never free by rounding).
pub fn token_price(per_million: u64, tokens: u64) -> u64 {
    (u128::from(per_million) * u128::from(tokens)).div_ceil(1_000_000).try_into().unwrap_or(u64::MAX)
}

/// What was taken, to report (`billing`) and to settle or give back.
#[derive(Debug)]
pub enum Charge {
    /// Taken from a key's balance; `usage_id` is the pending usage row written with the debit
    /// (none for a call priced at zero).
    Balance {
        key_id: String,
        currency: &'static str,
        /// The price in `currency`; a per-token one decides the final amount.
        price: Price,
        amount: i64,
        balance_after: i64,
        usage_id: Option<String>,
    },
    FreeMessage {
        address: String,
        day: i64,
    },
    /// A verified x402 payment, reserved once; settled only after the work succeeds.
    X402(Box<VerifiedPayment>),
}

/// The `billing` object of a response.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct BillingReport {
    /// `key`, `free` or `x402`.
    pub method: &'static str,
    /// Base units, as a string (contract §4 convention).
    pub charged: String,
    pub currency: &'static str,
    pub balance_after: Option<String>,
}

impl Charge {
    pub fn report(&self) -> BillingReport {
        match self {
            Charge::Balance { amount, balance_after, currency, .. } => BillingReport {
                method: "key",
                charged: amount.to_string(),
                currency,
                balance_after: Some(balance_after.to_string()),
            },
            Charge::FreeMessage { .. } => {
                BillingReport { method: "free", charged: "0".into(), currency: CALL_CURRENCY, balance_after: None }
            }
            Charge::X402(p) => BillingReport {
                method: "x402",
                charged: p.amount().to_string(),
                currency: CALL_CURRENCY,
                balance_after: None,
            },
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ChargeError {
    #[error("insufficient balance")]
    Insufficient,
    #[error("this call has no price in `{0}`")]
    NoPriceIn(&'static str),
    #[error("no free messages left today")]
    FreeTrialExhausted,
    #[error("this route is paid with x402 and no payment was sent")]
    PaymentRequired,
    #[error(transparent)]
    X402(#[from] X402Error),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<sqlx::Error> for ChargeError {
    fn from(e: sqlx::Error) -> Self {
        ChargeError::Store(e.into())
    }
}

pub fn utc_day(now: i64) -> i64 {
    now.div_euclid(86_400)
}

/// Takes the charge of one call from `payer`, writing the usage row of a key's debit.
pub async fn charge(
    app: &AppState,
    payer: &Payer,
    price: Price,
    usage: NewUsage<'_>,
    now: i64,
) -> Result<Charge, ChargeError> {
    let store = &app.store;
    match payer {
        Payer::Key(caller) => {
            // The request's currency, else each currency in turn: the first balance that
            // covers the call pays.
            let requested = caller.currency.map(|c| vec![c]);
            let candidates = requested.clone().unwrap_or_else(|| crate::currency::CURRENCIES.to_vec());
            let mut priced = false;
            for currency in candidates {
                let Some(price) = price_in(app, currency, price, &usage) else { continue };
                priced = true;
                let amount = i64::try_from(price.up_front()).unwrap_or(i64::MAX);
                let key_id = caller.key_id.clone();
                if amount == 0 {
                    let balance_after = balance_of(store, &key_id, currency).await?;
                    return Ok(Charge::Balance { key_id, currency, price, amount, balance_after, usage_id: None });
                }
                match app.usage.charge(&key_id, currency, amount, usage, now).await {
                    Ok((balance_after, usage_id)) => {
                        let usage_id = Some(usage_id);
                        return Ok(Charge::Balance { key_id, currency, price, amount, balance_after, usage_id });
                    }
                    Err(BillingError::Insufficient) => continue,
                    Err(e) => return Err(store_error(e).into()),
                }
            }
            match (requested, priced) {
                (Some(c), false) => Err(ChargeError::NoPriceIn(c[0])),
                _ => Err(ChargeError::Insufficient),
            }
        }
        Payer::X402 { headers, resource } => match app.x402.verify(headers, resource, store).await? {
            Some(payment) => Ok(Charge::X402(Box::new(payment))),
            None => Err(ChargeError::PaymentRequired),
        },
        Payer::Guest(ip) => {
            let address = ip.to_string();
            let day = utc_day(now);
            let free_per_day = app.free_per_day;
            // One statement: insert the first use or count one more, never past the limit.
            let row = sqlx::query(
                "INSERT INTO free_trial (address, day, used) VALUES ($1, $2, 1) \
                 ON CONFLICT (address, day) DO UPDATE SET used = free_trial.used + 1 WHERE free_trial.used < $3 \
                 RETURNING used",
            )
            .bind(&address)
            .bind(day)
            .bind(i64::from(free_per_day))
            .fetch_optional(store.pool())
            .await?;
            match row {
                Some(_) if free_per_day > 0 => Ok(Charge::FreeMessage { address, day }),
                Some(_) => {
                    // A limit of zero: the first insert slipped through the upsert; undo it.
                    refund_free(store, &address, day).await?;
                    Err(ChargeError::FreeTrialExhausted)
                }
                None => Err(ChargeError::FreeTrialExhausted),
            }
        }
    }
}

/// A charge held while the work runs. Settle or refund it; dropping it refunds.
struct Held {
    charge: Option<Charge>,
    app: App,
}

impl Held {
    fn new(app: App, charge: Charge) -> Self {
        Held { charge: Some(charge), app }
    }

    /// The work succeeded: records its tokens, keeps the final amount (per-token prices give
    /// back the rest) or settles the x402 payment. Returns the report and, for x402, the
    /// settlement to attach. A refused settlement means nothing may be delivered.
    async fn settle(mut self, usage: Usage) -> Result<(BillingReport, Option<Settlement>), RelayError> {
        let Some(mut charge) = self.charge.take() else { return Err(RelayError::Internal("a charge settled twice")) };
        let now = crate::unix_now();
        match &mut charge {
            Charge::Balance { usage_id: Some(id), amount, balance_after, price, .. } => {
                let final_amount = price.final_amount(usage);
                let result =
                    self.app.usage.complete(id, usage.prompt_tokens, usage.completion_tokens, final_amount, now).await;
                match result {
                    Ok(charged) => {
                        self.app.metrics.billing.usage_completed();
                        *balance_after += *amount - charged;
                        *amount = charged;
                    }
                    Err(e) => {
                        // The row stays pending only if this store failed too; refund it.
                        refund_charge(&self.app, &charge, now).await;
                        return Err(store_error(e).into());
                    }
                }
            }
            Charge::Balance { usage_id: None, .. } | Charge::FreeMessage { .. } => {}
            Charge::X402(payment) => {
                let settled = self.app.x402.settle(payment, &self.app.store).await;
                self.app.metrics.billing.x402_settlement(settled.is_ok());
                return Ok((charge.report(), Some(settled?)));
            }
        }
        Ok((charge.report(), None))
    }

    /// The work failed, or its answer cannot be delivered: gives the whole charge back.
    async fn refund(mut self) {
        if let Some(charge) = self.charge.take() {
            refund_charge(&self.app, &charge, crate::unix_now()).await;
        }
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        if let Some(charge) = self.charge.take() {
            let app = self.app.clone();
            tracing::warn!("a held charge was dropped unsettled; refunding it");
            tokio::spawn(async move { refund_charge(&app, &charge, crate::unix_now()).await });
        }
    }
}

/// Gives a charge back. Logged, never fatal: the caller already has an error to read.
async fn refund_charge(app: &AppState, charge: &Charge, now: i64) {
    let result = match charge {
        Charge::Balance { usage_id: None, .. } => Ok(()),
        Charge::Balance { usage_id: Some(id), .. } => match balances::refund_usage(&app.store, id, now).await {
            Ok(refunded) => {
                if refunded {
                    app.metrics.billing.usage_refunded();
                }
                Ok(())
            }
            Err(e) => Err(store_error(e)),
        },
        Charge::FreeMessage { address, day } => refund_free(&app.store, address, *day).await,
        Charge::X402(payment) => {
            app.x402.release(payment, &app.store).await;
            Ok(())
        }
    };
    if let Err(e) = result {
        tracing::error!(error = %e, "refund failed");
    }
}

/// Tells detached work whether the client that asked for it is still waiting.
#[derive(Debug, Clone)]
struct Client(Arc<AtomicBool>);

impl Client {
    /// True once the handler waiting for the work was dropped (the client disconnected).
    fn is_gone(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }
}

struct MarkGoneOnDrop(Arc<AtomicBool>);

impl Drop for MarkGoneOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Release);
    }
}

/// Runs `work` in a task of its own and waits for it. If the client disconnects, the handler
/// is dropped but the work still runs to the end; it can ask [`Client::is_gone`] before it
/// settles, and give the charge back for an answer nobody will read.
async fn detached<T, F, Fut>(work: F) -> Result<T, RelayError>
where
    T: Send + 'static,
    F: FnOnce(Client) -> Fut,
    Fut: Future<Output = Result<T, RelayError>> + Send + 'static,
{
    let gone = Arc::new(AtomicBool::new(false));
    let _mark = MarkGoneOnDrop(gone.clone());
    tokio::spawn(work(Client(gone))).await.unwrap_or_else(|e| {
        tracing::error!(error = %e, "a detached call panicked");
        Err(RelayError::Internal("a detached call panicked"))
    })
}

/// What a call costs and who pays, with what its usage row records.
#[derive(Debug, Clone)]
pub struct Bill {
    pub payer: Payer,
    pub price: Price,
    /// The public route and the catalog model, for the usage row.
    pub route: &'static str,
    pub model: String,
}

/// Work that was paid for.
#[derive(Debug)]
pub struct Paid<T> {
    pub value: T,
    pub billing: BillingReport,
    /// For x402 payments: the settlement header to attach to the answer.
    pub settlement: Option<Settlement>,
}

/// The one charge-and-settle path of every paid call: charge `bill`, run `work`, then settle
/// (its tokens decide a per-token price) or, on any failure or when the client has gone,
/// refund. All of it runs detached from the connection.
pub async fn paid<T, F, Fut>(app: &App, bill: Bill, work: F) -> Result<Paid<T>, RelayError>
where
    T: Send + 'static,
    F: FnOnce(App) -> Fut + Send + 'static,
    Fut: Future<Output = Result<(T, Usage), RelayError>> + Send + 'static,
{
    let app = app.clone();
    detached(move |client| async move {
        let usage = NewUsage { route: bill.route, model: &bill.model };
        let charge = charge(&app, &bill.payer, bill.price, usage, crate::unix_now()).await?;
        crate::failpoint::hit("billing:charged");
        let held = Held::new(app.clone(), charge);
        match work(app.clone()).await {
            Ok(_) if client.is_gone() => {
                tracing::info!("client left before the answer; charge given back");
                held.refund().await;
                Err(RelayError::ClientGone)
            }
            Ok((value, usage)) => {
                let (billing, settlement) = held.settle(usage).await?;
                Ok(Paid { value, billing, settlement })
            }
            Err(e) => {
                held.refund().await;
                Err(e)
            }
        }
    })
    .await
}

fn store_error(e: BillingError) -> StoreError {
    match e {
        BillingError::Store(s) => s,
        BillingError::UnknownCurrency(_) => StoreError::Corrupt("unknown currency"),
        _ => StoreError::Corrupt("billing"),
    }
}

async fn refund_free(store: &Store, address: &str, day: i64) -> Result<(), StoreError> {
    sqlx::query("UPDATE free_trial SET used = used - 1 WHERE address = $1 AND day = $2 AND used > 0")
        .bind(address)
        .bind(day)
        .execute(store.pool())
        .await?;
    Ok(())
}

/// Free messages `address` has left today.
pub async fn free_remaining(store: &Store, address: &IpAddr, free_per_day: u32, now: i64) -> Result<u32, StoreError> {
    let row = sqlx::query("SELECT used FROM free_trial WHERE address = $1 AND day = $2")
        .bind(address.to_string())
        .bind(utc_day(now))
        .fetch_optional(store.pool())
        .await?;
    let used: i64 = match row {
        Some(r) => r.try_get("used")?,
        None => 0,
    };
    Ok(u32::try_from((i64::from(free_per_day) - used).max(0)).unwrap_or(0))
}

async fn balance_of(store: &Store, key_id: &str, currency: &str) -> Result<i64, StoreError> {
    let rows = balances::balances(store, key_id).await.map_err(store_error)?;
    Ok(rows.into_iter().find(|(c, _)| c == currency).map_or(0, |(_, a)| a))
}

impl From<ChargeError> for RelayError {
    fn from(e: ChargeError) -> Self {
        match e {
            ChargeError::Insufficient => RelayError::InsufficientBalance,
            ChargeError::NoPriceIn(c) => RelayError::input(
                shared::wire::codes::INVALID_FIELD,
                format!("X-Currency: this call has no price in `{c}`"),
            ),
            ChargeError::FreeTrialExhausted => RelayError::FreeTrialExhausted,
            // Payers are built only from requests that carry a payment (`Payer::x402`).
            ChargeError::PaymentRequired => RelayError::Internal("a payer without a payment was asked to pay"),
            ChargeError::X402(e) => RelayError::X402(e),
            ChargeError::Store(e) => e.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_token_prices_round_up() {
        assert_eq!(token_price(200_000, 1_000_000), 200_000);
        assert_eq!(token_price(200_000, 1), 1, "0.2 base units is charged as 1");
        assert_eq!(token_price(200_000, 8192), 1639);
        assert_eq!(token_price(0, 500), 0);
        assert_eq!(token_price(u64::MAX, u64::MAX), u64::MAX);
    }
}
