//! System program instructions: `CreateAccount` (0) and `Transfer` (2). Data is a u32
//! little-endian tag then the fields, as the program's bincode layout.

use super::programs::SYSTEM_PROGRAM;
use super::{AccountMeta, Instruction, SolanaError};
use crate::address::Address;

const CREATE_ACCOUNT: u32 = 0;
const TRANSFER: u32 = 2;

/// Moves `lamports` from `from` (signs) to `to`.
pub fn transfer(from: &Address, to: &Address, lamports: u64) -> Instruction {
    let mut data = TRANSFER.to_le_bytes().to_vec();
    data.extend_from_slice(&lamports.to_le_bytes());
    Instruction {
        program_id: SYSTEM_PROGRAM,
        accounts: vec![AccountMeta::writable(*from, true), AccountMeta::writable(*to, false)],
        data,
    }
}

/// Creates `new` (which signs too) with `lamports`, `space` bytes of data, owned by `owner`.
pub fn create_account(from: &Address, new: &Address, lamports: u64, space: u64, owner: &Address) -> Instruction {
    let mut data = CREATE_ACCOUNT.to_le_bytes().to_vec();
    data.extend_from_slice(&lamports.to_le_bytes());
    data.extend_from_slice(&space.to_le_bytes());
    data.extend_from_slice(&owner.0);
    Instruction {
        program_id: SYSTEM_PROGRAM,
        accounts: vec![AccountMeta::writable(*from, true), AccountMeta::writable(*new, true)],
        data,
    }
}

/// The lamports of a `Transfer`'s data (exactly 12 bytes).
pub fn decode_transfer(data: &[u8]) -> Result<u64, SolanaError> {
    let data: &[u8; 12] = data.try_into().map_err(|_| SolanaError::UnexpectedInstruction("system transfer length"))?;
    let (tag, lamports) = data.split_at(4);
    if tag != TRANSFER.to_le_bytes() {
        return Err(SolanaError::UnexpectedInstruction("not a system transfer"));
    }
    Ok(u64::from_le_bytes(lamports.try_into().map_err(|_| SolanaError::Truncated)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_layouts() {
        let ix = transfer(&Address([1; 32]), &Address([2; 32]), 5000);
        assert_eq!(ix.data, [2, 0, 0, 0, 0x88, 0x13, 0, 0, 0, 0, 0, 0]);
        assert_eq!(decode_transfer(&ix.data), Ok(5000));
        assert!(decode_transfer(&ix.data[..11]).is_err());
        assert!(decode_transfer(&[0; 12]).is_err());
        let ix = create_account(&Address([1; 32]), &Address([2; 32]), 1_461_600, 82, &Address([3; 32]));
        assert_eq!(ix.data.len(), 52);
        assert_eq!(&ix.data[..4], &[0, 0, 0, 0]);
        assert_eq!(&ix.data[4..12], &1_461_600u64.to_le_bytes());
        assert_eq!(&ix.data[12..20], &82u64.to_le_bytes());
        assert_eq!(&ix.data[20..], &[3; 32]);
        assert!(ix.accounts.iter().all(|m| m.is_signer && m.is_writable));
    }
}
