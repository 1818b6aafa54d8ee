//! `deepwiki`: skeleton, to be written.

use serde_json::{Value, json};

use crate::tool::{Args, Tool, ToolError, ToolFuture};
use crate::tools::ToolContext;

pub struct Deepwiki;

impl Deepwiki {
    pub fn new(_ctx: &ToolContext) -> Self {
        Deepwiki
    }
}

impl Tool for Deepwiki {
    fn name(&self) -> &'static str {
        "deepwiki"
    }
    fn description(&self) -> &'static str {
        "not written yet"
    }
    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {}})
    }
    fn call<'a>(&'a self, _args: &'a Args) -> ToolFuture<'a> {
        Box::pin(async { Err(ToolError::NotConfigured("deepwiki")) })
    }
}
