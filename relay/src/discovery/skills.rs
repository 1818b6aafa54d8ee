//! The one table of what the service offers agents (contract §2.11, §4.3, §4.4): the card's
//! skills, the capabilities document's routes and the MCP tools are all generated from it, so
//! they cannot disagree.

/// Whether a route answers today (contract status words).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, utoipa::ToSchema)]
pub enum Status {
    Live,
    Soon,
}

/// How a route is paid or authorised.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Auth {
    Public,
    ApiKey,
    ApiKeyOrX402,
    X402,
}

impl Auth {
    /// Names of the card's security schemes that apply.
    pub fn schemes(self) -> &'static [&'static str] {
        match self {
            Auth::Public => &[],
            Auth::ApiKey => &["ApiKey"],
            Auth::ApiKeyOrX402 => &["ApiKey", "X402"],
            Auth::X402 => &["X402"],
        }
    }
}

/// What a priced route costs (configuration decides the amount).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Price {
    Free,
    Quote,
    SessionStart,
    X402Call,
}

pub struct Skill {
    pub method: &'static str,
    pub path: &'static str,
    pub name: &'static str,
    pub description: &'static str,
    pub tags: &'static [&'static str],
    pub examples: &'static [&'static str],
    pub status: Status,
    pub auth: Auth,
    pub price: Price,
    /// It signs or sends transactions that move real funds.
    pub moves_funds: bool,
}

impl Skill {
    /// The card's skill id: `<METHOD> <path>` (contract §2.11).
    pub fn id(&self) -> String {
        format!("{} {}", self.method, self.path)
    }
}

const SWAP_TAGS: &[&str] = &["privacy", "swap", "solana"];
const WALLET_TAGS: &[&str] = &["privacy", "wallet", "solana"];

