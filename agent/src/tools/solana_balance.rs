//! `solana_balance`: skeleton, to be written.

use serde_json::{Value, json};

use crate::tool::{Args, Tool, ToolError, ToolFuture};
use crate::tools::ToolContext;

pub struct SolanaBalance;

impl SolanaBalance {
    pub fn new(_ctx: &ToolContext) -> Self {
        SolanaBalance
    }
}

impl Tool for SolanaBalance {
    fn name(&self) -> &'static str {
        "solana_balance"
    }
    fn description(&self) -> &'static str {
        "not written yet"
    }
    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {}})
    }
    fn call<'a>(&'a self, _args: &'a Args) -> ToolFuture<'a> {
        Box::pin(async { Err(ToolError::NotConfigured("solana_balance")) })
    }
}
