//! Client of an x402 facilitator (the same HTTP API in v1 and v2): `GET /supported` (cached, for
//! the fee payer the offer must name), `POST /verify` and `POST /settle`.

use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::{Value, json};

use super::requirements::{FeePayers, SCHEME};

/// How long a `/supported` answer is used before it is asked again.
pub const SUPPORTED_TTL: Duration = Duration::from_secs(300);
/// Largest facilitator answer read.
const MAX_ANSWER: usize = 64 * 1024;

/// What went wrong talking to the facilitator.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FacilitatorError {
    #[error("the facilitator did not answer")]
    Unreachable,
    #[error("the facilitator answered with an unexpected body (HTTP {0})")]
    BadAnswer(u16),
    #[error("the facilitator does not support the exact scheme on {0}")]
    Unsupported(String),
}

/// `/verify`'s answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Valid {
        payer: String,
    },
    /// `detail`: what to tell the payer beyond the reason code, when there is more to say.
    Invalid {
        reason: String,
        detail: Option<String>,
    },
}

/// `/settle`'s answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Settled {
    Success { transaction: String, network: String, payer: String },
    Failure { reason: String },
}

pub struct Facilitator {
    http: reqwest::Client,
    base: String,
    supported: tokio::sync::Mutex<Option<(Instant, FeePayers)>>,
}

