//! The set of tools one loop may call, and how they are offered to the model.

use serde_json::{Value, json};

use std::collections::BTreeMap;
use std::time::Duration;

use zeroize::Zeroizing;

use crate::tool::{Tool, ToolLimits, ToolSpec};
use crate::tools::*;

/// The tools one binary offers, what the model is told about them, and the bounds every call
/// runs under.
pub struct ToolSet {
    tools: Vec<Box<dyn Tool>>,
    /// The OpenAI `tools` array, in the order of `tools`.
    offered: Vec<Value>,
    pub limits: ToolLimits,
}

impl ToolSet {
    /// `tools`, each described by its spec in `specs`; a tool without one is left out (the
    /// tests of each set's names catch that).
    pub fn new(tools: Vec<Box<dyn Tool>>, specs: &[ToolSpec], limits: ToolLimits) -> Self {
        let (tools, offered) = tools
            .into_iter()
            .filter_map(|tool| {
                let spec = specs.iter().find(|s| s.name == tool.name())?;
                let function =
                    json!({"name": spec.name, "description": spec.description, "parameters": spec.parameters});
                Some((tool, json!({"type": "function", "function": function})))
            })
            .unzip();
        ToolSet { tools, offered, limits }
    }

    /// No tools: `useTools: false`.
    pub fn empty() -> Self {
        ToolSet { tools: Vec::new(), offered: Vec::new(), limits: ToolLimits::default() }
    }

    /// Exactly the five tools of encrypted mode, with the credentials of the enclave's secrets
    /// bundle (`None` until it is provisioned).
    pub fn private(config: &ToolsConfig, credentials: Option<&BTreeMap<String, Zeroizing<String>>>) -> Self {
        let ctx = ToolContext::provisioned(config, credentials);
        let tools: Vec<Box<dyn Tool>> = vec![
            Box::new(web_search::WebSearch::new(&ctx)),
            Box::new(token_price::TokenPrice::new(&ctx)),
            Box::new(trending_tokens::TrendingTokens::new(&ctx)),
            Box::new(swap_quote::SwapQuote::new(&ctx)),
            Box::new(solana_balance::SolanaBalance::new(&ctx)),
        ];
        ToolSet::new(tools, &specs(), limits_of(config))
    }

    pub fn names(&self) -> Vec<&'static str> {
        self.tools.iter().map(|t| t.name()).collect()
    }

    pub fn get(&self, name: &str) -> Option<&dyn Tool> {
        self.tools.iter().find(|t| t.name() == name).map(|t| t.as_ref())
    }

    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// The OpenAI `tools` array.
    pub fn specs(&self) -> &[Value] {
        &self.offered
    }
}

/// The bounds every call of a tool set configured by `config` runs under.
pub fn limits_of(config: &ToolsConfig) -> ToolLimits {
    ToolLimits { timeout: Duration::from_secs(config.timeout_secs.max(1)), max_output_bytes: config.max_output_bytes }
}
