//! The arguments of the wallet and session tools both MCP servers offer: the relay's (`/mcp/v1`,
//! an agent with an API key) and `svc mcp` (the wallet's owner, who signs). One definition, so
//! an agent sees the same schema from either. Unknown arguments are refused: a misspelt
//! `slippageBps` must not fall back to the default silently.

use serde::Deserialize;

/// A session (uuid).
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionArgs {
    /// The session id (uuid).
    pub session_id: String,
}

/// A swap from a managed wallet's public balance.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WalletSwapArgs {
    /// The managed wallet (uuid).
    pub wallet_id: String,
    /// Input mint (base58).
    pub from_mint: String,
    /// Output mint (base58).
    pub to_mint: String,
    /// Base units of the input, as a string of digits.
    pub amount: String,
    /// The address whose token account receives the output (not the wallet itself).
    pub destination_pubkey: String,
    /// Slippage in basis points, 0 to 10000.
    pub slippage_bps: Option<u16>,
}

/// An encrypt: from a managed wallet's public balance into its private one.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EncryptArgs {
    /// The managed wallet (uuid).
    pub wallet_id: String,
    /// A mint the service lists (base58).
    pub mint: String,
    /// Base units, as a string of digits.
    pub amount: String,
}

/// A shield or a withdrawal: tokens of a managed wallet to a destination.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PayoutArgs {
    /// The managed wallet (uuid).
    pub wallet_id: String,
    /// A mint the service lists (base58).
    pub mint: String,
    /// Base units, as a string of digits (for a shield, one of the mint's denominations).
    pub amount: String,
    /// A fresh address whose token account receives the tokens.
    pub destination_pubkey: String,
}

/// A managed wallet's balances.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BalanceArgs {
    /// The managed wallet (uuid).
    pub wallet_id: String,
    /// Comma-separated mint addresses.
    pub mints: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_or_misspelt_argument_is_refused() {
        let good = serde_json::json!({"walletId": "w", "fromMint": "a", "toMint": "b", "amount": "1",
                                      "destinationPubkey": "d", "slippageBps": 50});
        let args: WalletSwapArgs = serde_json::from_value(good.clone()).unwrap();
        assert_eq!(args.slippage_bps, Some(50));
        let mut misspelt = good;
        misspelt.as_object_mut().unwrap().remove("slippageBps");
        misspelt["slipageBps"] = serde_json::json!(5000);
        let refused = serde_json::from_value::<WalletSwapArgs>(misspelt).unwrap_err().to_string();
        assert!(refused.contains("unknown field `slipageBps`"), "{refused}");
        assert!(serde_json::from_value::<SessionArgs>(serde_json::json!({"sessionId": "s", "x": 1})).is_err());
    }
}
