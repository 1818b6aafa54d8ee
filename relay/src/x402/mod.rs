//! x402 pay-per-call (contract §4.1, §5.2, §8; docs/billing.md "x402"): a small in-house layer
//! over the x402 HTTP transport, v1 (`X-PAYMENT`) and v2 (`PAYMENT-SIGNATURE`), SVM `exact`
//! scheme, with verification and settlement done by a facilitator: any one over HTTP, or the
//! built-in one ([`builtin`]) settling on the relay's own chain connection.
//!
//! A paid route calls [`X402::verify`]; `Ok(None)` means no payment was sent and the route
//! answers [`X402::challenge`]. A verified payment is reserved in the database (each payment
//! is used once), the work runs, and then [`X402::settle`] (success) or [`X402::release`]
//! (failure: nothing is charged and the same payment may be retried).

pub mod builtin;
pub mod config;
pub mod error;
pub mod facilitator;
pub mod manifest;
pub mod payment;
pub mod replay;
pub mod requirements;

use std::sync::Arc;
use std::time::Duration;

use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use builtin::BuiltIn;
pub use config::{FacilitatorChoice, Settings, X402Config, X402ConfigError};
pub use error::X402Error;
use facilitator::{Facilitator, FacilitatorError, Settled, Verdict};
use requirements::{Offer, PAYMENT_RESPONSE, X_PAYMENT_RESPONSE};

use crate::store::Store;

/// Reconciles payments left `sending` (built-in facilitator) at start and every 30 s.
pub fn start_reconciler(x402: Arc<X402>, store: Store) {
    tokio::spawn(async move {
        loop {
            x402.reconcile(&store).await;
            tokio::time::sleep(Duration::from_secs(30)).await;
        }
    });
}

/// The `description` of requirements built where the route's own is not known (the refusals
/// of [`X402::verify`] and [`X402::settle`]).
pub const DEFAULT_DESCRIPTION: &str = "Private AI inference: one end-to-end encrypted call";

/// The x402 state a relay holds.
pub struct X402 {
    pub config: X402Config,
    settings: Option<Settings>,
    backend: Option<Backend>,
}

/// The facilitator in use.
enum Backend {
    Remote(Facilitator),
    BuiltIn(BuiltIn),
}

/// A payment the facilitator verified and this relay reserved. Settle or release it.
pub struct VerifiedPayment {
    version: u8,
    key: String,
    payload: Value,
    requirements: Value,
    offer: Offer,
    payer: String,
    amount: u64,
    network: String,
}

// The payload authorises a transfer: never print it.
impl std::fmt::Debug for VerifiedPayment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VerifiedPayment")
            .field("version", &self.version)
            .field("payer", &self.payer)
            .field("amount", &self.amount)
            .field("network", &self.network)
            .finish_non_exhaustive()
    }
}

impl VerifiedPayment {
    /// Base units of the asset.
    pub fn amount(&self) -> u64 {
        self.amount
    }
}

/// A settled payment: the header to attach to the success answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settlement {
    /// `X-PAYMENT-RESPONSE` (v1) or `PAYMENT-RESPONSE` (v2).
    pub header_name: &'static str,
    /// base64 of the JSON `SettlementResponse`.
    pub header_value: String,
    pub payer: String,
    /// The ledger transaction signature.
    pub transaction: String,
    pub network: String,
}

impl Settlement {
    /// Adds the settlement header, and exposes it to browsers.
    pub fn attach(&self, response: &mut Response) {
        let headers = response.headers_mut();
        if let Ok(value) = HeaderValue::from_str(&self.header_value) {
            headers.insert(self.header_name, value);
        }
        headers.insert(header::ACCESS_CONTROL_EXPOSE_HEADERS, HeaderValue::from_static(self.header_name));
    }
}

impl X402 {
    pub fn new(config: &X402Config) -> Result<Self, X402ConfigError> {
        let settings = config.settings()?;
        let backend = match settings.as_ref() {
            None => None,
            Some(s) => {
                let timeout = Duration::from_secs(s.facilitator_timeout_secs);
                Some(match &s.facilitator {
                    FacilitatorChoice::Url(url) => Backend::Remote(Facilitator::new(url, timeout)),
                    FacilitatorChoice::BuiltIn { rpc_url, fee_payer_key_file, max_priority_fee_lamports } => {
                        Backend::BuiltIn(
                            BuiltIn::new(rpc_url, fee_payer_key_file, *max_priority_fee_lamports, timeout)
                                .map_err(X402ConfigError::BuiltIn)?,
                        )
                    }
                })
            }
        };
        Ok(X402 { config: config.clone(), settings, backend })
    }

    /// True when a facilitator and a `payTo` are configured.
    pub fn enabled(&self) -> bool {
        self.settings.is_some()
    }

    /// The checked settings of an enabled layer.
    pub fn settings(&self) -> Option<&Settings> {
        self.settings.as_ref()
    }

    /// Base units per paid call.
    pub fn price(&self) -> u64 {
        self.config.price_per_call
    }

