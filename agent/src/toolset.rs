//! The set of tools one loop may call, and how they are offered to the model.

use serde_json::{Value, json};

use crate::tool::{Tool, ToolLimits};
#[cfg(feature = "private-tools")]
use crate::tools::*;
#[cfg(feature = "private-tools")]
use std::time::Duration;

/// The tools one binary offers, with the bounds every call runs under.
pub struct ToolSet {
    tools: Vec<Box<dyn Tool>>,
    pub limits: ToolLimits,
}

impl ToolSet {
    pub fn new(tools: Vec<Box<dyn Tool>>, limits: ToolLimits) -> Self {
        ToolSet { tools, limits }
    }

    /// No tools: `useTools: false`.
    pub fn empty() -> Self {
        ToolSet { tools: Vec::new(), limits: ToolLimits::default() }
    }

    /// Exactly the five tools of encrypted mode.
    #[cfg(feature = "private-tools")]
    pub fn private(config: &ToolsConfig) -> Self {
        let ctx = ToolContext::from_config(config);
        let tools: Vec<Box<dyn Tool>> = vec![
            Box::new(web_search::WebSearch::new(&ctx)),
            Box::new(token_price::TokenPrice::new(&ctx)),
            Box::new(trending_tokens::TrendingTokens::new(&ctx)),
            Box::new(swap_quote::SwapQuote::new(&ctx)),
            Box::new(solana_balance::SolanaBalance::new(&ctx)),
        ];
        ToolSet { tools, limits: limits_of(config) }
    }

    /// All eighteen tools of the default path.
    #[cfg(feature = "all-tools")]
    pub fn full(config: &ToolsConfig) -> Self {
        let ctx = ToolContext::from_config(config);
        let tools: Vec<Box<dyn Tool>> = vec![
            Box::new(web_search::WebSearch::new(&ctx)),
            Box::new(scrape_url::ScrapeUrl::new(&ctx)),
            Box::new(crawl_url::CrawlUrl::new(&ctx)),
            Box::new(solana_balance::SolanaBalance::new(&ctx)),
            Box::new(token_price::TokenPrice::new(&ctx)),
            Box::new(swap_quote::SwapQuote::new(&ctx)),
            Box::new(trending_tokens::TrendingTokens::new(&ctx)),
            Box::new(deepwiki::Deepwiki::new(&ctx)),
            Box::new(colosseum::ColosseumSearch::new(&ctx)),
            Box::new(colosseum::ColosseumArchives::new(&ctx)),
            Box::new(paysh::PayshSearchApis::new(&ctx)),
            Box::new(paysh::PayshCallApi::new(&ctx)),
            Box::new(github::GithubListRepos::new(&ctx)),
            Box::new(github::GithubIssues::new(&ctx)),
            Box::new(github::GithubReadFile::new(&ctx)),
            Box::new(notion::NotionSearch::new(&ctx)),
            Box::new(notion::NotionGetPage::new(&ctx)),
            Box::new(notion::NotionQueryDatabase::new(&ctx)),
        ];
        ToolSet { tools, limits: limits_of(config) }
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
    pub fn specs(&self) -> Vec<Value> {
        self.tools
            .iter()
            .map(|t| {
                json!({"type": "function", "function": {
                    "name": t.name(), "description": t.description(), "parameters": t.parameters()
                }})
            })
            .collect()
    }
}

#[cfg(feature = "private-tools")]
fn limits_of(config: &ToolsConfig) -> ToolLimits {
    ToolLimits { timeout: Duration::from_secs(config.timeout_secs.max(1)), max_output_bytes: config.max_output_bytes }
}
