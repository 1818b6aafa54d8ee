//! Webhooks, the Standard Webhooks way (standardwebhooks.com): each event is POSTed with
//! `webhook-id`, `webhook-timestamp` (unix seconds) and `webhook-signature` (`v1,` then the
//! base64 HMAC-SHA256 of `id.timestamp.body` keyed with the bytes of the wallet's `whsec_`
//! secret). Events come from the durable outbox (`webhook_outbox`), written with the operation;
//! a worker delivers due ones, retries failures with exponential backoff for the configured
//! window, and logs every attempt (`webhook_deliveries`). Every URL goes through the relay's
//! SSRF-guarded fetcher: private addresses are refused at create and again at each delivery
//! (DNS may change in between).

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use hmac::{Hmac, Mac};
use relay_tools::fetch::{FetchRequest, GuardedFetch, is_forbidden};
use serde::Serialize;
use sha2::Sha256;
use shared::wire::codes;
use sqlx::Row;

use crate::agents::WalletsConfig;
use crate::http::error::RelayError;
use crate::state::AgentsState;
use crate::store::Store;

/// Prefix of a webhook secret (Standard Webhooks).
pub const SECRET_PREFIX: &str = "whsec_";

/// The sending side: the guarded fetcher and its configuration.
pub struct Webhooks {
    pub config: WalletsConfig,
    fetch: GuardedFetch,
    allow: Vec<SocketAddr>,
    /// Wakes the worker when an event was just written.
    pub wake: tokio::sync::Notify,
}

impl Webhooks {
    pub fn new(config: &WalletsConfig) -> Self {
        let fetch_config = relay_tools::FetchConfig {
            // A receiver's answer is not read beyond its status; keep little of it.
            max_bytes: 4_096,
            max_redirects: 0,
            timeout_secs: config.webhook_timeout_secs.max(1),
            allow: config.webhook_allow.clone(),
            ..relay_tools::FetchConfig::default()
        };
        let allow = config.webhook_allow.iter().filter_map(|a| a.trim().parse().ok()).collect();
        Webhooks { config: config.clone(), fetch: GuardedFetch::new(&fetch_config), allow, wake: Default::default() }
    }

    /// Refuses (400 `invalid_field`) a URL that is not http(s) or whose host resolves to a
    /// private, local or reserved address not explicitly allowed.
    pub async fn check_url(&self, text: &str) -> Result<String, RelayError> {
        let bad = |why: &str| RelayError::input(codes::INVALID_FIELD, format!("`webhookUrl` {why}"));
        let url = reqwest::Url::parse(text.trim()).map_err(|_| bad("is not a URL"))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(bad("must be an http or https URL"));
        }
        let host = url.host_str().filter(|h| !h.is_empty()).ok_or_else(|| bad("has no host"))?;
        let port = url.port_or_known_default().ok_or_else(|| bad("has no port"))?;
        let literal = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host);
        let addrs: Vec<SocketAddr> = match literal.parse::<IpAddr>() {
            Ok(ip) => vec![SocketAddr::new(ip, port)],
            Err(_) => {
                // Bounded: a resolver that hangs must not hold the request.
                let secs = self.config.webhook_timeout_secs.max(1);
                match tokio::time::timeout(Duration::from_secs(secs), tokio::net::lookup_host((host, port))).await {
                    Ok(Ok(addrs)) => addrs.collect(),
                    _ => return Err(bad("names a host that does not resolve")),
                }
            }
        };
        if addrs.is_empty() {
            return Err(bad("names a host that does not resolve"));
        }
        if addrs.iter().any(|a| is_forbidden(a.ip()) && !self.allow.contains(a)) {
            return Err(bad("resolves to a private, local or reserved address; webhooks go to public hosts only"));
        }
        Ok(url.to_string())
    }
}

/// A new `whsec_` secret: 32 random bytes, base64.
pub fn new_secret() -> String {
    format!("{SECRET_PREFIX}{}", shared::b64::encode(crate::ids::random_bytes::<32>()))
}

/// `webhook-signature` of one message: `v1,<base64 HMAC-SHA256(id.timestamp.body)>`.
pub fn sign(secret: &str, id: &str, timestamp: i64, body: &str) -> Result<String, RelayError> {
    let key = shared::b64::decode(secret.strip_prefix(SECRET_PREFIX).unwrap_or(secret))
        .map_err(|_| RelayError::Internal("a stored webhook secret is not base64"))?;
    let mut mac =
        Hmac::<Sha256>::new_from_slice(&key).map_err(|_| RelayError::Internal("the webhook key does not fit HMAC"))?;
    mac.update(format!("{id}.{timestamp}.{body}").as_bytes());
    Ok(format!("v1,{}", shared::b64::encode(mac.finalize().into_bytes())))
}

