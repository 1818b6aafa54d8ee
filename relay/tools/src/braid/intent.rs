//! Intent detection: which plan fits a prompt. Keyword scores, ties broken by plan order;
//! nothing matched means general research. Deterministic, so a trace can be explained.

use super::entities::Entities;

const CUES: &[(&str, &[&str])] = &[
    (
        "comparison",
        &["compare", "comparison", " vs ", " vs. ", "versus", "difference between", "better than", "which is better"],
    ),
    (
        "defi-analysis",
        &["defi", "yield", "liquidity", "apy", "apr", "pool", "lending", "staking", "tvl", "swap", "protocol"],
    ),
    ("market-overview", &["market", "trending", "overview", "sentiment", "today", "movers", "top tokens"]),
    ("token-research", &["token", "price of", "tokenomics", "research", "coin"]),
    ("wallet-analysis", &["wallet", "holdings", "balance", "portfolio", "address"]),
];

/// The plan id for `prompt`.
pub fn detect(prompt: &str) -> &'static str {
    let text = format!(" {} ", prompt.to_lowercase());
    let entities = Entities::read(prompt);
    let mut best = ("general-research", 0usize);
    for (id, cues) in CUES {
        let mut score = cues.iter().filter(|c| text.contains(*c)).count() * 2;
        match *id {
            "wallet-analysis" if !entities.addresses.is_empty() => score += 3,
            "token-research" if !entities.tokens.is_empty() => score += 1,
            _ => {}
        }
        if score > best.1 {
            best = (id, score);
        }
    }
    best.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_plan_is_reachable_and_the_default_is_research() {
        assert_eq!(detect("Compare SOL vs JUP for a long-term hold"), "comparison");
        assert_eq!(detect("Where is the best yield for USDC liquidity pools?"), "defi-analysis");
        assert_eq!(detect("Give me a market overview: what is trending today?"), "market-overview");
        assert_eq!(detect("Tell me about BONK"), "token-research");
        assert_eq!(detect("What does 9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM hold?"), "wallet-analysis");
        assert_eq!(detect("Who wrote the Rust borrow checker paper?"), "general-research");
    }
}
