//! `POST /agent` input (contract §2.2), checked field by field so every fault has a name.
//! Nothing here is charged or forwarded: a request that fails these checks costs nothing.

use serde_json::{Map, Value};

/// `error` codes of bad `/agent` input (answered `success: false`, HTTP 400).
pub mod codes {
    pub const MISSING_PROMPT: &str = "missing_prompt";
    pub const INVALID_FIELD: &str = "invalid_field";
    pub const UNKNOWN_REASONING: &str = "unknown_reasoning";
    pub const INVALID_BRAID_OPTIONS: &str = "invalid_braid_options";
    pub const CONTEXT_LENGTH_EXCEEDED: &str = shared::wire::codes::CONTEXT_LENGTH_EXCEEDED;
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputError {
    pub code: &'static str,
    pub message: String,
}

fn invalid(code: &'static str, message: impl Into<String>) -> InputError {
    InputError { code, message: message.into() }
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BraidOptions {
    pub include_trace: bool,
    pub force_grd_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Path {
    /// The tool loop (`use_tools`) or one plain completion.
    ToolLoop {
        use_tools: bool,
    },
    Braid(BraidOptions),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgentRequest {
    Plain {
        prompt: String,
        model: String,
        chat_id: Option<String>,
        path: Path,
    },
    /// Encrypted mode: the envelope goes to the enclave unread.
    Encrypted {
        encrypted_prompt: String,
        model: String,
    },
}

impl AgentRequest {
    pub fn model(&self) -> &str {
        match self {
            AgentRequest::Plain { model, .. } | AgentRequest::Encrypted { model, .. } => model,
        }
    }
}

/// Parses and checks a body. `model` comes back as a catalog id (prefixes and aliases resolved).
pub fn parse(body: &[u8]) -> Result<AgentRequest, InputError> {
    let value: Value =
        serde_json::from_slice(body).map_err(|_| invalid(codes::INVALID_FIELD, "the body must be a JSON object"))?;
    let Value::Object(fields) = value else {
        return Err(invalid(codes::INVALID_FIELD, "the body must be a JSON object"));
    };
    let model = match opt_string(&fields, "model")? {
        Some(m) if m.trim().is_empty() => return Err(invalid(codes::INVALID_FIELD, "`model` must not be empty")),
        Some(m) => shared::catalog::resolve(m.trim()),
        None => shared::catalog::DEFAULT_MODEL.to_string(),
    };
    let use_tools = opt_bool(&fields, "useTools")?.unwrap_or(true);
    let chat_id = opt_string(&fields, "chatId")?.map(str::to_string);
    if let Some(id) = &chat_id
        && !crate::chats::valid_chat_id(id)
    {
        return Err(invalid(codes::INVALID_FIELD, "`chatId` must be 1–128 characters of A–Z a–z 0–9 - _ . :"));
    }
    let braid = match opt_string(&fields, "reasoning")? {
        None => false,
        Some("braid") => true,
        Some(_) => return Err(invalid(codes::UNKNOWN_REASONING, "`reasoning` accepts only \"braid\"")),
    };
    let braid_options = braid_options(fields.get("braidOptions"))?;

    if let Some(envelope) = opt_string(&fields, "encryptedPrompt")? {
        if fields.get("prompt").is_some_and(|p| !p.is_null()) {
            return Err(invalid(codes::INVALID_FIELD, "send `prompt` or `encryptedPrompt`, not both"));
        }
        if braid || chat_id.is_some() {
            return Err(invalid(
                codes::INVALID_FIELD,
                "`reasoning` and `chatId` need the plaintext prompt; they are not available in encrypted mode",
            ));
        }
        return Ok(AgentRequest::Encrypted { encrypted_prompt: envelope.to_string(), model });
    }

    let prompt = match fields.get("prompt") {
        None | Some(Value::Null) => return Err(invalid(codes::MISSING_PROMPT, "`prompt` is required")),
        Some(Value::String(p)) if p.trim().is_empty() => {
            return Err(invalid(codes::MISSING_PROMPT, "`prompt` must not be empty"));
        }
        Some(Value::String(p)) => p.clone(),
        Some(_) => return Err(invalid(codes::INVALID_FIELD, "`prompt` must be a string")),
    };
    let path = if braid { Path::Braid(braid_options) } else { Path::ToolLoop { use_tools } };
    Ok(AgentRequest::Plain { prompt, model, chat_id, path })
}

fn opt_string<'a>(fields: &'a Map<String, Value>, key: &str) -> Result<Option<&'a str>, InputError> {
    match fields.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(invalid(codes::INVALID_FIELD, format!("`{key}` must be a string"))),
    }
}

fn opt_bool(fields: &Map<String, Value>, key: &str) -> Result<Option<bool>, InputError> {
    match fields.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(_) => Err(invalid(codes::INVALID_FIELD, format!("`{key}` must be a boolean"))),
    }
}

