//! The funding transaction of a one-shot session: built by the relay, checked instruction by
//! instruction by the client before the payer signs it (a relay could otherwise hand out a
//! transaction that pays itself), and recognised on chain by the enclave through its memo.
//!
//! Exactly four instructions, in this order:
//! 1. create the session key's input token account (idempotent; the payer funds its rent, and
//!    gets it back when the session closes the account);
//! 2. `TransferChecked` of the committed amount of the input mint from the payer's account;
//! 3. a lamport transfer to the session key: the rent of the accounts it opens and its fees
//!    (what is left goes back to the payer at the end);
//! 4. the memo `svc-session:<uuid>` that binds this funding to one session.

use crate::address::Address;
use crate::solana::associated_token;
use crate::solana::programs::TOKEN_PROGRAM;
#[cfg(feature = "swap-client")]
use crate::solana::programs::{ASSOCIATED_TOKEN_PROGRAM, MEMO_PROGRAM, SYSTEM_PROGRAM};
#[cfg(feature = "swap-client")]
use crate::solana::{Hash, Instruction, Message, Transaction, memo, system, token};

#[cfg(feature = "swap-client")]
use super::ParsedTerms;
use super::format_uuid;

/// The memo that binds a funding to its session.
pub fn memo_text(session_id: &[u8; 16]) -> String {
    format!("svc-session:{}", format_uuid(session_id))
}

/// A wallet's associated token account for `mint` (SPL Token).
pub fn token_account(owner: &Address, mint: &Address) -> Address {
    associated_token::address(owner, mint, &TOKEN_PROGRAM)
}

/// `amount` of `mint` from `payer`'s token account to `owner`'s: creates `owner`'s account
/// when it has none (idempotent create, rent paid by the payer), then a `TransferChecked`.
#[cfg(feature = "swap-client")]
pub fn token_transfer(payer: &Address, owner: &Address, mint: &Address, amount: u64, decimals: u8) -> [Instruction; 2] {
    [
        associated_token::create_idempotent(payer, owner, mint, &TOKEN_PROGRAM),
        token::transfer_checked(
            &token_account(payer, mint),
            mint,
            &token_account(owner, mint),
            payer,
            amount,
            decimals,
        ),
    ]
}

/// The unsigned funding transaction; the payer is its only signer.
#[cfg(feature = "swap-client")]
pub fn build(terms: &ParsedTerms, session_key: &Address, decimals: u8, lamports: u64, blockhash: Hash) -> Transaction {
    let payer = &terms.payer;
    let [create, transfer] = token_transfer(payer, session_key, &terms.from_mint, terms.amount, decimals);
    let instructions = [
        create,
        transfer,
        system::transfer(payer, session_key, lamports),
        memo::memo(memo_text(&terms.session_id).as_bytes(), &[]),
    ];
    let message = Message::compile(payer, &instructions, blockhash).expect("four instructions, one signer, fits");
    Transaction::new_unsigned(message)
}

