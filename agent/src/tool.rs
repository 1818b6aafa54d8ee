//! What a tool is, and how one call is bounded.
//!
//! A tool names itself and answers one call with a JSON value; what the model is told about it (a
//! [`ToolSpec`], sent as an OpenAI `function` tool) is data, one JSON file per binary. Every call
//! runs under a time limit and its output is capped, so a slow or huge upstream cannot stall the
//! loop or blow up the next prompt. A failure is data for the model (`{"error": ...}`), never a
//! panic and never the end of the loop.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use serde_json::{Map, Value, json};

/// The future one tool call returns (boxed so tools can live in one `Vec<Box<dyn Tool>>`).
pub type ToolFuture<'a> = Pin<Box<dyn Future<Output = Result<Value, ToolError>> + Send + 'a>>;

/// Arguments as the model sent them: always a JSON object (the loop refuses anything else
/// before a tool sees it).
pub type Args = Map<String, Value>;

pub trait Tool: Send + Sync {
    /// The contract's tool name, e.g. `web_search`.
    fn name(&self) -> &'static str;
    fn call<'a>(&'a self, args: &'a Args) -> ToolFuture<'a>;
}

/// What the model is told about one tool: its name, a sentence or two, and the JSON schema of
/// its arguments object. Each binary's are one file beside its tools (`tools/specs.json` here
/// and in `relay/tools`), so what the model reads is in one place, apart from the code that
/// answers it; each crate's tests check that the bounds a file states are the ones its tools
/// enforce.
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub parameters: Value,
}

/// The specs of a compiled-in JSON file (never input: the crate's tests read every file).
pub fn read_specs(json: &str) -> Vec<ToolSpec> {
    serde_json::from_str(json).expect("compiled-in tool specs are valid JSON of that shape")
}

/// Why a call produced no result. Messages go to the model and into `toolCalls`, so they
/// name the problem without echoing upstream bodies or credentials.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolError {
    #[error("tool `{0}` is not configured on this server (no upstream or no credentials)")]
    NotConfigured(&'static str),
    /// The enclave receives tool credentials only in a secrets bundle (DESIGN §10).
    #[error("not_provisioned: tool `{0}` needs a credential the enclave receives when it is provisioned")]
    NotProvisioned(&'static str),
    #[error("invalid arguments: {0}")]
    BadArguments(String),
    #[error("upstream {0}")]
    Upstream(String),
    #[error("refused: {0}")]
    Refused(String),
    #[error("timed out after {0} s")]
    Timeout(u64),
    #[error("unknown tool `{0}`")]
    Unknown(String),
}

impl ToolError {
    pub fn to_json(&self) -> Value {
        json!({ "error": self.to_string() })
    }
}

/// Per-call bounds.
#[derive(Debug, Clone, Copy)]
pub struct ToolLimits {
    pub timeout: Duration,
    /// Bytes of serialized JSON a result may take before it is cut.
    pub max_output_bytes: usize,
}

impl Default for ToolLimits {
    fn default() -> Self {
        ToolLimits { timeout: Duration::from_secs(20), max_output_bytes: 16 * 1024 }
    }
}

/// Runs one call under the limits. Always returns the JSON the model will see.
pub async fn run_bounded(tool: &dyn Tool, args: &Args, limits: ToolLimits) -> Value {
    let result = match tokio::time::timeout(limits.timeout, tool.call(args)).await {
        Ok(result) => result,
        Err(_) => Err(ToolError::Timeout(limits.timeout.as_secs())),
    };
    match result {
        Ok(value) => cap_output(value, limits.max_output_bytes),
        Err(e) => e.to_json(),
    }
}

/// Keeps a result under `max` bytes of JSON: a larger one is replaced by its serialized text,
/// cut on a character boundary and marked as truncated.
pub fn cap_output(value: Value, max: usize) -> Value {
    let text = value.to_string();
    if text.len() <= max {
        return value;
    }
    let mut end = max.saturating_sub(64);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    json!({ "truncated": true, "originalBytes": text.len(), "partial": &text[..end] })
}

/// Reads a required string argument.
pub fn str_arg<'a>(args: &'a Args, key: &str) -> Result<&'a str, ToolError> {
    match args.get(key) {
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(s),
        Some(Value::String(_)) => Err(ToolError::BadArguments(format!("`{key}` must not be empty"))),
        Some(_) => Err(ToolError::BadArguments(format!("`{key}` must be a string"))),
        None => Err(ToolError::BadArguments(format!("`{key}` is required"))),
    }
}

/// Reads an optional string argument.
pub fn opt_str_arg<'a>(args: &'a Args, key: &str) -> Result<Option<&'a str>, ToolError> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(ToolError::BadArguments(format!("`{key}` must be a string"))),
    }
}

/// Reads an optional non-negative integer argument bounded by `max` (models often send
/// numbers as strings; both are accepted).
pub fn opt_u64_arg(args: &Args, key: &str, max: u64) -> Result<Option<u64>, ToolError> {
    let value = match args.get(key) {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Number(n)) => n.as_u64(),
        Some(Value::String(s)) => s.trim().parse().ok(),
        Some(_) => None,
    };
    match value {
        Some(v) if v <= max => Ok(Some(v)),
        Some(_) => Err(ToolError::BadArguments(format!("`{key}` must be at most {max}"))),
        None => Err(ToolError::BadArguments(format!("`{key}` must be a non-negative integer"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Slow;
    impl Tool for Slow {
        fn name(&self) -> &'static str {
            "slow"
        }
        fn call<'a>(&'a self, _args: &'a Args) -> ToolFuture<'a> {
            Box::pin(async {
                tokio::time::sleep(Duration::from_secs(60)).await;
                Ok(json!("late"))
            })
        }
    }

    #[tokio::test]
    async fn a_slow_tool_becomes_a_timeout_error() {
        let limits = ToolLimits { timeout: Duration::from_millis(20), max_output_bytes: 1024 };
        let out = run_bounded(&Slow, &Args::new(), limits).await;
        assert_eq!(out, json!({"error": "timed out after 0 s"}));
    }

    #[test]
    fn large_output_is_cut_on_a_char_boundary_and_marked() {
        let big = json!({"text": "é".repeat(10_000)});
        let out = cap_output(big.clone(), 1000);
        assert_eq!(out["truncated"], true);
        assert_eq!(out["originalBytes"], big.to_string().len());
        assert!(out.to_string().len() <= 1200);
        assert!(out["partial"].as_str().unwrap().starts_with("{\"text\":\"éé"));
        let small = json!({"a": 1});
        assert_eq!(cap_output(small.clone(), 1000), small);
    }

    #[test]
    fn argument_readers_name_the_fault() {
        let args: Args = serde_json::from_value(json!({"q": "", "n": "7", "m": -1, "s": 3})).unwrap();
        assert_eq!(str_arg(&args, "q"), Err(ToolError::BadArguments("`q` must not be empty".into())));
        assert_eq!(str_arg(&args, "x"), Err(ToolError::BadArguments("`x` is required".into())));
        assert_eq!(str_arg(&args, "s"), Err(ToolError::BadArguments("`s` must be a string".into())));
        assert_eq!(opt_u64_arg(&args, "n", 10), Ok(Some(7)));
        assert!(opt_u64_arg(&args, "n", 5).is_err());
        assert!(opt_u64_arg(&args, "m", 5).is_err());
        assert_eq!(opt_u64_arg(&args, "absent", 5), Ok(None));
    }
}
