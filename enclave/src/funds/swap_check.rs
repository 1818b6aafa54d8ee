//! What the enclave checks before it trusts a funding transaction or signs a router's swap
//! (DESIGN §11). Pure functions over parsed transactions, so every rule has a test.
//!
//! The rule that matters: the session key moves the session's input only to the router's swap,
//! in the committed amount, and the swap must pay at least the committed minimum into the
//! session's own output account. Everything else the enclave signs it builds itself, to the
//! committed destination or back to the payer.

use shared::address::Address;
use shared::solana::programs::{ASSOCIATED_TOKEN_PROGRAM, COMPUTE_BUDGET_PROGRAM, MEMO_PROGRAM, TOKEN_PROGRAM};
use shared::solana::{Transaction, VersionedMessage, token};
use shared::swap::ParsedTerms;

pub use shared::swap::funding::token_account as ata;

pub mod jupiter;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CheckError {
    #[error("the funding transaction failed on chain")]
    FundingFailed,
    #[error("the funding transaction is not signed by the session's payer")]
    FundingWrongPayer,
    #[error("the funding transaction does not carry this session's memo")]
    FundingNotForThisSession,
    #[error("the funding transaction moves another mint than the session's input")]
    FundingWrongMint,
    #[error("the funding transaction moves {moved} base units of the input, not {expected}")]
    FundingWrongAmount { moved: u64, expected: u64 },
    #[error("the router's transaction breaks the session's rules: {0}")]
    RouterTransaction(&'static str),
    #[error("the router's transaction pays {paid} base units, below the committed minimum {minimum}")]
    OutputBelowMinimum { paid: u64, minimum: u64 },
    #[error("the router's Jupiter transaction breaks a rule: {0}")]
    Jupiter(jupiter::Rule),
}

/// Checks that `tx` (as it landed; `failed` if its meta has an error) funded this session:
/// signed by the payer, carrying the session memo, moving exactly the amount of the input mint
/// from the payer into the session key's input account.
pub fn check_funding(
    terms: &ParsedTerms,
    session_key: &Address,
    tx: &Transaction,
    failed: bool,
) -> Result<(), CheckError> {
    if failed {
        return Err(CheckError::FundingFailed);
    }
    let message = &tx.message;
    if !message.signer_keys().contains(&terms.payer) {
        return Err(CheckError::FundingWrongPayer);
    }
    let memo = shared::swap::funding::memo_text(&terms.session_id);
    let has_memo = message
        .instructions()
        .iter()
        .any(|ix| message.program_id(ix) == Some(&MEMO_PROGRAM) && ix.data == memo.as_bytes());
    if !has_memo {
        return Err(CheckError::FundingNotForThisSession);
    }
    let input_account = ata(session_key, &terms.from_mint);
    let mut moved = 0u64;
    let mut other_mint = false;
    for ix in message.instructions() {
        let Ok(t) = token::decode_transfer(message, ix) else { continue };
        if t.program_id != TOKEN_PROGRAM || t.authority != terms.payer {
            continue;
        }
        match (t.destination == input_account, t.mint) {
            (true, Some(mint)) if mint == terms.from_mint => moved = moved.saturating_add(t.amount),
            (true, _) => other_mint = true,
            (false, Some(mint)) if t.destination == ata(session_key, &mint) => other_mint = true,
            _ => {}
        }
    }
    if moved == 0 && other_mint {
        return Err(CheckError::FundingWrongMint);
    }
    if moved != terms.amount {
        return Err(CheckError::FundingWrongAmount { moved, expected: terms.amount });
    }
    Ok(())
}

/// Checks a router's swap transaction before the session key signs it; returns what it pays
/// into the session's output account.
///
/// - the session key pays the fee and no one else needs to sign but the router's own keys;
/// - no lookup tables (their accounts could not be checked);
/// - only the token, associated-token, compute-budget programs and `router_programs` run, and
///   the session key is named by no instruction of any other program;
/// - where the session key is an authority, the instruction is a transfer out of its input
///   account, of the input mint, and all of them together move at most the committed amount;
/// - associated-token creations the session key funds create its own accounts only;
/// - transfers into its output account, of the output mint, add up to at least the minimum.
pub fn check_swap(
    terms: &ParsedTerms,
    session_key: &Address,
    tx: &Transaction,
    router_programs: &[Address],
) -> Result<u64, CheckError> {
    let bad = CheckError::RouterTransaction;
    let message = &tx.message;
    if message.fee_payer() != Some(session_key) {
        return Err(bad("the session key does not pay the fee"));
    }
    if !message.address_table_lookups().is_empty() {
        return Err(bad("address lookup tables are not accepted"));
    }
    let input_account = ata(session_key, &terms.from_mint);
    let output_account = ata(session_key, &terms.to_mint);
    let (mut spent, mut paid) = (0u64, 0u64);
    let mut fees = FeeBudget::default();
    for ix in message.instructions() {
        let program = *message.program_id(ix).ok_or(bad("an instruction names no program"))?;
        let names_session = (0..ix.accounts.len()).any(|n| message.instruction_account(ix, n) == Some(session_key));
        match program {
            TOKEN_PROGRAM => {
                let transfer = token::decode_transfer(message, ix).ok();
                match (transfer, names_session) {
                    (Some(t), true) if t.authority == *session_key => {
                        if t.source != input_account || t.mint.is_some_and(|m| m != terms.from_mint) {
                            return Err(bad("the session key moves something other than its input"));
                        }
                        spent = spent.saturating_add(t.amount);
                    }
                    (Some(t), _) if t.destination == output_account => {
                        if t.mint != Some(terms.to_mint) {
                            return Err(bad("the output is paid without naming the output mint"));
                        }
                        paid = paid.saturating_add(t.amount);
                    }
                    (Some(_), false) => {}
                    _ if names_session => {
                        return Err(bad("a token instruction other than a transfer names the session key"));
                    }
                    _ => {}
                }
            }
            ASSOCIATED_TOKEN_PROGRAM => {
                let wallet = message.instruction_account(ix, 2);
                if names_session && wallet != Some(session_key) {
                    return Err(bad("the session key funds an account that is not its own"));
                }
            }
            COMPUTE_BUDGET_PROGRAM => fees.read(&ix.data).map_err(bad)?,
            p if router_programs.contains(&p) && !names_session => {}
            _ => return Err(bad("an instruction of a program the enclave does not accept here")),
        }
    }
    fees.check().map_err(bad)?;
    if spent > terms.amount {
        return Err(bad("the session key would move more than the committed amount"));
    }
    if paid < terms.min_out {
        return Err(CheckError::OutputBelowMinimum { paid, minimum: terms.min_out });
    }
    Ok(paid)
}

/// A transaction's compute limit when none is set (the runtime's maximum, to bound the fee).
const MAX_COMPUTE_UNITS: u64 = 1_400_000;
/// The most priority fee a router's swap may spend from the session key's lamports.
pub const MAX_PRIORITY_FEE_LAMPORTS: u64 = 20_000;

/// A router transaction's compute-budget instructions: a unit limit and a unit price only, and
/// the priority fee they add up to within [`MAX_PRIORITY_FEE_LAMPORTS`] (it comes out of the
/// lamports the payer gave the session key).
struct FeeBudget {
    limit: u64,
    micro_lamports_per_unit: u64,
}

impl Default for FeeBudget {
    fn default() -> Self {
        FeeBudget { limit: MAX_COMPUTE_UNITS, micro_lamports_per_unit: 0 }
    }
}

impl FeeBudget {
    fn read(&mut self, data: &[u8]) -> Result<(), &'static str> {
        match (data.first(), data.get(1..)) {
            (Some(2), Some(units)) => {
                self.limit =
                    u64::from(u32::from_le_bytes(units.try_into().map_err(|_| "a malformed compute unit limit")?))
            }
            (Some(3), Some(price)) => {
                self.micro_lamports_per_unit =
                    u64::from_le_bytes(price.try_into().map_err(|_| "a malformed compute unit price")?)
            }
            _ => return Err("a compute budget instruction other than a unit limit or price"),
        }
        Ok(())
    }

    fn check(&self) -> Result<(), &'static str> {
        let fee = (u128::from(self.limit) * u128::from(self.micro_lamports_per_unit)).div_ceil(1_000_000);
        match fee <= u128::from(MAX_PRIORITY_FEE_LAMPORTS) {
            true => Ok(()),
            false => Err("the priority fee is above the session's fee budget"),
        }
    }
}

/// The signers a transaction still needs besides the session key (the router's own keys).
pub fn other_signers_present(tx: &Transaction, session_key: &Address) -> bool {
    let message: &VersionedMessage = &tx.message;
    message
        .signer_keys()
        .iter()
        .enumerate()
        .filter(|(_, k)| **k != *session_key)
        .all(|(i, _)| tx.verify_signature(i).is_ok())
}

#[cfg(test)]
mod tests;