/// The fifteen skills of the card, in the contract's order (§2.11).
pub const SKILLS: [Skill; 15] = [
    Skill {
        method: "GET",
        path: "/agents/v1/quote",
        name: "Private swap quote",
        description: "Price a swap through the service's router: the router's output less the service's spread, and where the amount stands among the mint's denomination buckets.",
        tags: SWAP_TAGS,
        examples: &["How much TKN do I get for 10 USDC, privately?"],
        status: Status::Live,
        auth: Auth::ApiKeyOrX402,
        price: Price::Quote,
        moves_funds: false,
    },
    Skill {
        method: "GET",
        path: "/agents/v1/anonymity-set",
        name: "Anonymity set",
        description: "How many recent fundings share each standard denomination of a mint: the crowd a bucketed amount hides in.",
        tags: SWAP_TAGS,
        examples: &["How many 10 USDC fundings were there in the last day?"],
        status: Status::Live,
        auth: Auth::Public,
        price: Price::Free,
        moves_funds: false,
    },
    Skill {
        method: "POST",
        path: "/agents/v1/swaps/oneshot",
        name: "Start a one-shot private swap",
        description: "Mode B: the enclave makes a session key and signs the session's terms; the answer carries the unsigned funding transaction for the agent to check, sign and send. Moves real funds once funded.",
        tags: SWAP_TAGS,
        examples: &["Swap 10 USDC into TKN privately to a fresh address"],
        status: Status::Live,
        auth: Auth::ApiKeyOrX402,
        price: Price::SessionStart,
        moves_funds: true,
    },
    Skill {
        method: "POST",
        path: "/agents/v1/swaps/oneshot/{id}/execute",
        name: "Execute a funded one-shot swap",
        description: "Hand over the funding transaction's signature: the enclave checks it on chain, swaps through the router and pays the committed destination (or refunds the payer). Moves real funds.",
        tags: SWAP_TAGS,
        examples: &["Execute session 085c067d-… with funding 3A6m…"],
        status: Status::Live,
        auth: Auth::Public,
        price: Price::Free,
        moves_funds: true,
    },
    Skill {
        method: "GET",
        path: "/agents/v1/sessions/{id}",
        name: "Session status",
        description: "Poll a swap session until it is settled or failed.",
        tags: SWAP_TAGS,
        examples: &["Is session 085c067d-… settled?"],
        status: Status::Live,
        auth: Auth::Public,
        price: Price::Free,
        moves_funds: false,
    },
    Skill {
        method: "POST",
        path: "/agents/v1/wallets",
        name: "Create a managed wallet",
        description: "Mode A: a wallet whose key only the enclave holds, with a webhook for its events.",
        tags: WALLET_TAGS,
        examples: &["Create a managed wallet that notifies https://agent.example/hook"],
        status: Status::Live,
        auth: Auth::ApiKey,
        price: Price::Free,
        moves_funds: false,
    },
    Skill {
        method: "POST",
        path: "/agents/v1/wallets/{id}/swap",
        name: "Managed wallet swap",
        description: "Swap from a managed wallet's public balance to a destination: a swap session the wallet funds (the enclave signs; owner-signed when the wallet has an owner), a session to poll. Moves real funds.",
        tags: WALLET_TAGS,
        examples: &["Swap 10 USDC into TKN from my managed wallet"],
        status: Status::Live,
        auth: Auth::ApiKey,
        price: Price::SessionStart,
        moves_funds: true,
    },
    Skill {
        method: "POST",
        path: "/agents/v1/wallets/{id}/encrypt",
        name: "Encrypt a balance",
        description: "Move a managed wallet's tokens into its private balance (one transaction, a session to poll); owner-signed when the wallet has an owner. Moves real funds.",
        tags: WALLET_TAGS,
        examples: &["Encrypt 10 USDC of my managed wallet"],
        status: Status::Live,
        auth: Auth::ApiKey,
        price: Price::Free,
        moves_funds: true,
    },
    Skill {
        method: "POST",
        path: "/agents/v1/wallets/{id}/shield",
        name: "Shield to a fresh address",
        description: "A round trip through the privacy pool to a fresh destination: four transactions (deposit, a payout to an intermediate key, its delivery, its close) with random delays; one of the mint's denominations; no token conversion; owner-signed when the wallet has an owner. Moves real funds.",
        tags: WALLET_TAGS,
        examples: &["Shield 10 USDC to a fresh address"],
        status: Status::Live,
        auth: Auth::ApiKey,
        price: Price::Free,
        moves_funds: true,
    },
    Skill {
        method: "POST",
        path: "/agents/v1/wallets/{id}/withdraw",
        name: "Withdraw a private balance",
        description: "Pay out from a managed wallet's private balance to a public address; answers the enclave's signed order and the payout transaction. Moves real funds.",
        tags: WALLET_TAGS,
        examples: &["Withdraw 5 USDC to my address"],
        status: Status::Live,
        auth: Auth::ApiKey,
        price: Price::Free,
        moves_funds: true,
    },
    Skill {
        method: "GET",
        path: "/agents/v1/wallets/{id}/balance",
        name: "Managed wallet balance",
        description: "The wallet's balances per mint: encrypted (private) and public.",
        tags: WALLET_TAGS,
        examples: &["What is my managed wallet's USDC balance?"],
        status: Status::Live,
        auth: Auth::ApiKey,
        price: Price::Free,
        moves_funds: false,
    },
    Skill {
        method: "GET",
        path: "/agents/v1/wallets/{id}/audit",
        name: "Managed wallet audit log",
        description: "The wallet's operations, newest first.",
        tags: WALLET_TAGS,
        examples: &["List my managed wallet's operations"],
        status: Status::Live,
        auth: Auth::ApiKey,
        price: Price::Free,
        moves_funds: false,
    },
    Skill {
        method: "POST",
        path: "/agents/v1/wallets/{id}/fund-intent",
        name: "Fund a managed wallet",
        description: "An unsigned transaction moving tokens from the agent's wallet into the managed wallet.",
        tags: WALLET_TAGS,
        examples: &["Fund my managed wallet with 10 USDC"],
        status: Status::Live,
        auth: Auth::ApiKey,
        price: Price::Free,
        moves_funds: false,
    },
    Skill {
        method: "GET",
        path: "/agents/v1/attestations/{sessionId}",
        name: "Session attestation",
        description: "A settled session's enclave-signed receipt, its ledger address and explorer links.",
        tags: &["privacy", "attestation", "receipt"],
        examples: &["Show the receipt of session 085c067d-…"],
        status: Status::Live,
        auth: Auth::Public,
        price: Price::Free,
        moves_funds: false,
    },
    Skill {
        method: "POST",
        path: "/api/v1/x402/chat/completions",
        name: "Private inference, paid per call",
        description: "End-to-end encrypted chat completion sealed to the attested enclave, paid with one x402 stablecoin payment.",
        tags: &["privacy", "inference", "x402"],
        examples: &["Ask a private question and pay 0.005 USDC for it"],
        status: Status::Live,
        auth: Auth::X402,
        price: Price::X402Call,
        moves_funds: false,
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_name_real_paths() {
        let mut ids: Vec<String> = SKILLS.iter().map(Skill::id).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), 15);
        assert!(SKILLS.iter().all(|s| s.path.starts_with("/agents/v1/") || s.path == "/api/v1/x402/chat/completions"));
    }
}
