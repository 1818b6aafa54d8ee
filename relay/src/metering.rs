//! Who pays for an `/agent` call, and the charge itself.
//!
//! The charge is taken before the work starts (so concurrent calls can never overdraw), and
//! given back if the request fails: nothing is charged for a failed request. A caller with a
//! key pays from its prepaid balance; a caller without one spends a free message of its
//! network address for the day.

use std::net::IpAddr;

use serde::Serialize;
use sqlx::Row;

use crate::auth::Caller;
use crate::billing::{self, BillingError};
use crate::store::{Store, StoreError};

/// The currency per-call prices are in.
pub const CALL_CURRENCY: &str = "usdc";

#[derive(Debug, Clone)]
pub enum Payer {
    Key(Caller),
    Guest(IpAddr),
}

/// What was taken, to report (`billing`) and to give back on failure.
#[derive(Debug, Clone)]
pub enum Charge {
    /// Taken from a key's balance; `usage_id` is the pending usage row written with the debit.
    Balance {
        key_id: String,
        amount: i64,
        balance_after: i64,
        usage_id: Option<String>,
    },
    FreeMessage {
        address: String,
        day: i64,
    },
    /// Paid by an x402 payment (verified; settled only after the work succeeds).
    X402 {
        amount: u64,
    },
}

/// The `billing` object of an `/agent` response.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BillingReport {
    pub method: &'static str,
    /// Base units, as a string (contract §4 convention).
    pub charged: String,
    pub currency: &'static str,
    pub balance_after: Option<String>,
}

impl Charge {
    pub fn report(&self) -> BillingReport {
        match self {
            Charge::Balance { amount, balance_after, .. } => BillingReport {
                method: "key",
                charged: amount.to_string(),
                currency: CALL_CURRENCY,
                balance_after: Some(balance_after.to_string()),
            },
            Charge::FreeMessage { .. } => {
                BillingReport { method: "free", charged: "0".into(), currency: CALL_CURRENCY, balance_after: None }
            }
            Charge::X402 { amount } => BillingReport {
                method: "x402",
                charged: amount.to_string(),
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
    #[error("no free messages left today")]
    FreeTrialExhausted,
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

/// Takes `price` (the call price, or the most a per-token call can cost) from `payer`.
pub async fn charge(
    store: &Store,
    payer: &Payer,
    price: u64,
    free_per_day: u32,
    usage: billing::NewUsage<'_>,
    now: i64,
) -> Result<Charge, ChargeError> {
    match payer {
        Payer::Key(caller) => {
            let amount = i64::try_from(price).unwrap_or(i64::MAX);
            if amount == 0 {
                let after = balance_of(store, &caller.key_id).await?;
                return Ok(Charge::Balance {
                    key_id: caller.key_id.clone(),
                    amount: 0,
                    balance_after: after,
                    usage_id: None,
                });
            }
            match billing::debit_for_usage(store, &caller.key_id, CALL_CURRENCY, amount, usage, now).await {
                Ok((after, usage_id)) => Ok(Charge::Balance {
                    key_id: caller.key_id.clone(),
                    amount,
                    balance_after: after,
                    usage_id: Some(usage_id),
                }),
                Err(BillingError::Insufficient) => Err(ChargeError::Insufficient),
                Err(BillingError::Store(e)) => Err(e.into()),
                Err(e) => Err(StoreError::Corrupt(billing_message(&e)).into()),
            }
        }
        Payer::Guest(ip) => {
            let address = ip.to_string();
            let day = utc_day(now);
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

fn billing_message(e: &BillingError) -> &'static str {
    match e {
        BillingError::UnknownCurrency(_) => "unknown currency",
        _ => "billing",
    }
}

/// Gives a charge back (the request failed). Logged, never fatal: the caller already has
/// an error to read.
pub async fn refund(store: &Store, charge: &Charge, now: i64) {
    let result = match charge {
        Charge::Balance { usage_id: None, .. } => Ok(()),
        Charge::Balance { usage_id: Some(id), .. } => billing::refund_usage(store, id, now).await.map_err(store_error),
        Charge::FreeMessage { address, day } => refund_free(store, address, *day).await,
        // The payment is released by the caller (x402::X402::release), not here.
        Charge::X402 { .. } => Ok(()),
    };
    if let Err(e) = result {
        tracing::error!(error = %e, "refund failed");
    }
}

/// The call succeeded: records its tokens on the usage row and, for per-token prices, the
/// final amount (what was taken beyond it is given back). Returns the charge as reported.
pub async fn complete(
    store: &Store,
    charge: &mut Charge,
    usage: shared::wire::Usage,
    final_amount: Option<i64>,
    now: i64,
) -> Result<(), StoreError> {
    if let Charge::Balance { usage_id: Some(id), amount, balance_after, .. } = charge {
        let charged =
            billing::complete_usage(store, id, usage.prompt_tokens, usage.completion_tokens, final_amount, now)
                .await
                .map_err(store_error)?;
        *balance_after += *amount - charged;
        *amount = charged;
    }
    Ok(())
}

fn store_error(e: BillingError) -> StoreError {
    match e {
        BillingError::Store(s) => s,
        other => StoreError::Corrupt(billing_message(&other)),
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

async fn balance_of(store: &Store, key_id: &str) -> Result<i64, StoreError> {
    let rows = billing::balances(store, key_id).await.map_err(store_error)?;
    Ok(rows.into_iter().find(|(c, _)| c == CALL_CURRENCY).map_or(0, |(_, a)| a))
}