    /// The price in whole units of the asset (0.005 by default).
    pub fn price_in_units(&self) -> f64 {
        self.config.price_per_call as f64 / 10f64.powi(i32::from(self.config.asset_decimals.min(18)))
    }

    fn enabled_parts(&self) -> Result<(&Settings, &Backend), X402Error> {
        match (&self.settings, &self.backend) {
            (Some(s), Some(f)) => Ok((s, f)),
            _ => Err(X402Error::NotConfigured),
        }
    }

    /// The requirements offered for `resource_url`, with the facilitator's fee payer.
    pub async fn offer(&self, resource_url: &str, description: &str) -> Result<Offer, X402Error> {
        let (settings, backend) = self.enabled_parts()?;
        let fee_payers = match backend {
            Backend::Remote(f) => {
                f.fee_payers(settings.network, settings.caip2).await.map_err(X402Error::Facilitator)?
            }
            Backend::BuiltIn(b) => b.fee_payers(),
        };
        Ok(Offer::new(settings, resource_url, description, &fee_payers))
    }

    /// The 402 answer for `resource_url` (v1 JSON body `{x402Version: 1, error, accepts}` and
    /// the v2 `PAYMENT-REQUIRED` header), with `extra.feePayer` from the facilitator's cached
    /// `/supported`. 501 `x402_not_configured` when x402 is off; 502 when the facilitator
    /// cannot name a fee payer (a challenge without one cannot be paid).
    pub async fn challenge(&self, resource_url: &str, description: &str) -> Response {
        match self.offer(resource_url, description).await {
            Ok(offer) => offer.response(
                axum::http::StatusCode::PAYMENT_REQUIRED,
                shared::wire::codes::PAYMENT_REQUIRED,
                "this call costs one x402 payment: send X-PAYMENT (x402 v1) or PAYMENT-SIGNATURE (x402 v2)",
                None,
            ),
            Err(e) => e.into_response(),
        }
    }

    /// Reads `X-PAYMENT` (v1) or `PAYMENT-SIGNATURE` (v2). `Ok(None)` when neither header is
    /// present. Otherwise: decodes, matches the offered requirements exactly, reserves the
    /// payment once in the store (a replay, even concurrent or on another relay sharing
    /// PostgreSQL, is refused), and asks the facilitator's `/verify`.
    pub async fn verify(
        &self,
        headers: &HeaderMap,
        resource_url: &str,
        store: &Store,
    ) -> Result<Option<VerifiedPayment>, X402Error> {
        if !headers.contains_key(requirements::X_PAYMENT) && !headers.contains_key(requirements::PAYMENT_SIGNATURE) {
            return Ok(None);
        }
        let (settings, backend) = self.enabled_parts()?;
        let offer = self.offer(resource_url, DEFAULT_DESCRIPTION).await?;
        let payment = match payment::from_headers(headers) {
            Ok(Some(p)) => p,
            Ok(None) => return Ok(None),
            Err(error) => return Err(X402Error::Malformed { error, offer: Box::new(offer) }),
        };
        // Match what was offered: v1 has no echo of the requirements, only scheme and network;
        // v2 echoes the whole accepts entry, which must be the one offered, field for field.
        let (matches, requirements, network) = match payment.version {
            1 => (
                payment.v1_scheme_network() == (Some(requirements::SCHEME), Some(settings.network)),
                offer.v1.clone(),
                settings.network,
            ),
            _ => (payment.accepted() == Some(&offer.v2), offer.v2.clone(), settings.caip2),
        };
        if !matches {
            return Err(X402Error::Mismatch { offer: Box::new(offer) });
        }
        let key = hex::encode(payment.message_hash);
        let now = crate::unix_now();
        if !replay::reserve(store, &key, resource_url, settings.price, network, now).await? {
            return Err(X402Error::Replay { offer: Box::new(offer) });
        }
        let verdict = match backend {
            Backend::Remote(f) => f.verify(payment.version, &payment.payload, &requirements).await,
            Backend::BuiltIn(b) => b.verify(payment.version, &payment.payload, &requirements).await,
        };
        match verdict {
            Ok(Verdict::Valid { payer }) => Ok(Some(VerifiedPayment {
                version: payment.version,
                key,
                payload: payment.payload,
                requirements,
                offer,
                payer,
                amount: settings.price,
                network: network.to_string(),
            })),
            Ok(Verdict::Invalid { reason, detail }) => {
                self.free(store, &key).await;
                tracing::info!(reason = %reason, "x402 payment refused by the facilitator");
                let message = detail.unwrap_or_else(|| "the facilitator refused the payment".into());
                Err(X402Error::Refused { reason, message, offer: Box::new(offer) })
            }
            Err(e) => {
                self.free(store, &key).await;
                Err(X402Error::Facilitator(e))
            }
        }
    }

