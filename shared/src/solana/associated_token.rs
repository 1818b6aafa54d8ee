//! Associated Token Account program: the derived token account of (wallet, mint) and
//! `CreateIdempotent`, which succeeds when the account already exists.

use super::programs::{ASSOCIATED_TOKEN_PROGRAM, SYSTEM_PROGRAM};
use super::{AccountMeta, Instruction};
use crate::address::{Address, find_program_address};

const CREATE_IDEMPOTENT: u8 = 1;

/// The associated token account of `wallet` for `mint` under `token_program` (SPL Token or
/// Token-2022): the PDA of seeds (wallet, token program, mint).
pub fn address(wallet: &Address, mint: &Address, token_program: &Address) -> Address {
    find_program_address(&[&wallet.0, &token_program.0, &mint.0], &ASSOCIATED_TOKEN_PROGRAM)
        .expect("a PDA exists for all but a 2^-255 fraction of seeds")
        .0
}

/// Creates `wallet`'s token account for `mint` if missing, paid by `funder` (signs).
pub fn create_idempotent(funder: &Address, wallet: &Address, mint: &Address, token_program: &Address) -> Instruction {
    Instruction {
        program_id: ASSOCIATED_TOKEN_PROGRAM,
        accounts: vec![
            AccountMeta::writable(*funder, true),
            AccountMeta::writable(address(wallet, mint, token_program), false),
            AccountMeta::readonly(*wallet, false),
            AccountMeta::readonly(*mint, false),
            AccountMeta::readonly(SYSTEM_PROGRAM, false),
            AccountMeta::readonly(*token_program, false),
        ],
        data: vec![CREATE_IDEMPOTENT],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solana::programs::TOKEN_PROGRAM;

    /// Known vector (protocols.md §4.1): USDC account of a wallet.
    #[test]
    fn usdc_vector() {
        let owner = Address::parse("2wKupLR9q6wXYppw8Gr2NvWxKBUqm4PPJKkQfoxHDBg4").unwrap();
        let usdc = Address::parse("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v").unwrap();
        assert_eq!(address(&owner, &usdc, &TOKEN_PROGRAM).to_string(), "3XZXfFJHF5ox3yPop16oqYfSWxLpkjsEuvTe2S67G2rj");
        let ix = create_idempotent(&owner, &owner, &usdc, &TOKEN_PROGRAM);
        assert_eq!(ix.data, [1]);
        assert_eq!(ix.accounts[1].pubkey.to_string(), "3XZXfFJHF5ox3yPop16oqYfSWxLpkjsEuvTe2S67G2rj");
    }
}
