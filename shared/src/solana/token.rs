//! SPL Token instructions (program `Tokenkeg…`): the builders the swap service needs, and a
//! strict decoder of `Transfer` / `TransferChecked` for checking someone else's transaction.
//! Data is a one-byte tag then little-endian fields (the program's `TokenInstruction::pack`).

use super::programs::{TOKEN_2022_PROGRAM, TOKEN_PROGRAM};
use super::{AccountMeta, CompiledInstruction, Instruction, SolanaError, VersionedMessage};
use crate::address::Address;

/// Size of a token account (`spl_token::state::Account::LEN`).
pub const ACCOUNT_LEN: usize = 165;
/// Size of a mint (`spl_token::state::Mint::LEN`).
pub const MINT_LEN: usize = 82;

const TRANSFER: u8 = 3;
const MINT_TO: u8 = 7;
const CLOSE_ACCOUNT: u8 = 9;
const TRANSFER_CHECKED: u8 = 12;
const INITIALIZE_MINT2: u8 = 20;

fn with_amount(tag: u8, amount: u64) -> Vec<u8> {
    let mut data = vec![tag];
    data.extend_from_slice(&amount.to_le_bytes());
    data
}

fn instruction(accounts: Vec<AccountMeta>, data: Vec<u8>) -> Instruction {
    Instruction { program_id: TOKEN_PROGRAM, accounts, data }
}

/// Initializes a mint account (already created with [`MINT_LEN`] bytes and owned by the
/// program). No rent sysvar account needed, unlike `InitializeMint`.
pub fn initialize_mint2(mint: &Address, decimals: u8, authority: &Address, freeze: Option<&Address>) -> Instruction {
    let mut data = vec![INITIALIZE_MINT2, decimals];
    data.extend_from_slice(&authority.0);
    match freeze {
        Some(f) => {
            data.push(1);
            data.extend_from_slice(&f.0);
        }
        None => data.push(0),
    }
    instruction(vec![AccountMeta::writable(*mint, false)], data)
}

/// Mints `amount` base units to the token account `destination`; `authority` signs.
pub fn mint_to(mint: &Address, destination: &Address, authority: &Address, amount: u64) -> Instruction {
    instruction(
        vec![
            AccountMeta::writable(*mint, false),
            AccountMeta::writable(*destination, false),
            AccountMeta::readonly(*authority, true),
        ],
        with_amount(MINT_TO, amount),
    )
}

/// Moves `amount` between token accounts, checking the mint and its decimals.
pub fn transfer_checked(
    source: &Address,
    mint: &Address,
    destination: &Address,
    authority: &Address,
    amount: u64,
    decimals: u8,
) -> Instruction {
    let mut data = with_amount(TRANSFER_CHECKED, amount);
    data.push(decimals);
    instruction(
        vec![
            AccountMeta::writable(*source, false),
            AccountMeta::readonly(*mint, false),
            AccountMeta::writable(*destination, false),
            AccountMeta::readonly(*authority, true),
        ],
        data,
    )
}

/// Moves `amount` between token accounts without naming the mint (prefer `transfer_checked`).
pub fn transfer(source: &Address, destination: &Address, authority: &Address, amount: u64) -> Instruction {
    instruction(
        vec![
            AccountMeta::writable(*source, false),
            AccountMeta::writable(*destination, false),
            AccountMeta::readonly(*authority, true),
        ],
        with_amount(TRANSFER, amount),
    )
}

/// Closes a token account with a zero balance, sending its rent to `destination`.
pub fn close_account(account: &Address, destination: &Address, owner: &Address) -> Instruction {
    instruction(
        vec![
            AccountMeta::writable(*account, false),
            AccountMeta::writable(*destination, false),
            AccountMeta::readonly(*owner, true),
        ],
        vec![CLOSE_ACCOUNT],
    )
}

/// The amount of a `Transfer` or `TransferChecked`, and the decimals of the latter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TransferData {
    pub amount: u64,
    /// `Some` for `TransferChecked`.
    pub decimals: Option<u8>,
}

/// Decodes `Transfer` (9 bytes) or `TransferChecked` (10 bytes) data; any other length or tag
/// is refused (the program itself ignores trailing bytes; a checker should not).
pub fn decode_transfer_data(data: &[u8]) -> Result<TransferData, SolanaError> {
    let amount = |bytes: &[u8]| -> Result<u64, SolanaError> {
        Ok(u64::from_le_bytes(bytes.try_into().map_err(|_| SolanaError::Truncated)?))
    };
    match data {
        [TRANSFER, rest @ ..] if rest.len() == 8 => Ok(TransferData { amount: amount(rest)?, decimals: None }),
        [TRANSFER_CHECKED, rest @ .., decimals] if rest.len() == 8 => {
            Ok(TransferData { amount: amount(rest)?, decimals: Some(*decimals) })
        }
        _ => Err(SolanaError::UnexpectedInstruction("not a token transfer")),
    }
}

