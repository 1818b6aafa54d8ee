//! Collateral, parsed once: callers cache a [`Collateral`] until `valid_until` and verify any
//! number of quotes against it without re-reading the JSON.

use dcap_qvl::QuoteCollateralV3;

pub const MAX_COLLATERAL_LEN: usize = 1 << 20;

#[derive(Debug, Clone)]
pub struct Collateral {
    pub(crate) inner: QuoteCollateralV3,
    /// Earliest `nextUpdate` of the TCB info and QE identity: results expire then.
    pub valid_until: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CollateralError {
    #[error("collateral is larger than {MAX_COLLATERAL_LEN} bytes")]
    Oversize,
    #[error("collateral is not dcap-qvl collateral JSON: {0}")]
    Malformed(String),
}

impl CollateralError {
    /// The verification document's reason for this failure.
    pub fn reason(&self) -> &'static str {
        match self {
            CollateralError::Oversize => "oversize",
            CollateralError::Malformed(_) => "malformed_collateral",
        }
    }
}

impl Collateral {
    pub fn from_json(text: &str) -> Result<Self, CollateralError> {
        if text.len() > MAX_COLLATERAL_LEN {
            return Err(CollateralError::Oversize);
        }
        let inner: QuoteCollateralV3 =
            serde_json::from_str(text).map_err(|e| CollateralError::Malformed(e.to_string()))?;
        let valid_until = [&inner.tcb_info, &inner.qe_identity]
            .iter()
            .filter_map(|body| {
                let v: serde_json::Value = serde_json::from_str(body).ok()?;
                crate::time::parse_rfc3339(v.get("nextUpdate")?.as_str()?)
            })
            .min();
        Ok(Collateral { inner, valid_until })
    }
}
