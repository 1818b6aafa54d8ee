//! The published reference values (`measurements/*.json`), schema version 1:
//!
//! ```json
//! { "schemaVersion": 1,
//!   "images": [ { "name": "svc-enclave", "mrtd": "<96 hex>", "rtmr1": "<96 hex>", "rtmr2": "<96 hex>" } ],
//!   "rtmr0": [ { "platform": "qemu-10.2-q35-2cpu-4G", "value": "<96 hex>" } ],
//!   "mrConfigId": null, "mrOwner": null, "mrOwnerConfig": null,
//!   "minTcbEvaluationDataNumber": 18 }
//! ```
//! An image matches when MRTD, RTMR1 and RTMR2 all equal one entry (variants of one build,
//! such as two-pass MRTD, are separate entries). RTMR0 depends on the host platform, so it is
//! an allowlist of its own. The three host-chosen registers must be zero when `null`, or equal
//! the pinned value. `minTcbEvaluationDataNumber` (optional) is the oldest TCB evaluation
//! whose collateral any verifier accepts.

use serde::{Deserialize, Serialize};

pub type Mr = [u8; 48];

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Measurements {
    pub schema_version: u32,
    pub images: Vec<ImageMeasurement>,
    pub rtmr0: Vec<Rtmr0Entry>,
    #[serde(default, with = "opt_mr")]
    pub mr_config_id: Option<Mr>,
    #[serde(default, with = "opt_mr")]
    pub mr_owner: Option<Mr>,
    #[serde(default, with = "opt_mr")]
    pub mr_owner_config: Option<Mr>,
    /// The lowest `tcbEvaluationDataNumber` collateral may carry: published after an Intel TCB
    /// recovery, so TCB info from before it (which still rates the platform as it was) is
    /// refused by every verifier, however fresh its signature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_tcb_evaluation_data_number: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ImageMeasurement {
    pub name: String,
    #[serde(with = "mr")]
    pub mrtd: Mr,
    #[serde(with = "mr")]
    pub rtmr1: Mr,
    #[serde(with = "mr")]
    pub rtmr2: Mr,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Rtmr0Entry {
    pub platform: String,
    #[serde(with = "mr")]
    pub value: Mr,
}

#[derive(Debug, thiserror::Error)]
pub enum MeasurementsError {
    #[error("measurements file is not valid: {0}")]
    Invalid(String),
    #[error("measurements schemaVersion {0} is not supported (expected 1)")]
    Version(u32),
}

impl Measurements {
    /// A file that pins no image: only the platform is checked (DCAP, TCB, debug off). For
    /// checking a bare sample quote, never for trusting an enclave.
    pub fn pinning_nothing() -> Self {
        Measurements {
            schema_version: 1,
            images: vec![],
            rtmr0: vec![],
            mr_config_id: None,
            mr_owner: None,
            mr_owner_config: None,
            min_tcb_evaluation_data_number: None,
        }
    }

    pub fn from_json(text: &str) -> Result<Self, MeasurementsError> {
        let m: Measurements = serde_json::from_str(text).map_err(|e| MeasurementsError::Invalid(e.to_string()))?;
        if m.schema_version != 1 {
            return Err(MeasurementsError::Version(m.schema_version));
        }
        Ok(m)
    }
}

pub fn parse_mr(text: &str) -> Option<Mr> {
    if text.len() != 96 || text.bytes().any(|b| b.is_ascii_uppercase()) {
        return None;
    }
    let mut out = [0u8; 48];
    hex::decode_to_slice(text, &mut out).ok()?;
    Some(out)
}

mod mr {
    use serde::{Deserialize, Deserializer, Serializer};
    pub fn serialize<S: Serializer>(v: &super::Mr, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&hex::encode(v))
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<super::Mr, D::Error> {
        let text = String::deserialize(d)?;
        super::parse_mr(&text).ok_or_else(|| serde::de::Error::custom("expected 96 lowercase hex characters"))
    }
}

mod opt_mr {
    use serde::{Deserialize, Deserializer, Serializer};
    pub fn serialize<S: Serializer>(v: &Option<super::Mr>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(v) => s.serialize_str(&hex::encode(v)),
            None => s.serialize_none(),
        }
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<super::Mr>, D::Error> {
        match Option::<String>::deserialize(d)? {
            None => Ok(None),
            Some(text) => super::parse_mr(&text)
                .map(Some)
                .ok_or_else(|| serde::de::Error::custom("expected 96 lowercase hex characters or null")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_round_trip_and_strictness() {
        let text = format!(
            r#"{{"schemaVersion":1,"images":[{{"name":"a","mrtd":"{0}","rtmr1":"{1}","rtmr2":"{2}"}}],
               "rtmr0":[{{"platform":"p","value":"{0}"}}],"mrConfigId":null,"mrOwner":"{1}"}}"#,
            "aa".repeat(48),
            "bb".repeat(48),
            "cc".repeat(48)
        );
        let m = Measurements::from_json(&text).unwrap();
        assert_eq!(m.images[0].mrtd, [0xaa; 48]);
        assert_eq!(m.mr_owner, Some([0xbb; 48]));
        assert_eq!(m.mr_config_id, None);
        let again = Measurements::from_json(&serde_json::to_string(&m).unwrap()).unwrap();
        assert_eq!(again, m);
        assert!(Measurements::from_json(&text.replace("\"schemaVersion\":1", "\"schemaVersion\":2")).is_err());
        assert!(Measurements::from_json(&text.replace(&"aa".repeat(48), &"AA".repeat(48))).is_err());
        assert!(Measurements::from_json(&text.replace("\"name\":\"a\"", "\"name\":\"a\",\"x\":1")).is_err());
    }
}
