//! The model catalog (contract §2.1) and model-id resolution (§7 rule 1 lives in `agent`).
//!
//! Ids, aliases, status and context length are fixed here; endpoints and prices come from
//! each service's configuration.

/// The single GPU-network provider identifier (contract §2.3 `provider`, REST id prefix).
pub const PROVIDER: &str = "svc-gpu";
/// The model used when a request names none.
pub const DEFAULT_MODEL: &str = "gpt-oss:20b";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Live,
    Soon,
    Archived,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Live => "Live",
            Status::Soon => "Soon",
            Status::Archived => "Archived",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelInfo {
    /// Catalog id, e.g. `gpt-oss:20b`.
    pub id: &'static str,
    /// Id used by the client library, if it differs.
    pub client_id: Option<&'static str>,
    pub status: Status,
    pub context_length: u32,
    /// For archived models: the catalog id requests are mapped to.
    pub replaced_by: Option<&'static str>,
    /// Listed by `GET /api/v1/models`.
    pub listed: bool,
}

pub const CATALOG: &[ModelInfo] = &[
    ModelInfo {
        id: "gpt-oss:20b",
        client_id: Some("gpt-oss-20b"),
        status: Status::Live,
        context_length: 8192,
        replaced_by: None,
        listed: true,
    },
    ModelInfo {
        id: "qwen3.8:27b",
        client_id: None,
        status: Status::Live,
        context_length: 32768,
        replaced_by: None,
        listed: false,
    },
    ModelInfo {
        id: "gemma4:31b",
        client_id: None,
        status: Status::Soon,
        context_length: 262_144,
        replaced_by: None,
        listed: true,
    },
    ModelInfo {
        id: "qwen3:8b",
        client_id: Some("qwen3-8b"),
        status: Status::Archived,
        context_length: 32768,
        replaced_by: Some("qwen3.8:27b"),
        listed: false,
    },
];

pub fn lookup(catalog_id: &str) -> Option<&'static ModelInfo> {
    CATALOG.iter().find(|m| m.id == catalog_id)
}

/// The REST form of a catalog id: `<provider>:<id>`.
pub fn prefixed(catalog_id: &str) -> String {
    format!("{PROVIDER}:{catalog_id}")
}

/// Resolves what a caller sent to the id that will run: strips the provider prefix, maps
/// client-library ids to catalog ids, follows an archived model to its replacement, and
/// passes anything else through unchanged (it will then have no endpoint).
pub fn resolve(requested: &str) -> String {
    let bare = requested.strip_prefix(PROVIDER).and_then(|r| r.strip_prefix(':')).unwrap_or(requested);
    let entry = CATALOG.iter().find(|m| m.id == bare || m.client_id == Some(bare));
    match entry {
        Some(ModelInfo { replaced_by: Some(next), .. }) => (*next).to_string(),
        Some(m) => m.id.to_string(),
        None => bare.to_string(),
    }
}

/// Context window of a catalog id, if it is one.
pub fn context_length(id: &str) -> Option<u32> {
    CATALOG.iter().find(|m| m.id == id).map(|m| m.context_length)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolution() {
        assert_eq!(resolve("gpt-oss:20b"), "gpt-oss:20b");
        assert_eq!(resolve("svc-gpu:gpt-oss:20b"), "gpt-oss:20b");
        assert_eq!(resolve("gpt-oss-20b"), "gpt-oss:20b");
        assert_eq!(resolve("qwen3:8b"), "qwen3.8:27b");
        assert_eq!(resolve("qwen3-8b"), "qwen3.8:27b");
        assert_eq!(resolve("svc-gpu:qwen3:8b"), "qwen3.8:27b");
        assert_eq!(resolve("gemma4:31b"), "gemma4:31b");
        assert_eq!(resolve("llama-9000"), "llama-9000");
        // Only our own provider prefix is stripped.
        assert_eq!(resolve("other:gpt-oss:20b"), "other:gpt-oss:20b");
    }

    #[test]
    fn catalog_facts() {
        assert_eq!(lookup(DEFAULT_MODEL).unwrap().context_length, 8192);
        assert_eq!(lookup("gemma4:31b").unwrap().context_length, 262_144);
        let listed: Vec<_> = CATALOG.iter().filter(|m| m.listed).map(|m| m.id).collect();
        assert_eq!(listed, ["gpt-oss:20b", "gemma4:31b"]);
        assert_eq!(prefixed("gpt-oss:20b"), "svc-gpu:gpt-oss:20b");
    }
}
