//! `trending_tokens`: skeleton, to be written.

use serde_json::{Value, json};

use crate::tool::{Args, Tool, ToolError, ToolFuture};
use crate::tools::ToolContext;

pub struct TrendingTokens;

impl TrendingTokens {
    pub fn new(_ctx: &ToolContext) -> Self {
        TrendingTokens
    }
}

impl Tool for TrendingTokens {
    fn name(&self) -> &'static str {
        "trending_tokens"
    }
    fn description(&self) -> &'static str {
        "not written yet"
    }
    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {}})
    }
    fn call<'a>(&'a self, _args: &'a Args) -> ToolFuture<'a> {
        Box::pin(async { Err(ToolError::NotConfigured("trending_tokens")) })
    }
}
