//! The `agents.wallets` section: where webhooks may go and how their deliveries are retried,
//! and how a shield spaces its transactions.

use serde::Deserialize;

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct WalletsConfig {
    /// Exact `ip:port` pairs a webhook URL may resolve to although they are private or local.
    /// Only for tests and local runs (a receiver on 127.0.0.1); empty in production, where every
    /// private, loopback, link-local or reserved address is refused at create and at delivery.
    pub webhook_allow: Vec<String>,
    /// Per delivery attempt.
    pub webhook_timeout_secs: u64,
    /// The first retry waits this long; each next one twice as long, up to `retryMaxSecs`.
    pub retry_base_secs: u64,
    pub retry_max_secs: u64,
    /// How long after an event was made its delivery is still tried (default 26 h: more than
    /// the 24 h a receiver may be down).
    pub retry_window_secs: u64,
    /// How often the delivery worker looks for due events when nothing woke it.
    pub poll_millis: u64,
    /// A shield waits a random time in this range (seconds) before its hop and again before
    /// its delivery, so timing does not tie a deposit to a delivery.
    pub shield_delay_secs: [u64; 2],
    /// How long a book step waits for the freshness witness's answer before `503
    /// witness_unavailable` (the step stays stored and is finished when the answer comes).
    pub witness_wait_secs: u64,
    /// Swaps, shields and withdrawals an account's wallets may start in 24 hours: the pool
    /// pays their SOL (fees, and the token account of a fresh destination), so no account can
    /// drain it for everyone (`429 rate_limited` past it).
    pub daily_pool_operations: i64,
}

impl Default for WalletsConfig {
    fn default() -> Self {
        WalletsConfig {
            webhook_allow: Vec::new(),
            webhook_timeout_secs: 10,
            retry_base_secs: 5,
            retry_max_secs: 3_600,
            retry_window_secs: 26 * 3_600,
            poll_millis: 1_000,
            shield_delay_secs: [5, 25],
            witness_wait_secs: 10,
            daily_pool_operations: 200,
        }
    }
}

impl WalletsConfig {
    pub fn check(&self) -> Result<(), String> {
        for entry in &self.webhook_allow {
            entry
                .trim()
                .parse::<std::net::SocketAddr>()
                .map_err(|_| format!("agents.wallets.webhookAllow: `{entry}` is not an ip:port pair"))?;
        }
        if self.shield_delay_secs[0] > self.shield_delay_secs[1] {
            return Err("agents.wallets.shieldDelaySecs: [min, max] with min <= max".into());
        }
        if self.retry_base_secs == 0 || self.retry_max_secs < self.retry_base_secs {
            return Err("agents.wallets: retryBaseSecs must be positive and at most retryMaxSecs".into());
        }
        Ok(())
    }

    /// A random shield delay within the configured bounds (seconds).
    pub fn shield_delay(&self) -> i64 {
        use rand_core::{OsRng, RngCore};
        let [min, max] = self.shield_delay_secs;
        (min + OsRng.next_u64() % (max - min + 1)) as i64
    }

    /// Seconds to wait after failed attempt number `attempts` (1 = the first): exponential,
    /// capped.
    pub fn backoff_secs(&self, attempts: u32) -> u64 {
        let doubled = self.retry_base_secs.saturating_mul(1u64 << attempts.saturating_sub(1).min(30));
        doubled.min(self.retry_max_secs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_then_caps() {
        let c = WalletsConfig::default();
        let waits: Vec<u64> = (1..=12).map(|n| c.backoff_secs(n)).collect();
        assert_eq!(&waits[..5], &[5, 10, 20, 40, 80]);
        assert_eq!(waits[11], 3_600);
        // Attempts keep coming for the whole window: hourly once capped, so well past 24 h.
        assert!(c.retry_window_secs >= 24 * 3_600);
    }
}
