//! What the relay offers for a priced resource: the v1 `PaymentRequirements`, the v2 `accepts`
//! entry and `resource` object, and the 402 answer that carries them (v1 JSON body and v2
//! `PAYMENT-REQUIRED` header at once, so clients of either version can pay).

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::config::Settings;

/// Request header of x402 v1.
pub const X_PAYMENT: &str = "x-payment";
/// Request header of x402 v2.
pub const PAYMENT_SIGNATURE: &str = "payment-signature";
/// 402 header of x402 v2 (base64 `PaymentRequired`).
pub const PAYMENT_REQUIRED: &str = "payment-required";
/// Settlement header of x402 v1.
pub const X_PAYMENT_RESPONSE: &str = "X-PAYMENT-RESPONSE";
/// Settlement header of x402 v2.
pub const PAYMENT_RESPONSE: &str = "PAYMENT-RESPONSE";

/// The only scheme offered.
pub const SCHEME: &str = "exact";
/// What the paid routes answer.
pub const MIME_TYPE: &str = "application/json";

/// The fee payers the facilitator named in `/supported`, per version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeePayers {
    pub v1: String,
    pub v2: String,
}

/// The requirements offered for one resource.
#[derive(Debug, Clone, PartialEq)]
pub struct Offer {
    /// v1 `PaymentRequirements`.
    pub v1: Value,
    /// v2 `PaymentRequirements` (one `accepts` entry, also what `accepted` must equal).
    pub v2: Value,
    /// v2 `resource`.
    pub resource: Value,
}

impl Offer {
    pub fn new(settings: &Settings, resource_url: &str, description: &str, fee_payers: &FeePayers) -> Self {
        let amount = settings.price.to_string();
        let asset = settings.asset.to_string();
        let pay_to = settings.pay_to.to_string();
        let v1 = json!({
            "scheme": SCHEME,
            "network": settings.network,
            "maxAmountRequired": amount,
            "asset": asset,
            "payTo": pay_to,
            "resource": resource_url,
            "description": description,
            "mimeType": MIME_TYPE,
            "maxTimeoutSeconds": settings.max_timeout_seconds,
            "extra": {"feePayer": fee_payers.v1},
        });
        let v2 = json!({
            "scheme": SCHEME,
            "network": settings.caip2,
            "amount": amount,
            "asset": asset,
            "payTo": pay_to,
            "maxTimeoutSeconds": settings.max_timeout_seconds,
            "extra": {"feePayer": fee_payers.v2},
        });
        let resource = json!({"url": resource_url, "description": description, "mimeType": MIME_TYPE});
        Offer { v1, v2, resource }
    }

    /// The v1 `PaymentRequirementsResponse` body; `error` is a reason code, `message` says it
    /// in words.
    pub fn v1_body(&self, error: &str, message: &str) -> Value {
        json!({"x402Version": 1, "error": error, "message": message, "accepts": [self.v1]})
    }

    /// The v2 `PaymentRequired` object (sent base64 in `PAYMENT-REQUIRED`).
    pub fn v2_required(&self, error: &str) -> Value {
        json!({"x402Version": 2, "error": error, "resource": self.resource, "accepts": [self.v2], "extensions": {}})
    }

    /// A 402 (or 400) answer: the v1 body, the v2 header, and headers a browser may read.
    /// `settlement` adds a failed `SettlementResponse` header (name, base64 value).
    pub fn response(
        &self,
        status: StatusCode,
        error: &str,
        message: &str,
        settlement: Option<(&'static str, String)>,
    ) -> Response {
        let body = serde_json::to_vec(&self.v1_body(error, message)).unwrap_or_default();
        let encoded = shared::b64::encode(self.v2_required(error).to_string());
        let mut response = (status, [(header::CONTENT_TYPE, MIME_TYPE)], body).into_response();
        let headers = response.headers_mut();
        if let Ok(value) = HeaderValue::from_str(&encoded) {
            headers.insert(PAYMENT_REQUIRED, value);
        }
        let mut expose = "PAYMENT-REQUIRED".to_string();
        if let Some((name, value)) = settlement
            && let Ok(value) = HeaderValue::from_str(&value)
        {
            headers.insert(name, value);
            expose = format!("{expose}, {name}");
        }
        if let Ok(value) = HeaderValue::from_str(&expose) {
            headers.insert(header::ACCESS_CONTROL_EXPOSE_HEADERS, value);
        }
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::x402::config::X402Config;

    fn offer() -> Offer {
        let config = X402Config {
            facilitator_url: Some("http://127.0.0.1:9".into()),
            pay_to: Some("2wKupLR9q6wXYppw8Gr2NvWxKBUqm4PPJKkQfoxHDBg4".into()),
            ..X402Config::default()
        };
        let settings = config.settings().unwrap().unwrap();
        let fee = FeePayers { v1: "Fee1".into(), v2: "Fee2".into() };
        Offer::new(&settings, "https://relay.example/api/v1/x402/chat/completions", "one call", &fee)
    }

    #[test]
    fn v1_and_v2_shapes() {
        let o = offer();
        assert_eq!(
            o.v1_body("payment_required", "pay"),
            json!({"x402Version": 1, "error": "payment_required", "message": "pay", "accepts": [{
                "scheme": "exact", "network": "solana", "maxAmountRequired": "5000",
                "asset": "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
                "payTo": "2wKupLR9q6wXYppw8Gr2NvWxKBUqm4PPJKkQfoxHDBg4",
                "resource": "https://relay.example/api/v1/x402/chat/completions", "description": "one call",
                "mimeType": "application/json", "maxTimeoutSeconds": 60, "extra": {"feePayer": "Fee1"}}]})
        );
        let v2 = o.v2_required("payment_required");
        assert_eq!(v2["accepts"][0]["network"], "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp");
        assert_eq!(v2["accepts"][0]["amount"], "5000");
        assert_eq!(v2["accepts"][0]["extra"], json!({"feePayer": "Fee2"}));
        assert_eq!(v2["resource"]["url"], "https://relay.example/api/v1/x402/chat/completions");
        assert!(v2["accepts"][0].get("maxAmountRequired").is_none());
    }

    #[test]
    fn response_carries_both_versions() {
        let r = offer().response(StatusCode::PAYMENT_REQUIRED, "payment_required", "pay", None);
        assert_eq!(r.status(), 402);
        let header = r.headers().get(PAYMENT_REQUIRED).unwrap().to_str().unwrap();
        let decoded: Value = serde_json::from_slice(&shared::b64::decode(header).unwrap()).unwrap();
        assert_eq!(decoded["x402Version"], 2);
        assert_eq!(r.headers().get(header::ACCESS_CONTROL_EXPOSE_HEADERS).unwrap(), "PAYMENT-REQUIRED");
    }
}
