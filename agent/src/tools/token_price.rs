//! `token_price`: skeleton, to be written.

use serde_json::{Value, json};

use crate::tool::{Args, Tool, ToolError, ToolFuture};
use crate::tools::ToolContext;

pub struct TokenPrice;

impl TokenPrice {
    pub fn new(_ctx: &ToolContext) -> Self {
        TokenPrice
    }
}

impl Tool for TokenPrice {
    fn name(&self) -> &'static str {
        "token_price"
    }
    fn description(&self) -> &'static str {
        "not written yet"
    }
    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {}})
    }
    fn call<'a>(&'a self, _args: &'a Args) -> ToolFuture<'a> {
        Box::pin(async { Err(ToolError::NotConfigured("token_price")) })
    }
}
