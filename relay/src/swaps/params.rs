//! Reading `/agents/v1` inputs: every missing field named in one 400
//! `missing_required_fields`, then each present field checked with its own code
//! (`invalid_mint`, `invalid_amount`, `invalid_field`).

use std::collections::HashMap;

use serde_json::{Map, Value};
use shared::address::Address;
use shared::wire::codes;

use crate::http::error::RelayError;

/// A request body read through [`Fields`]: one struct is both what the OpenAPI document shows
/// and what the handler gets, each field checked with its own code.
pub trait FromFields: Sized {
    /// The body's shape, named when it is not a JSON object.
    const SHAPE: &'static str;
    /// Every one of these that is missing is named in one `missing_required_fields`, before any
    /// field is checked.
    const REQUIRED: &'static [&'static str];
    fn from_fields(fields: &Fields) -> Result<Self, RelayError>;
}

/// Named fields of a query string or a JSON body, as text.
pub struct Fields {
    values: HashMap<String, String>,
}

impl Fields {
    pub fn from_query(query: HashMap<String, String>) -> Self {
        Fields { values: query }
    }

    /// A JSON object's fields: strings as they are, numbers as their decimal text; anything
    /// else is refused with `invalid_field`.
    pub fn from_body(bytes: &[u8], shape: &str) -> Result<Self, RelayError> {
        let body: Map<String, Value> = serde_json::from_slice(bytes)
            .map_err(|_| RelayError::BadRequest(format!("body must be a JSON object {shape}")))?;
        let mut values = HashMap::new();
        for (k, v) in body {
            let text = match v {
                Value::Null => continue,
                Value::String(s) => s,
                Value::Number(n) => n.to_string(),
                _ => return Err(RelayError::input(codes::INVALID_FIELD, format!("`{k}` must be a string"))),
            };
            values.insert(k, text);
        }
        Ok(Fields { values })
    }

    /// Reads `bytes` as the body `T`.
    pub fn parse<T: FromFields>(bytes: &[u8]) -> Result<T, RelayError> {
        let fields = Fields::from_body(bytes, T::SHAPE)?;
        fields.require(T::REQUIRED)?;
        T::from_fields(&fields)
    }

    /// Refuses with every one of `names` that is absent or empty.
    pub fn require(&self, names: &[&'static str]) -> Result<(), RelayError> {
        let missing: Vec<&'static str> = names.iter().copied().filter(|n| self.get(n).is_none()).collect();
        if missing.is_empty() { Ok(()) } else { Err(RelayError::MissingFields(missing)) }
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        self.values.get(name).map(String::as_str).filter(|v| !v.is_empty())
    }

    fn required(&self, name: &'static str) -> Result<&str, RelayError> {
        self.get(name).ok_or(RelayError::MissingFields(vec![name]))
    }

    /// A required field as it was sent.
    pub fn text(&self, name: &'static str) -> Result<String, RelayError> {
        self.required(name).map(str::to_string)
    }

    /// A wallet address (base58 of 32 bytes) when the field is present.
    pub fn optional_pubkey(&self, name: &'static str) -> Result<Option<Address>, RelayError> {
        self.get(name).map(|_| self.pubkey(name)).transpose()
    }

    /// A mint address (base58 of 32 bytes).
    pub fn mint(&self, name: &'static str) -> Result<Address, RelayError> {
        let text = self.required(name)?;
        Address::parse(text)
            .ok_or_else(|| RelayError::input(codes::INVALID_MINT, format!("`{name}` is not a base58 address")))
    }

    /// A wallet address (base58 of 32 bytes).
    pub fn pubkey(&self, name: &'static str) -> Result<Address, RelayError> {
        let text = self.required(name)?;
        Address::parse(text)
            .ok_or_else(|| RelayError::input(codes::INVALID_FIELD, format!("`{name}` is not a base58 address")))
    }

    /// A positive amount of base units (decimal digits, no sign, no leading zeros).
    pub fn amount(&self, name: &'static str) -> Result<u64, RelayError> {
        let text = self.required(name)?;
        match shared::amount::Amount::parse(text) {
            Some(n) if n.0 > 0 => Ok(n.0),
            _ => Err(RelayError::input(
                codes::INVALID_AMOUNT,
                format!("`{name}` must be a positive whole number of base units, as a string"),
            )),
        }
    }

    /// Basis points, 0 to 10000; `None` when absent.
    pub fn bps(&self, name: &'static str) -> Result<Option<u16>, RelayError> {
        match self.get(name) {
            None => Ok(None),
            Some(text) => text.parse::<u16>().ok().filter(|b| *b <= 10_000).map(Some).ok_or_else(|| {
                RelayError::input(codes::INVALID_FIELD, format!("`{name}` must be an integer from 0 to 10000"))
            }),
        }
    }

    /// A transaction signature (base58 of 64 bytes).
    pub fn signature(&self, name: &'static str) -> Result<String, RelayError> {
        let text = self.required(name)?;
        match bs58::decode(text).into_vec() {
            Ok(bytes) if bytes.len() == 64 => Ok(bs58::encode(bytes).into_string()),
            _ => {
                Err(RelayError::input(codes::INVALID_FIELD, format!("`{name}` is not a base58 transaction signature")))
            }
        }
    }
}

/// A session id from a path: a lower-case uuid, or 404 (an id that cannot exist).
pub fn session_id(text: &str) -> Result<String, RelayError> {
    shared::swap::parse_uuid(text)
        .map(|id| shared::swap::format_uuid(&id))
        .ok_or(RelayError::NotFound("no such session"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_missing_field_is_named_once() {
        let f = Fields::from_body(br#"{"fromMint": "", "amount": "5", "toMint": null}"#, "{}").unwrap();
        match f.require(&["fromMint", "toMint", "amount"]) {
            Err(RelayError::MissingFields(m)) => assert_eq!(m, ["fromMint", "toMint"]),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn each_field_has_its_code() {
        let f =
            Fields::from_body(br#"{"a": "01", "b": "0", "c": 12, "m": "not-base58!", "s": "10001", "g": "abc"}"#, "{}")
                .unwrap();
        let code = |r: Result<u64, RelayError>| r.unwrap_err().status_and_code().1.to_string();
        assert_eq!(code(f.amount("a")), "invalid_amount");
        assert_eq!(code(f.amount("b")), "invalid_amount");
        assert_eq!(f.amount("c").unwrap(), 12);
        assert_eq!(f.mint("m").unwrap_err().status_and_code().1, "invalid_mint");
        assert_eq!(f.bps("s").unwrap_err().status_and_code().1, "invalid_field");
        assert_eq!(f.bps("absent").unwrap(), None);
        assert_eq!(f.signature("g").unwrap_err().status_and_code().1, "invalid_field");
        assert!(Fields::from_body(br#"{"x": [1]}"#, "{}").is_err());
    }

    #[test]
    fn session_ids_are_uuids() {
        assert_eq!(session_id("0f8e4a2c-1b3d-4e5f-8a9b-0c1d2e3f4a5b").unwrap(), "0f8e4a2c-1b3d-4e5f-8a9b-0c1d2e3f4a5b");
        assert!(session_id("../etc").is_err());
    }
}