/// One due event.
struct Due {
    id: String,
    wallet_id: String,
    event_type: String,
    payload: String,
    attempts: i64,
    created_at: i64,
    url: String,
    secret: String,
}

/// How long a claimed attempt is held before another worker may try it: longer than any
/// attempt can last (its timeout, and a margin for recording it). A relay killed mid-send has
/// its event sent again after this, so delivery is at least once.
fn claim_ms(config: &WalletsConfig) -> i64 {
    1_000 * (config.webhook_timeout_secs.max(1) as i64 + 5)
}

/// The delivery worker: forever, every due event once per turn.
pub async fn run(api: AgentsState) {
    if api.agents.is_none() {
        return;
    }
    let hooks = &api.wallets.webhooks;
    let poll = Duration::from_millis(hooks.config.poll_millis.max(50));
    loop {
        match turn(&api, hooks).await {
            Ok(n) if n > 0 => continue,
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "webhook delivery turn failed"),
        }
        let _ = tokio::time::timeout(poll, hooks.wake.notified()).await;
    }
}

/// Delivers what is due now; returns how many were tried.
async fn turn(api: &AgentsState, hooks: &Webhooks) -> Result<usize, RelayError> {
    let now = super::now_ms();
    let rows = sqlx::query(
        "SELECT o.id, o.wallet_id, o.event_type, o.payload, o.attempts, o.created_at, w.webhook_url, \
         w.webhook_secret FROM webhook_outbox o JOIN wallets w ON w.id = o.wallet_id \
         WHERE o.state = 'pending' AND o.next_attempt_at <= $1 ORDER BY o.next_attempt_at LIMIT 20",
    )
    .bind(now)
    .fetch_all(api.store.pool())
    .await?;
    let due = rows
        .iter()
        .map(|r| {
            Ok(Due {
                id: r.try_get("id")?,
                wallet_id: r.try_get("wallet_id")?,
                event_type: r.try_get("event_type")?,
                payload: r.try_get("payload")?,
                attempts: r.try_get("attempts")?,
                created_at: r.try_get("created_at")?,
                url: r.try_get("webhook_url")?,
                secret: r.try_get("webhook_secret")?,
            })
        })
        .collect::<Result<Vec<_>, sqlx::Error>>()?;
    let mut tried = 0;
    for event in due {
        if claim(&api.store, &event, now + claim_ms(&hooks.config)).await? {
            tried += 1;
            deliver(api, hooks, event).await?;
        }
    }
    Ok(tried)
}

/// Takes one attempt of `event`: bumps `attempts` where it is still what was read, and holds
/// the event until `until` (unix ms).
async fn claim(store: &Store, event: &Due, until: i64) -> Result<bool, RelayError> {
    let done = sqlx::query(
        "UPDATE webhook_outbox SET attempts = attempts + 1, next_attempt_at = $1 \
         WHERE id = $2 AND attempts = $3 AND state = 'pending'",
    )
    .bind(until)
    .bind(&event.id)
    .bind(event.attempts)
    .execute(store.pool())
    .await?;
    Ok(done.rows_affected() == 1)
}

