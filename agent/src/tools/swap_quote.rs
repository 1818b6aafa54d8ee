//! `swap_quote`: skeleton, to be written.

use serde_json::{Value, json};

use crate::tool::{Args, Tool, ToolError, ToolFuture};
use crate::tools::ToolContext;

pub struct SwapQuote;

impl SwapQuote {
    pub fn new(_ctx: &ToolContext) -> Self {
        SwapQuote
    }
}

impl Tool for SwapQuote {
    fn name(&self) -> &'static str {
        "swap_quote"
    }
    fn description(&self) -> &'static str {
        "not written yet"
    }
    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {}})
    }
    fn call<'a>(&'a self, _args: &'a Args) -> ToolFuture<'a> {
        Box::pin(async { Err(ToolError::NotConfigured("swap_quote")) })
    }
}