    /// Settles through the facilitator's `/settle` after the work succeeded; returns the header
    /// to attach (`X-PAYMENT-RESPONSE` for v1, `PAYMENT-RESPONSE` for v2; base64
    /// `SettlementResponse`) and marks the payment settled. A refused or unanswered settlement
    /// marks the payment failed (it is not used again) and nothing may be delivered.
    pub async fn settle(&self, payment: &VerifiedPayment, store: &Store) -> Result<Settlement, X402Error> {
        let (_, backend) = self.enabled_parts()?;
        let header_name = if payment.version == 1 { X_PAYMENT_RESPONSE } else { PAYMENT_RESPONSE };
        let answer = match backend {
            Backend::Remote(f) => f.settle(payment.version, &payment.payload, &payment.requirements).await,
            Backend::BuiltIn(b) => Self::settle_built_in(b, payment, store).await,
        };
        let now = crate::unix_now();
        match answer {
            Ok(Settled::Success { transaction, network, payer }) => {
                // The money moved: a storage failure here must not withhold the answer (the
                // reservation row still refuses the payment).
                if let Err(e) = replay::mark_settled(store, &payment.key, &payer, &transaction, now).await {
                    tracing::error!(error = %e, "x402 settlement not recorded");
                }
                let body = json!({"success": true, "transaction": transaction, "network": network, "payer": payer});
                tracing::info!(network = %network, "x402 payment settled");
                Ok(Settlement {
                    header_name,
                    header_value: shared::b64::encode(body.to_string()),
                    payer,
                    transaction,
                    network,
                })
            }
            Ok(Settled::Failure { reason }) => {
                if let Err(e) = replay::mark_failed(store, &payment.key, &payment.payer, now).await {
                    tracing::error!(error = %e, "x402 settlement failure not recorded");
                }
                tracing::warn!(reason = %reason, "x402 settlement refused");
                let body = json!({"success": false, "errorReason": reason, "transaction": "",
                                  "network": payment.network, "payer": payment.payer});
                Err(X402Error::SettleFailed {
                    reason,
                    offer: Box::new(payment.offer.clone()),
                    settlement: (header_name, shared::b64::encode(body.to_string())),
                })
            }
            Err(e) => {
                // The outcome is unknown: keep the payment used.
                if let Err(e) = replay::mark_unknown(store, &payment.key, &payment.payer, now).await {
                    tracing::error!(error = %e, "x402 settlement failure not recorded");
                }
                Err(X402Error::Facilitator(e))
            }
        }
    }

    /// Signs the payment as fee payer, records its transaction signature (durable before it is
    /// sent, so a relay that stops here can later look up what happened), then sends it.
    async fn settle_built_in(
        b: &BuiltIn,
        payment: &VerifiedPayment,
        store: &Store,
    ) -> Result<Settled, FacilitatorError> {
        let signed = match b.sign(payment.version, &payment.payload, &payment.requirements) {
            Ok(s) => s,
            Err(reason) => return Ok(Settled::Failure { reason }),
        };
        let recorded =
            replay::mark_sending(store, &payment.key, &payment.payer, &signed.signature, crate::unix_now()).await;
        if !matches!(recorded, Ok(true)) {
            tracing::error!(?recorded, "x402 settlement not recorded before sending; not sent");
            return Err(FacilitatorError::Unreachable);
        }
        crate::failpoint::hit("x402:recorded");
        b.settle(&signed).await
    }

    /// Settles the books of payments a relay recorded as sent and then stopped before it knew
    /// the outcome: landed ones become `settled`, ones that cannot land any more `failed`.
    /// Runs at start and every 30 s (built-in facilitator only).
    pub async fn reconcile(&self, store: &Store) {
        let Some(Backend::BuiltIn(b)) = &self.backend else { return };
        let now = crate::unix_now();
        let pending = match replay::sending(store).await {
            Ok(p) => p,
            Err(e) => return tracing::warn!(error = %e, "x402 reconciliation: cannot read payments"),
        };
        for p in pending {
            match b.landed(&p.tx_signature, p.updated_at, now).await {
                Ok(Some(true)) => {
                    tracing::warn!(signature = %p.tx_signature, "x402 payment landed after its relay stopped; recorded settled");
                    let _ = replay::mark_settled(store, &p.key, &p.payer, &p.tx_signature, now).await;
                }
                Ok(Some(false)) => {
                    let _ = replay::mark_failed(store, &p.key, &p.payer, now).await;
                }
                Ok(None) => {}
                Err(e) => tracing::warn!(error = %e, "x402 reconciliation: chain not reachable"),
            }
        }
    }

    /// The work failed: frees the reservation so nothing is charged (the same payment may be
    /// retried).
    pub async fn release(&self, payment: &VerifiedPayment, store: &Store) {
        self.free(store, &payment.key).await;
    }

    async fn free(&self, store: &Store, key: &str) {
        if let Err(e) = replay::release(store, key).await {
            tracing::error!(error = %e, "x402 reservation not released");
        }
    }
}

/// The x402 manifest of the routes `priced` (each defined beside its handler; the paid chat
/// route itself is `private`'s).
pub fn routes(priced: &'static [&'static manifest::PricedRoute]) -> axum::Router<crate::state::App> {
    let manifest = move |state| manifest::handle(state, priced);
    axum::Router::new().route("/.well-known/x402", axum::routing::get(manifest))
}