async fn deliver(api: &AgentsState, hooks: &Webhooks, event: Due) -> Result<(), RelayError> {
    let attempt = event.attempts + 1;
    let timestamp = crate::unix_now();
    let signature = sign(&event.secret, &event.id, timestamp, &event.payload)?;
    let request = FetchRequest {
        method: reqwest::Method::POST,
        url: &event.url,
        headers: vec![
            ("content-type".into(), "application/json".into()),
            ("webhook-id".into(), event.id.clone()),
            ("webhook-timestamp".into(), timestamp.to_string()),
            ("webhook-signature".into(), signature),
        ],
        body: Some(event.payload.clone().into_bytes()),
    };
    let (status, error) = match hooks.fetch.fetch(request).await {
        Ok(answer) if (200..300).contains(&answer.status) => (Some(answer.status), None),
        Ok(answer) => (Some(answer.status), Some(format!("the receiver answered {}", answer.status))),
        Err(e) => (None, Some(e.to_string().chars().take(300).collect::<String>())),
    };
    let now = super::now_ms();
    let delivered = error.is_none();
    let mut tx = api.store.begin().await?;
    sqlx::query(
        "INSERT INTO webhook_deliveries (message_id, attempt, wallet_id, event_type, at, http_status, error, delivered) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(&event.id)
    .bind(attempt)
    .bind(&event.wallet_id)
    .bind(&event.event_type)
    .bind(now)
    .bind(status.map(i64::from))
    .bind(&error)
    .bind(i64::from(delivered))
    .execute(&mut *tx)
    .await?;
    let (state, next) = match delivered {
        true => ("delivered", now),
        false => {
            let next = now + 1_000 * hooks.config.backoff_secs(attempt as u32) as i64;
            let window_ends = event.created_at + 1_000 * hooks.config.retry_window_secs as i64;
            (if next > window_ends { "failed" } else { "pending" }, next)
        }
    };
    sqlx::query(
        "UPDATE webhook_outbox SET state = $1, next_attempt_at = $2, delivered_at = $3 WHERE id = $4 AND attempts = $5",
    )
    .bind(state)
    .bind(next)
    .bind(delivered.then_some(now))
    .bind(&event.id)
    .bind(attempt)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    match &error {
        None => tracing::info!(message = %event.id, attempt, "webhook delivered"),
        Some(e) => tracing::info!(message = %event.id, attempt, state, error = %e, "webhook not delivered"),
    }
    Ok(())
}

/// One attempt, as the delivery log shows it.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WebhookDelivery {
    pub message_id: String,
    pub event_type: String,
    pub attempt: i64,
    pub at: String,
    /// The receiver's HTTP status; null when it could not be reached (or was refused).
    pub http_status: Option<i64>,
    pub delivered: bool,
    pub error: Option<String>,
}

/// One event and where its delivery stands.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WebhookMessage {
    pub id: String,
    pub event_type: String,
    /// `pending`, `delivered` or `failed` (the retry window ended).
    pub state: String,
    pub attempts: i64,
    pub next_attempt_at: Option<String>,
}

/// The wallet's delivery log (newest first) and its events.
pub async fn log(
    store: &Store,
    wallet_id: &str,
    limit: i64,
) -> Result<(Vec<WebhookMessage>, Vec<WebhookDelivery>), RelayError> {
    let rows = sqlx::query(
        "SELECT message_id, event_type, attempt, at, http_status, error, delivered FROM webhook_deliveries \
         WHERE wallet_id = $1 ORDER BY at DESC, attempt DESC LIMIT $2",
    )
    .bind(wallet_id)
    .bind(limit)
    .fetch_all(store.pool())
    .await?;
    let deliveries = rows
        .iter()
        .map(|r| {
            Ok(WebhookDelivery {
                message_id: r.try_get("message_id")?,
                event_type: r.try_get("event_type")?,
                attempt: r.try_get("attempt")?,
                at: super::iso_ms(r.try_get("at")?),
                http_status: r.try_get("http_status")?,
                delivered: r.try_get::<i64, _>("delivered")? != 0,
                error: r.try_get("error")?,
            })
        })
        .collect::<Result<Vec<_>, sqlx::Error>>()?;
    let rows = sqlx::query(
        "SELECT id, event_type, state, attempts, next_attempt_at FROM webhook_outbox WHERE wallet_id = $1 \
         ORDER BY created_at DESC, id DESC LIMIT $2",
    )
    .bind(wallet_id)
    .bind(limit)
    .fetch_all(store.pool())
    .await?;
    let messages = rows
        .iter()
        .map(|r| {
            let state: String = r.try_get("state")?;
            let next: i64 = r.try_get("next_attempt_at")?;
            Ok(WebhookMessage {
                id: r.try_get("id")?,
                event_type: r.try_get("event_type")?,
                next_attempt_at: (state == "pending").then(|| super::iso_ms(next)),
                state,
                attempts: r.try_get("attempts")?,
            })
        })
        .collect::<Result<Vec<_>, sqlx::Error>>()?;
    Ok((messages, deliveries))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signature_matches_the_spec_example() {
        // The example of the Standard Webhooks specification.
        let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
        let body = r#"{"test": 2432232314}"#;
        let got = sign(secret, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body).unwrap();
        assert_eq!(got, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
    }
}