#[derive(Deserialize)]
struct Supported {
    kinds: Vec<Kind>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Kind {
    x402_version: u64,
    scheme: String,
    network: String,
    #[serde(default)]
    extra: Option<Value>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct VerifyAnswer {
    is_valid: bool,
    #[serde(default)]
    invalid_reason: Option<String>,
    #[serde(default)]
    payer: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SettleAnswer {
    success: bool,
    #[serde(default)]
    error_reason: Option<String>,
    #[serde(default)]
    transaction: Option<String>,
    #[serde(default)]
    network: Option<String>,
    #[serde(default)]
    payer: Option<String>,
}

/// A facilitator's reason, kept only if it looks like a reason code (it is echoed to clients).
pub fn clean_reason(reason: Option<&str>, fallback: &str) -> String {
    let code: String = reason
        .unwrap_or("")
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
        .take(128)
        .collect();
    if code.is_empty() { fallback.to_string() } else { code }
}

/// A base58 string of bounded length (addresses and signatures), or `None`.
fn base58ish(value: Option<String>) -> Option<String> {
    value.filter(|v| {
        !v.is_empty()
            && v.len() <= 100
            && v.chars().all(|c| c.is_ascii_alphanumeric() && !matches!(c, '0' | 'O' | 'I' | 'l'))
    })
}

impl Facilitator {
    pub fn new(base: &str, timeout: Duration) -> Self {
        let http = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(Duration::from_secs(5))
            .build()
            .expect("static reqwest configuration is valid");
        Facilitator { http, base: base.trim_end_matches('/').to_string(), supported: Default::default() }
    }

    pub fn base_url(&self) -> &str {
        &self.base
    }

    async fn read(response: reqwest::Response) -> Result<(u16, Vec<u8>), FacilitatorError> {
        let status = response.status().as_u16();
        if response.content_length().is_some_and(|n| n > MAX_ANSWER as u64) {
            return Err(FacilitatorError::BadAnswer(status));
        }
        let body = response.bytes().await.map_err(|_| FacilitatorError::Unreachable)?;
        if body.len() > MAX_ANSWER {
            return Err(FacilitatorError::BadAnswer(status));
        }
        Ok((status, body.to_vec()))
    }

    /// The fee payers for `network` (v1 name) and `caip2` (v2), from a cached `/supported`.
    /// A kind of the other version on the same network stands in when one is missing. When
    /// the facilitator cannot be asked, a stale answer is used if there is one.
    pub async fn fee_payers(&self, network: &str, caip2: &str) -> Result<FeePayers, FacilitatorError> {
        let mut cached = self.supported.lock().await;
        if let Some((at, fee)) = cached.as_ref()
            && at.elapsed() < SUPPORTED_TTL
        {
            return Ok(fee.clone());
        }
        match self.fetch_supported(network, caip2).await {
            Ok(fee) => {
                *cached = Some((Instant::now(), fee.clone()));
                Ok(fee)
            }
            Err(e) => match cached.as_ref() {
                Some((_, stale)) if e == FacilitatorError::Unreachable => {
                    tracing::warn!("x402 facilitator /supported unreachable; using the last answer");
                    Ok(stale.clone())
                }
                _ => Err(e),
            },
        }
    }

    async fn fetch_supported(&self, network: &str, caip2: &str) -> Result<FeePayers, FacilitatorError> {
        let response = self
            .http
            .get(format!("{}/supported", self.base))
            .send()
            .await
            .map_err(|_| FacilitatorError::Unreachable)?;
        let (status, body) = Self::read(response).await?;
        if status != 200 {
            return Err(FacilitatorError::BadAnswer(status));
        }
        let supported: Supported = serde_json::from_slice(&body).map_err(|_| FacilitatorError::BadAnswer(status))?;
        let fee_payer = |version: u64, net: &str| {
            supported
                .kinds
                .iter()
                .filter(|k| k.x402_version == version && k.scheme == SCHEME && k.network == net)
                .find_map(|k| base58ish(k.extra.as_ref()?.get("feePayer")?.as_str().map(String::from)))
        };
        let v1 = fee_payer(1, network);
        let v2 = fee_payer(2, caip2);
        match (v1, v2) {
            (Some(v1), Some(v2)) => Ok(FeePayers { v1, v2 }),
            (Some(one), None) | (None, Some(one)) => Ok(FeePayers { v1: one.clone(), v2: one }),
            (None, None) => Err(FacilitatorError::Unsupported(network.to_string())),
        }
    }

    async fn post(
        &self,
        path: &str,
        version: u8,
        payload: &Value,
        requirements: &Value,
    ) -> Result<Value, FacilitatorError> {
        let body = json!({"x402Version": version, "paymentPayload": payload, "paymentRequirements": requirements});
        let response = self
            .http
            .post(format!("{}{path}", self.base))
            .json(&body)
            .send()
            .await
            .map_err(|_| FacilitatorError::Unreachable)?;
        let (status, body) = Self::read(response).await?;
        // Facilitators answer refusals with 200 or 4xx and the same body shape; a 5xx without
        // that shape is a facilitator failure.
        serde_json::from_slice(&body).map_err(|_| FacilitatorError::BadAnswer(status))
    }

    pub async fn verify(
        &self,
        version: u8,
        payload: &Value,
        requirements: &Value,
    ) -> Result<Verdict, FacilitatorError> {
        let answer = self.post("/verify", version, payload, requirements).await?;
        let answer: VerifyAnswer = serde_json::from_value(answer).map_err(|_| FacilitatorError::BadAnswer(0))?;
        Ok(match (answer.is_valid, base58ish(answer.payer)) {
            (true, Some(payer)) => Verdict::Valid { payer },
            (true, None) => return Err(FacilitatorError::BadAnswer(0)),
            (false, _) => {
                let reason = clean_reason(answer.invalid_reason.as_deref(), "verification_failed");
                Verdict::Invalid { reason, detail: None }
            }
        })
    }

    pub async fn settle(
        &self,
        version: u8,
        payload: &Value,
        requirements: &Value,
    ) -> Result<Settled, FacilitatorError> {
        let answer = self.post("/settle", version, payload, requirements).await?;
        let answer: SettleAnswer = serde_json::from_value(answer).map_err(|_| FacilitatorError::BadAnswer(0))?;
        if !answer.success {
            return Ok(Settled::Failure {
                reason: clean_reason(answer.error_reason.as_deref(), "unexpected_settle_error"),
            });
        }
        let network = answer.network.filter(|n| n.len() <= 64 && n.chars().all(|c| c.is_ascii_graphic()));
        match (base58ish(answer.transaction), network, base58ish(answer.payer)) {
            (Some(transaction), Some(network), Some(payer)) => Ok(Settled::Success { transaction, network, payer }),
            _ => Err(FacilitatorError::BadAnswer(0)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_are_cut_to_a_code() {
        assert_eq!(
            clean_reason(Some("invalid_exact_svm_payload_amount_mismatch"), "x"),
            "invalid_exact_svm_payload_amount_mismatch"
        );
        assert_eq!(
            clean_reason(Some("smart_wallet_program_not_allowed: Abc"), "x"),
            "smart_wallet_program_not_allowed"
        );
        assert_eq!(clean_reason(Some("<script>"), "fallback"), "fallback");
        assert_eq!(clean_reason(None, "fallback"), "fallback");
        assert_eq!(clean_reason(Some(&"a".repeat(500)), "x").len(), 128);
    }

    #[test]
    fn base58ish_filters() {
        assert!(base58ish(Some("EwWqGE4ZFKLofuestmU4LDdK7XM1N4ALgdZccwYugwGd".into())).is_some());
        assert_eq!(base58ish(Some("0x12".into())), None);
        assert_eq!(base58ish(Some(String::new())), None);
        assert_eq!(base58ish(None), None);
    }
}