#[cfg(feature = "swap-client")]
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("the funding transaction is not the one this session needs: {0}")]
pub struct NotTheFunding(pub &'static str);

/// Checks that `tx` is exactly [`build`]'s transaction for these terms (any blockhash, any
/// lamports up to `max_lamports`); returns the lamports it gives the session key.
#[cfg(feature = "swap-client")]
pub fn check(
    terms: &ParsedTerms,
    session_key: &Address,
    tx: &Transaction,
    max_lamports: u64,
) -> Result<u64, NotTheFunding> {
    let m = &tx.message;
    if m.fee_payer() != Some(&terms.payer) || m.signer_keys() != [terms.payer] {
        return Err(NotTheFunding("the payer must be the fee payer and the only signer"));
    }
    if !m.address_table_lookups().is_empty() {
        return Err(NotTheFunding("lookup tables are not expected"));
    }
    let [create, transfer, lamports, note] = m.instructions() else {
        return Err(NotTheFunding("expected exactly four instructions"));
    };
    let account = |ix, n| m.instruction_account(ix, n).copied();
    let mint = terms.from_mint;
    let expected_create = associated_token::create_idempotent(&terms.payer, session_key, &mint, &TOKEN_PROGRAM);
    let create_accounts: Vec<Option<Address>> = (0..create.accounts.len()).map(|n| account(create, n)).collect();
    let wanted: Vec<Option<Address>> = expected_create.accounts.iter().map(|a| Some(a.pubkey)).collect();
    if m.program_id(create) != Some(&ASSOCIATED_TOKEN_PROGRAM)
        || create.data != expected_create.data
        || create_accounts != wanted
    {
        return Err(NotTheFunding("the first instruction must create the session key's input account"));
    }
    let t = token::decode_transfer(m, transfer)
        .map_err(|_| NotTheFunding("the second instruction must be a token transfer"))?;
    let right_transfer = t.program_id == TOKEN_PROGRAM
        && t.mint == Some(mint)
        && t.source == token_account(&terms.payer, &mint)
        && t.destination == token_account(session_key, &mint)
        && t.authority == terms.payer
        && t.amount == terms.amount;
    if !right_transfer {
        return Err(NotTheFunding("the token transfer must move the committed amount to the session key"));
    }
    let gives = system::decode_transfer(&lamports.data)
        .map_err(|_| NotTheFunding("the third instruction must be a lamport transfer"))?;
    let right_lamports = m.program_id(lamports) == Some(&SYSTEM_PROGRAM)
        && lamports.accounts.len() == 2
        && account(lamports, 0) == Some(terms.payer)
        && account(lamports, 1) == Some(*session_key);
    if !right_lamports || gives > max_lamports {
        return Err(NotTheFunding("the lamport transfer must go to the session key, within the fee budget"));
    }
    let memo = memo_text(&terms.session_id);
    if m.program_id(note) != Some(&MEMO_PROGRAM) || note.data != memo.as_bytes() || !note.accounts.is_empty() {
        return Err(NotTheFunding("the last instruction must be this session's memo"));
    }
    Ok(gives)
}

#[cfg(all(test, feature = "swap-client"))]
mod tests {
    use super::*;
    use crate::solana::Instruction;

    fn terms() -> ParsedTerms {
        ParsedTerms {
            session_id: [7; 16],
            payer: Address([1; 32]),
            from_mint: Address([2; 32]),
            to_mint: Address([3; 32]),
            amount: 5_000_000,
            destination: Address([4; 32]),
            min_out: 1,
            expires_at: 1_800_000_000,
        }
    }

    fn tx_of(instructions: &[Instruction]) -> Transaction {
        Transaction::new_unsigned(Message::compile(&Address([1; 32]), instructions, [9; 32]).unwrap())
    }

    #[test]
    fn the_built_transaction_passes_and_says_its_lamports() {
        let session = Address([5; 32]);
        let tx = build(&terms(), &session, 6, 4_000_000, [9; 32]);
        assert_eq!(check(&terms(), &session, &tx, 4_000_000), Ok(4_000_000));
        assert!(check(&terms(), &session, &tx, 3_999_999).is_err(), "over the fee budget");
        // Another session key, or other terms, do not match.
        assert!(check(&terms(), &Address([6; 32]), &tx, u64::MAX).is_err());
        let more = ParsedTerms { amount: 5_000_001, ..terms() };
        assert!(check(&more, &session, &tx, u64::MAX).is_err());
        let other_session = ParsedTerms { session_id: [8; 16], ..terms() };
        assert!(check(&other_session, &session, &tx, u64::MAX).is_err());
    }

    #[test]
    fn a_relay_that_pays_itself_is_caught() {
        let (t, session, thief) = (terms(), Address([5; 32]), Address([66; 32]));
        let honest = |to: &Address| {
            vec![
                associated_token::create_idempotent(&t.payer, &session, &t.from_mint, &TOKEN_PROGRAM),
                token::transfer_checked(
                    &token_account(&t.payer, &t.from_mint),
                    &t.from_mint,
                    &token_account(to, &t.from_mint),
                    &t.payer,
                    t.amount,
                    6,
                ),
                system::transfer(&t.payer, &session, 1000),
                memo::memo(memo_text(&t.session_id).as_bytes(), &[]),
            ]
        };
        assert!(check(&t, &session, &tx_of(&honest(&session)), 1000).is_ok());
        assert!(check(&t, &session, &tx_of(&honest(&thief)), 1000).is_err(), "tokens to another account");
        let mut lamports_away = honest(&session);
        lamports_away[2] = system::transfer(&t.payer, &thief, 1000);
        assert!(check(&t, &session, &tx_of(&lamports_away), 1000).is_err(), "lamports to another key");
        let mut extra = honest(&session);
        extra.push(system::transfer(&t.payer, &thief, 1));
        assert!(check(&t, &session, &tx_of(&extra), 1000).is_err(), "a fifth instruction");
        let mut no_memo = honest(&session);
        no_memo[3] = memo::memo(b"svc-session:other", &[]);
        assert!(check(&t, &session, &tx_of(&no_memo), 1000).is_err(), "another memo");
    }
}
