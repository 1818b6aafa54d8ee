//! The six plans. Nodes run in order; every node is an action (a tool call or the model).

/// Where a tool node's arguments come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgsFrom {
    /// `web_search` for the prompt itself.
    SearchPrompt,
    /// `web_search` for the tokens named in the prompt, or the prompt.
    SearchTokens,
    /// `web_search` for today's market news.
    SearchMarket,
    /// `token_price` for the named tokens (SOL when none).
    PricesOfTokens,
    /// `token_price` for the majors (SOL, JUP, BONK).
    PricesOfMajors,
    /// `swap_quote` from the first named token to the second (USDC when one is named).
    QuoteFirstPair,
    /// `trending_tokens`, top 10.
    Trending,
    /// `solana_balance` of the first address in the prompt (required).
    BalanceOfAddress,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Tool {
        tool: &'static str,
        args: ArgsFrom,
    },
    /// The model writes the answer from the prompt and every earlier node's result.
    Answer {
        instruction: &'static str,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Node {
    pub id: &'static str,
    pub label: &'static str,
    pub action: Action,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    /// `braidTrace.grdId` and `braidOptions.forceGrdId`.
    pub id: &'static str,
    pub name: &'static str,
    pub nodes: &'static [Node],
}

const fn tool(id: &'static str, label: &'static str, tool: &'static str, args: ArgsFrom) -> Node {
    Node { id, label, action: Action::Tool { tool, args } }
}

const fn answer(instruction: &'static str) -> Node {
    Node { id: "answer", label: "Write the answer", action: Action::Answer { instruction } }
}

pub const PLANS: &[Plan] = &[
    Plan {
        id: "comparison",
        name: "Comparison",
        nodes: &[
            tool("search", "Search the web for both sides", "web_search", ArgsFrom::SearchPrompt),
            tool("prices", "Price the tokens compared", "token_price", ArgsFrom::PricesOfTokens),
            answer("Compare the items the user names side by side: a short table, then a verdict with reasons."),
        ],
    },
    Plan {
        id: "defi-analysis",
        name: "DeFi analysis",
        nodes: &[
            tool("prices", "Price the tokens involved", "token_price", ArgsFrom::PricesOfTokens),
            tool("route", "Quote a swap route", "swap_quote", ArgsFrom::QuoteFirstPair),
            tool("search", "Search protocol news", "web_search", ArgsFrom::SearchPrompt),
            answer("Analyse the DeFi question: prices, the quoted route and its price impact, risks. Be concrete."),
        ],
    },
    Plan {
        id: "general-research",
        name: "General research",
        nodes: &[
            tool("search", "Search the web", "web_search", ArgsFrom::SearchPrompt),
            answer("Answer the question from the search results; cite the URLs you used."),
        ],
    },
    Plan {
        id: "market-overview",
        name: "Market overview",
        nodes: &[
            tool("trending", "List trending tokens", "trending_tokens", ArgsFrom::Trending),
            tool("majors", "Price the majors", "token_price", ArgsFrom::PricesOfMajors),
            tool("news", "Search market news", "web_search", ArgsFrom::SearchMarket),
            answer("Give a market overview: majors, what is trending and why, notable news. Short sections."),
        ],
    },
    Plan {
        id: "token-research",
        name: "Token research",
        nodes: &[
            tool("price", "Price the token", "token_price", ArgsFrom::PricesOfTokens),
            tool("liquidity", "Quote a swap to USDC", "swap_quote", ArgsFrom::QuoteFirstPair),
            tool("search", "Search news about the token", "web_search", ArgsFrom::SearchTokens),
            answer("Summarise the token: price, liquidity (from the quote), news, and risks."),
        ],
    },
    Plan {
        id: "wallet-analysis",
        name: "Wallet analysis",
        nodes: &[
            tool("balance", "Read the wallet's balances", "solana_balance", ArgsFrom::BalanceOfAddress),
            tool("prices", "Price its tokens", "token_price", ArgsFrom::PricesOfTokens),
            answer("Describe the wallet: SOL and token holdings with their value where priced, and what stands out."),
        ],
    },
];

pub fn plan(id: &str) -> Option<&'static Plan> {
    PLANS.iter().find(|p| p.id == id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn six_plans_each_ending_in_an_answer_with_unique_node_ids() {
        assert_eq!(PLANS.len(), 6);
        let names: Vec<&str> = PLANS.iter().map(|p| p.name).collect();
        assert_eq!(
            names,
            ["Comparison", "DeFi analysis", "General research", "Market overview", "Token research", "Wallet analysis"]
        );
        for p in PLANS {
            assert!(matches!(p.nodes.last().unwrap().action, Action::Answer { .. }), "{}", p.id);
            let mut ids: Vec<&str> = p.nodes.iter().map(|n| n.id).collect();
            ids.sort();
            ids.dedup();
            assert_eq!(ids.len(), p.nodes.len(), "{}", p.id);
        }
        assert_eq!(plan("comparison").unwrap().name, "Comparison");
        assert!(plan("Comparison").is_none());
    }
}
