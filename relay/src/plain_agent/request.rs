//! `POST /agent` input (contract §2.2), checked field by field so every fault has a name.
//! Nothing here is charged or forwarded: a request that fails these checks costs nothing.

use serde_json::{Map, Value};

use shared::wire::codes;

use crate::http::error::RelayError;

fn invalid(code: &'static str, message: impl Into<String>) -> RelayError {
    RelayError::input(code, message)
}

/// The `/agent` request (contract §2.2).
// What the OpenAPI document shows is what `parse` reads first: each field's type checked with
// its own code, then the rules between fields.
#[derive(utoipa::ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct AgentBody {
    /// The question (plaintext path); empty beside `encryptedPrompt`.
    pub prompt: Option<String>,
    /// The prompt envelope JSON, sealed to the attested key (encrypted mode).
    pub encrypted_prompt: Option<String>,
    /// A catalog model id (default `gpt-oss:20b`).
    pub model: Option<String>,
    /// Tools on (default) or one plain completion.
    pub use_tools: Option<bool>,
    /// Keep history under this id (plaintext only): 1–128 of `A–Z a–z 0–9 - _ . :`.
    pub chat_id: Option<String>,
    /// `braid` (or its older name `serv`): guided reasoning.
    pub reasoning: Option<String>,
    pub braid_options: Option<BraidOptionsBody>,
}

#[derive(utoipa::ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct BraidOptionsBody {
    pub include_trace: Option<bool>,
    /// A plan id: `comparison`, `defi-analysis`, `general-research`, `market-overview`,
    /// `token-research`, `wallet-analysis`.
    pub force_grd_id: Option<String>,
}

impl AgentBody {
    /// Each field's JSON type; `null` is absent.
    fn read(body: &[u8]) -> Result<Self, RelayError> {
        let value: Value = serde_json::from_slice(body)
            .map_err(|_| invalid(codes::INVALID_FIELD, "the body must be a JSON object"))?;
        let Value::Object(fields) = value else {
            return Err(invalid(codes::INVALID_FIELD, "the body must be a JSON object"));
        };
        Ok(AgentBody {
            model: opt_string(&fields, "model")?,
            use_tools: opt_bool(&fields, "useTools")?,
            chat_id: opt_string(&fields, "chatId")?,
            reasoning: opt_string(&fields, "reasoning")?,
            braid_options: BraidOptionsBody::read(fields.get("braidOptions"))?,
            encrypted_prompt: opt_string(&fields, "encryptedPrompt")?,
            prompt: opt_string(&fields, "prompt")?,
        })
    }
}

impl BraidOptionsBody {
    fn read(value: Option<&Value>) -> Result<Option<Self>, RelayError> {
        let bad = |m: String| invalid(codes::INVALID_BRAID_OPTIONS, m);
        let fields = match value {
            None | Some(Value::Null) => return Ok(None),
            Some(Value::Object(f)) => f,
            Some(_) => return Err(bad("`braidOptions` must be an object".into())),
        };
        if let Some(unknown) = fields.keys().find(|k| !["includeTrace", "forceGrdId"].contains(&k.as_str())) {
            return Err(bad(format!(
                "`braidOptions.{}` is not an option",
                unknown.chars().take(40).collect::<String>()
            )));
        }
        let include_trace = match fields.get("includeTrace") {
            None | Some(Value::Null) => None,
            Some(Value::Bool(b)) => Some(*b),
            Some(_) => return Err(bad("`braidOptions.includeTrace` must be a boolean".into())),
        };
        let force_grd_id = match fields.get("forceGrdId") {
            None | Some(Value::Null) => None,
            Some(Value::String(id)) => Some(id.clone()),
            Some(_) => return Err(bad("`braidOptions.forceGrdId` must be a string".into())),
        };
        Ok(Some(BraidOptionsBody { include_trace, force_grd_id }))
    }

