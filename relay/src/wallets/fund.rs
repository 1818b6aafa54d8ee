//! The fund-intent transaction, and reading a wallet's public balances.

use chain::Chain;
use shared::address::Address;
use shared::solana::{Hash, Message, Transaction};
use shared::swap::funding::{token_account, token_transfer};

/// The unsigned transaction moving `amount` of `mint` from `payer` to `wallet`
/// ([`token_transfer`]). The payer is its only signer.
pub fn intent(
    payer: &Address,
    wallet: &Address,
    mint: &Address,
    amount: u64,
    decimals: u8,
    blockhash: Hash,
) -> Transaction {
    let instructions = token_transfer(payer, wallet, mint, amount, decimals);
    let message = Message::compile(payer, &instructions, blockhash).expect("two instructions, one signer, fits");
    Transaction::new_unsigned(message)
}

/// A wallet's public balance of one mint: `Some(base units)` (0 without a token account), or
/// `None` when the chain could not say.
pub async fn public_balance(chain: &impl Chain, wallet: &Address, mint: &Address) -> Option<u64> {
    match chain.token_balance(&token_account(wallet, mint)).await {
        Ok(amount) => Some(amount.unwrap_or(0)),
        Err(e) => {
            tracing::warn!(error = %e, %mint, "balance unknown: the chain did not answer");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_intent_is_create_then_transfer_signed_by_the_payer_only() {
        let (payer, wallet, mint) = (Address([1; 32]), Address([2; 32]), Address([3; 32]));
        let tx = intent(&payer, &wallet, &mint, 5_000, 6, [9; 32]);
        assert_eq!(tx.missing_signers(), vec![payer]);
        let bytes = tx.serialize();
        assert!(Transaction::parse(&bytes).is_ok());
    }
}