fn braid_options(value: Option<&Value>) -> Result<BraidOptions, InputError> {
    let bad = |m: String| invalid(codes::INVALID_BRAID_OPTIONS, m);
    let fields = match value {
        None | Some(Value::Null) => return Ok(BraidOptions::default()),
        Some(Value::Object(f)) => f,
        Some(_) => return Err(bad("`braidOptions` must be an object".into())),
    };
    if let Some(unknown) = fields.keys().find(|k| !["includeTrace", "forceGrdId"].contains(&k.as_str())) {
        return Err(bad(format!("`braidOptions.{}` is not an option", unknown.chars().take(40).collect::<String>())));
    }
    let include_trace = match fields.get("includeTrace") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err(bad("`braidOptions.includeTrace` must be a boolean".into())),
    };
    let force_grd_id = match fields.get("forceGrdId") {
        None | Some(Value::Null) => None,
        Some(Value::String(id)) if agent::braid::plan(id).is_some() => Some(id.clone()),
        Some(Value::String(_)) => {
            let ids: Vec<&str> = agent::braid::plan_ids().collect();
            return Err(bad(format!("`braidOptions.forceGrdId` must be one of {}", ids.join(", "))));
        }
        Some(_) => return Err(bad("`braidOptions.forceGrdId` must be a string".into())),
    };
    Ok(BraidOptions { include_trace, force_grd_id })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(body: &str) -> &'static str {
        parse(body.as_bytes()).unwrap_err().code
    }

    #[test]
    fn defaults_and_paths() {
        let r = parse(br#"{"prompt": "hi"}"#).unwrap();
        assert_eq!(
            r,
            AgentRequest::Plain {
                prompt: "hi".into(),
                model: "gpt-oss:20b".into(),
                chat_id: None,
                path: Path::ToolLoop { use_tools: true }
            }
        );
        let r =
            parse(br#"{"prompt": "hi", "model": "svc-gpu:gpt-oss-20b", "useTools": false, "chatId": "c1"}"#).unwrap();
        assert_eq!(
            r,
            AgentRequest::Plain {
                prompt: "hi".into(),
                model: "gpt-oss:20b".into(),
                chat_id: Some("c1".into()),
                path: Path::ToolLoop { use_tools: false }
            }
        );
        let r = parse(br#"{"prompt": "x", "reasoning": "braid", "braidOptions": {"includeTrace": true, "forceGrdId": "comparison"}}"#)
            .unwrap();
        let AgentRequest::Plain { path: Path::Braid(o), .. } = r else { panic!() };
        assert_eq!(o, BraidOptions { include_trace: true, force_grd_id: Some("comparison".into()) });
        let r = parse(br#"{"encryptedPrompt": "{}", "model": "qwen3:8b"}"#).unwrap();
        assert_eq!(r, AgentRequest::Encrypted { encrypted_prompt: "{}".into(), model: "qwen3.8:27b".into() });
    }

    #[test]
    fn every_fault_has_a_name() {
        assert_eq!(code("{}"), codes::MISSING_PROMPT);
        assert_eq!(code(r#"{"prompt": "  "}"#), codes::MISSING_PROMPT);
        assert_eq!(code(r#"{"prompt": 5}"#), codes::INVALID_FIELD);
        assert_eq!(code(r#"{"prompt": "x", "useTools": "yes"}"#), codes::INVALID_FIELD);
        assert_eq!(code(r#"{"prompt": "x", "model": 1}"#), codes::INVALID_FIELD);
        assert_eq!(code(r#"{"prompt": "x", "chatId": "a b"}"#), codes::INVALID_FIELD);
        assert_eq!(code(r#"{"prompt": "x", "reasoning": "serv"}"#), codes::UNKNOWN_REASONING);
        assert_eq!(code(r#"{"prompt": "x", "reasoning": 1}"#), codes::INVALID_FIELD);
        assert_eq!(code(r#"{"prompt": "x", "braidOptions": []}"#), codes::INVALID_BRAID_OPTIONS);
        assert_eq!(code(r#"{"prompt": "x", "braidOptions": {"forceGrdId": "nope"}}"#), codes::INVALID_BRAID_OPTIONS);
        assert_eq!(code(r#"{"prompt": "x", "braidOptions": {"includeTrace": 1}}"#), codes::INVALID_BRAID_OPTIONS);
        assert_eq!(code(r#"{"prompt": "x", "braidOptions": {"trace": true}}"#), codes::INVALID_BRAID_OPTIONS);
        assert_eq!(code(r#"{"prompt": "x", "encryptedPrompt": "{}"}"#), codes::INVALID_FIELD);
        assert_eq!(code(r#"{"encryptedPrompt": "{}", "reasoning": "braid"}"#), codes::INVALID_FIELD);
        assert_eq!(code("[1]"), codes::INVALID_FIELD);
        assert_eq!(code("not json"), codes::INVALID_FIELD);
    }
}