/// A token transfer found in a message, with its accounts resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenTransfer {
    /// SPL Token or Token-2022.
    pub program_id: Address,
    pub source: Address,
    /// Named by `TransferChecked` only.
    pub mint: Option<Address>,
    pub destination: Address,
    pub authority: Address,
    pub amount: u64,
    pub decimals: Option<u8>,
}

/// Decodes a compiled `Transfer` / `TransferChecked` of SPL Token or Token-2022 in `message`.
pub fn decode_transfer(message: &VersionedMessage, ix: &CompiledInstruction) -> Result<TokenTransfer, SolanaError> {
    let program_id = *message.program_id(ix).ok_or(SolanaError::IndexOutOfRange(0))?;
    if program_id != TOKEN_PROGRAM && program_id != TOKEN_2022_PROGRAM {
        return Err(SolanaError::UnexpectedInstruction("not a token program"));
    }
    let data = decode_transfer_data(&ix.data)?;
    let account = |n: usize| -> Result<Address, SolanaError> {
        if n >= ix.accounts.len() {
            return Err(SolanaError::UnexpectedInstruction("too few accounts for a token transfer"));
        }
        message.instruction_account(ix, n).copied().ok_or(SolanaError::UnresolvedAccount(n))
    };
    let (source, mint, destination, authority) = match data.decimals {
        None => (account(0)?, None, account(1)?, account(2)?),
        Some(_) => (account(0)?, Some(account(1)?), account(2)?, account(3)?),
    };
    Ok(TokenTransfer { program_id, source, mint, destination, authority, amount: data.amount, decimals: data.decimals })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::address::filled as a;
    use crate::solana::Message;

    #[test]
    fn known_layouts() {
        let ix = initialize_mint2(&a(1), 6, &a(2), None);
        assert_eq!(ix.data.len(), 35);
        assert_eq!(&ix.data[..2], &[20, 6]);
        assert_eq!(ix.data[34], 0);
        let ix = initialize_mint2(&a(1), 9, &a(2), Some(&a(3)));
        assert_eq!(ix.data.len(), 67);
        assert_eq!((ix.data[34], &ix.data[35..]), (1, &[3u8; 32][..]));
        assert_eq!(mint_to(&a(1), &a(2), &a(3), 1).data, [7, 1, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(transfer(&a(1), &a(2), &a(3), 256).data, [3, 0, 1, 0, 0, 0, 0, 0, 0]);
        assert_eq!(transfer_checked(&a(1), &a(2), &a(3), &a(4), 5, 6).data, [12, 5, 0, 0, 0, 0, 0, 0, 0, 6]);
        assert_eq!(close_account(&a(1), &a(2), &a(3)).data, [9]);
    }

    #[test]
    fn decodes_transfers_strictly() {
        assert_eq!(decode_transfer_data(&[3, 1, 0, 0, 0, 0, 0, 0, 0]), Ok(TransferData { amount: 1, decimals: None }));
        assert_eq!(
            decode_transfer_data(&[12, 2, 0, 0, 0, 0, 0, 0, 0, 9]),
            Ok(TransferData { amount: 2, decimals: Some(9) })
        );
        for bad in [
            &[][..],
            &[3],
            &[3, 1, 0, 0, 0, 0, 0, 0, 0, 0],
            &[12, 2, 0, 0, 0, 0, 0, 0, 0],
            &[7, 1, 0, 0, 0, 0, 0, 0, 0],
        ] {
            assert!(decode_transfer_data(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn decodes_a_transfer_in_a_message() {
        let ixs = [transfer_checked(&a(1), &a(2), &a(3), &a(4), 70, 6), transfer(&a(1), &a(3), &a(4), 8)];
        let message: VersionedMessage = Message::compile(&a(9), &ixs, [0; 32]).unwrap().into();
        let t = decode_transfer(&message, &message.instructions()[0]).unwrap();
        assert_eq!(
            t,
            TokenTransfer {
                program_id: TOKEN_PROGRAM,
                source: a(1),
                mint: Some(a(2)),
                destination: a(3),
                authority: a(4),
                amount: 70,
                decimals: Some(6)
            }
        );
        let t = decode_transfer(&message, &message.instructions()[1]).unwrap();
        assert_eq!((t.mint, t.destination, t.amount, t.decimals), (None, a(3), 8, None));
        let memo = crate::solana::memo::memo(b"x", &[]);
        let message: VersionedMessage = Message::compile(&a(9), &[memo], [0; 32]).unwrap().into();
        assert!(decode_transfer(&message, &message.instructions()[0]).is_err());
    }
}