    /// The options, with a plan that exists.
    fn check(self) -> Result<BraidOptions, RelayError> {
        if let Some(id) = &self.force_grd_id
            && relay_tools::braid::plan(id).is_none()
        {
            let ids: Vec<&str> = relay_tools::braid::plan_ids().collect();
            let message = format!("`braidOptions.forceGrdId` must be one of {}", ids.join(", "));
            return Err(invalid(codes::INVALID_BRAID_OPTIONS, message));
        }
        Ok(BraidOptions { include_trace: self.include_trace.unwrap_or(false), force_grd_id: self.force_grd_id })
    }
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
pub fn parse(body: &[u8]) -> Result<AgentRequest, RelayError> {
    let body = AgentBody::read(body)?;
    let model = match body.model {
        Some(m) if m.trim().is_empty() => return Err(invalid(codes::INVALID_FIELD, "`model` must not be empty")),
        Some(m) => shared::catalog::resolve(m.trim()),
        None => shared::catalog::DEFAULT_MODEL.to_string(),
    };
    let use_tools = body.use_tools.unwrap_or(true);
    if let Some(id) = &body.chat_id
        && !super::chats::valid_chat_id(id)
    {
        return Err(invalid(codes::INVALID_FIELD, "`chatId` must be 1–128 characters of A–Z a–z 0–9 - _ . :"));
    }
    let braid = match body.reasoning.as_deref() {
        None => false,
        // SERV is BRAID's older name (contract §9.5).
        Some("braid" | "serv") => true,
        Some(_) => return Err(invalid(codes::UNKNOWN_REASONING, "`reasoning` accepts only \"braid\" (or \"serv\")")),
    };
    let braid_options = body.braid_options.map(BraidOptionsBody::check).transpose()?.unwrap_or_default();

    if let Some(encrypted_prompt) = body.encrypted_prompt {
        // Clients following the contract (§2.2: `prompt` required) send an empty one beside
        // the envelope; any other prompt would mean the relay saw plaintext.
        if body.prompt.is_some_and(|p| !p.is_empty()) {
            return Err(invalid(
                codes::INVALID_FIELD,
                "send an empty `prompt` with `encryptedPrompt`, never the prompt itself",
            ));
        }
        if braid || body.chat_id.is_some() {
            return Err(invalid(
                codes::INVALID_FIELD,
                "`reasoning` and `chatId` need the plaintext prompt; they are not available in encrypted mode",
            ));
        }
        return Ok(AgentRequest::Encrypted { encrypted_prompt, model });
    }

    let prompt = match body.prompt {
        None => return Err(invalid(codes::MISSING_PROMPT, "`prompt` is required")),
        Some(p) if p.trim().is_empty() => return Err(invalid(codes::MISSING_PROMPT, "`prompt` must not be empty")),
        Some(p) => p,
    };
    let path = if braid { Path::Braid(braid_options) } else { Path::ToolLoop { use_tools } };
    Ok(AgentRequest::Plain { prompt, model, chat_id: body.chat_id, path })
}

fn opt_string(fields: &Map<String, Value>, key: &str) -> Result<Option<String>, RelayError> {
    match fields.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(invalid(codes::INVALID_FIELD, format!("`{key}` must be a string"))),
    }
}

fn opt_bool(fields: &Map<String, Value>, key: &str) -> Result<Option<bool>, RelayError> {
    match fields.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(_) => Err(invalid(codes::INVALID_FIELD, format!("`{key}` must be a boolean"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(body: &str) -> String {
        parse(body.as_bytes()).unwrap_err().status_and_code().1.to_string()
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
        // Contract §2.2 marks `prompt` required: an empty one rides along with the envelope.
        let r = parse(br#"{"prompt": "", "encryptedPrompt": "{}"}"#).unwrap();
        assert_eq!(r, AgentRequest::Encrypted { encrypted_prompt: "{}".into(), model: "gpt-oss:20b".into() });
        // SERV is BRAID's older name (contract §9.5).
        let r = parse(br#"{"prompt": "x", "reasoning": "serv"}"#).unwrap();
        assert!(matches!(r, AgentRequest::Plain { path: Path::Braid(_), .. }));
    }

    #[test]
    fn every_fault_has_a_name() {
        assert_eq!(code("{}"), codes::MISSING_PROMPT);
        assert_eq!(code(r#"{"prompt": "  "}"#), codes::MISSING_PROMPT);
        assert_eq!(code(r#"{"prompt": 5}"#), codes::INVALID_FIELD);
        assert_eq!(code(r#"{"prompt": "x", "useTools": "yes"}"#), codes::INVALID_FIELD);
        assert_eq!(code(r#"{"prompt": "x", "model": 1}"#), codes::INVALID_FIELD);
        assert_eq!(code(r#"{"prompt": "x", "chatId": "a b"}"#), codes::INVALID_FIELD);
        assert_eq!(code(r#"{"prompt": "x", "reasoning": "chain"}"#), codes::UNKNOWN_REASONING);
        assert_eq!(code(r#"{"prompt": "x", "reasoning": 1}"#), codes::INVALID_FIELD);
        assert_eq!(code(r#"{"prompt": "x", "braidOptions": []}"#), codes::INVALID_BRAID_OPTIONS);
        assert_eq!(code(r#"{"prompt": "x", "braidOptions": {"forceGrdId": "nope"}}"#), codes::INVALID_BRAID_OPTIONS);
        assert_eq!(code(r#"{"prompt": "x", "braidOptions": {"includeTrace": 1}}"#), codes::INVALID_BRAID_OPTIONS);
        assert_eq!(code(r#"{"prompt": "x", "braidOptions": {"trace": true}}"#), codes::INVALID_BRAID_OPTIONS);
        assert_eq!(code(r#"{"prompt": "x", "encryptedPrompt": "{}"}"#), codes::INVALID_FIELD);
        assert_eq!(code(r#"{"prompt": " ", "encryptedPrompt": "{}"}"#), codes::INVALID_FIELD);
        assert_eq!(code(r#"{"encryptedPrompt": "{}", "reasoning": "braid"}"#), codes::INVALID_FIELD);
        assert_eq!(code("[1]"), codes::INVALID_FIELD);
        assert_eq!(code("not json"), codes::INVALID_FIELD);
    }
}
