//! Sorting a JSON-RPC error into the variants callers act on. The node's texts (Solana's and
//! the local chain's, tests/chain/README.md) are stable enough to match on; `data.err` (the
//! `TransactionError` of a failed simulation) is matched first where present.

use serde_json::Value;

use crate::ChainError;

pub(crate) fn classify(code: i64, message: String, data: Option<&Value>) -> ChainError {
    let err = data.and_then(|d| d.get("err"));
    let err_name = err.and_then(Value::as_str).unwrap_or_default();
    let lower = message.to_ascii_lowercase();
    if err_name == "AlreadyProcessed" || lower.contains("already been processed") {
        return ChainError::AlreadyProcessed;
    }
    if err_name == "BlockhashNotFound" || lower.contains("blockhash not found") {
        return ChainError::BlockhashNotFound;
    }
    let funds_error = matches!(err_name, "InsufficientFundsForFee" | "InsufficientFundsForRent" | "AccountNotFound")
        || lower.contains("insufficient funds")
        || logs_say_insufficient_funds(data);
    if funds_error {
        return ChainError::InsufficientFunds(message);
    }
    ChainError::Rpc { code, message }
}

/// The token program reports a short balance only in its logs (`Error: insufficient funds`,
/// custom error 0x1 otherwise meaning other things in other programs).
fn logs_say_insufficient_funds(data: Option<&Value>) -> bool {
    data.and_then(|d| d.get("logs"))
        .and_then(Value::as_array)
        .is_some_and(|logs| logs.iter().filter_map(Value::as_str).any(|l| l.contains("Error: insufficient funds")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The local chain's texts (tests/chain/README.md).
    #[test]
    fn sorts_the_local_chains_errors() {
        let replay = "Transaction verification failed for transaction Internal error: \"Transaction error: This transaction has already been processed\"";
        assert_eq!(classify(-32002, replay.into(), None), ChainError::AlreadyProcessed);
        let stale = "Transaction simulation failed: Blockhash not found";
        assert_eq!(
            classify(-32002, stale.into(), Some(&json!({"err": "BlockhashNotFound"}))),
            ChainError::BlockhashNotFound
        );
        let rent =
            "Transaction simulation failed: Transaction results in an account (1) with insufficient funds for rent";
        assert!(matches!(
            classify(-32002, rent.into(), Some(&json!({"err": {"InsufficientFundsForRent": {"account_index": 1}}}))),
            ChainError::InsufficientFunds(_)
        ));
        let tokens = "Transaction simulation failed: Error processing Instruction 0: custom program error: 0x1";
        let data = json!({"err": {"InstructionError": [0, {"Custom": 1}]}, "logs": ["Program log: Error: insufficient funds"]});
        assert!(matches!(classify(-32002, tokens.into(), Some(&data)), ChainError::InsufficientFunds(_)));
        let decimals = "Transaction simulation failed: Error processing Instruction 0: custom program error: 0x12";
        assert_eq!(
            classify(-32002, decimals.into(), Some(&json!({"err": {"InstructionError": [0, {"Custom": 18}]}}))),
            ChainError::Rpc { code: -32002, message: decimals.into() }
        );
    }
}
