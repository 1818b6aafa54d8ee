//! The fields a step reads from the body its owner signed, strictly.

use serde_json::Value;
use shared::address::Address;
use shared::amount::Amount;

use super::{Funds, FundsError};

impl Funds {
    /// `{mint, amount}` (and `destinationPubkey`) of an encrypt, a withdrawal or a shield, the
    /// amount at least the mint's minimum.
    pub(super) fn fields(&self, body: &Value, with_destination: bool) -> Result<Fields, FundsError> {
        let fields = read_fields(body, with_destination)?;
        let (per_mint, default) = &self.minimums;
        let minimum = per_mint.get(&fields.mint.to_string()).copied().unwrap_or(*default);
        match fields.amount >= minimum {
            true => Ok(fields),
            false => Err(FundsError::BelowMinimum(minimum)),
        }
    }
}

/// The request fields a step reads from the body the caller sent.
pub(super) struct Fields {
    pub(super) mint: Address,
    pub(super) amount: u64,
    pub(super) destination: Option<Address>,
}

/// `{mint, amount}` (and `destinationPubkey` for a withdrawal) from the caller's JSON body;
/// `amount` is base units as a string.
fn read_fields(body: &Value, with_destination: bool) -> Result<Fields, FundsError> {
    let mint = address_field(body, "mint")?;
    let amount = amount_field(body)?;
    let destination = match with_destination {
        true => Some(address_field(body, "destinationPubkey")?),
        false => None,
    };
    Ok(Fields { mint, amount, destination })
}

pub(super) fn address_field(body: &Value, name: &'static str) -> Result<Address, FundsError> {
    body.get(name).and_then(Value::as_str).and_then(Address::parse).ok_or(FundsError::BadBody(name))
}

pub(super) fn amount_field(body: &Value) -> Result<u64, FundsError> {
    let text = body.get("amount").and_then(Value::as_str);
    text.and_then(Amount::parse).map(|a| a.0).filter(|a| *a > 0).ok_or(FundsError::BadBody("amount"))
}

#[cfg(test)]
mod tests {
    use serde_json::Value;
    use shared::address::Address;

    use super::read_fields;
    use crate::funds::pool::{Funds, FundsError};

    #[test]
    fn fields_come_from_the_body_and_are_strict() {
        let mint = Address([3; 32]).to_string();
        let body = format!(r#"{{"mint":"{mint}","amount":"25","destinationPubkey":"{mint}"}}"#);
        let json = |text: &str| serde_json::from_str::<Value>(text).unwrap();
        let f = read_fields(&json(&body), true).unwrap();
        assert_eq!(
            (f.mint.to_string(), f.amount, f.destination.map(|d| d.to_string())),
            (mint.clone(), 25, Some(mint.clone()))
        );
        for bad in [
            format!(r#"{{"mint":"{mint}","amount":25}}"#),
            format!(r#"{{"mint":"{mint}","amount":"025"}}"#),
            format!(r#"{{"mint":"{mint}","amount":"0"}}"#),
            r#"{"mint":"x","amount":"1"}"#.to_string(),
            "[]".to_string(),
        ] {
            assert!(read_fields(&json(&bad), false).is_err(), "{bad}");
        }
        let no_destination = format!(r#"{{"mint":"{mint}","amount":"1"}}"#);
        assert!(read_fields(&json(&no_destination), true).is_err());
    }

    #[test]
    fn amounts_below_the_mints_minimum_are_refused() {
        let (usdc, other) = (Address([3; 32]).to_string(), Address([4; 32]).to_string());
        let config = serde_json::json!({"rpcUrl": "http://127.0.0.1:1", "routerUrl": "http://127.0.0.1:2",
                                        "minAmounts": {usdc.clone(): 10_000}, "defaultMinAmount": 50});
        let funds = Funds::new(Some(&serde_json::from_value(config).unwrap()), Vec::new());
        let body = |mint: &str, amount: u64| serde_json::json!({"mint": mint, "amount": amount.to_string()});
        assert!(matches!(funds.fields(&body(&usdc, 9_999), false), Err(FundsError::BelowMinimum(10_000))));
        assert_eq!(funds.fields(&body(&usdc, 10_000), false).map(|f| f.amount).ok(), Some(10_000));
        assert!(matches!(funds.fields(&body(&other, 49), false), Err(FundsError::BelowMinimum(50))));
        assert!(funds.fields(&body(&other, 50), false).is_ok());
        assert!(Funds::new(None, Vec::new()).fields(&body(&other, 1), false).is_ok(), "no pool, no minimum");
    }
}
