//! Amounts in base units, as the contract writes them: a string of decimal digits (a JSON
//! number loses precision above 2^53 in JavaScript, and base units of a token go past it).

/// Base units of a token or a currency. In JSON a string: decimal digits only, no sign, no
/// leading zeros (but `"0"`), at most `u64::MAX`. Anything else is refused where it is read,
/// so a signed document that carries one says exactly one number.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Amount(pub u64);

impl Amount {
    pub fn parse(text: &str) -> Option<Self> {
        let canonical =
            !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) && (text == "0" || !text.starts_with('0'));
        if canonical { text.parse().ok().map(Amount) } else { None }
    }
}

impl std::fmt::Display for Amount {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl serde::Serialize for Amount {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Amount {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Amount::parse(&text).ok_or_else(|| serde::de::Error::custom("not an amount: decimal digits of base units"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_canonical_decimal_form_is_an_amount() {
        assert_eq!(Amount::parse("0"), Some(Amount(0)));
        assert_eq!(Amount::parse("18446744073709551615"), Some(Amount(u64::MAX)));
        for bad in ["", "01", "-1", "+1", "1.0", "1e6", " 1", "18446744073709551616", "٣"] {
            assert_eq!(Amount::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn in_json_an_amount_is_its_decimal_string() {
        assert_eq!(serde_json::to_string(&Amount(10_000_000)).unwrap(), r#""10000000""#);
        assert_eq!(serde_json::from_str::<Amount>(r#""10000000""#).unwrap(), Amount(10_000_000));
        for bad in [r#"10000000"#, r#""010""#, r#""1 ""#, "null"] {
            assert!(serde_json::from_str::<Amount>(bad).is_err(), "{bad}");
        }
    }
}
