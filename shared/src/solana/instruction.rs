//! Instructions before compilation (keys and flags) and after (indexes into a message's keys).

use super::reader::Reader;
use super::{SolanaError, shortvec};
use crate::address::Address;

/// An account an instruction reads or writes, and whether it must sign.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AccountMeta {
    pub pubkey: Address,
    pub is_signer: bool,
    pub is_writable: bool,
}

impl AccountMeta {
    pub fn writable(pubkey: Address, is_signer: bool) -> Self {
        AccountMeta { pubkey, is_signer, is_writable: true }
    }
    pub fn readonly(pubkey: Address, is_signer: bool) -> Self {
        AccountMeta { pubkey, is_signer, is_writable: false }
    }
}

/// One call to a program, with its accounts and data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instruction {
    pub program_id: Address,
    pub accounts: Vec<AccountMeta>,
    pub data: Vec<u8>,
}

/// An instruction inside a message: the program and accounts are indexes into its keys.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompiledInstruction {
    pub program_id_index: u8,
    pub accounts: Vec<u8>,
    pub data: Vec<u8>,
}

impl CompiledInstruction {
    pub(super) fn write(&self, out: &mut Vec<u8>) {
        out.push(self.program_id_index);
        write_bytes(&self.accounts, out);
        write_bytes(&self.data, out);
    }

    pub(super) fn read(r: &mut Reader<'_>) -> Result<Self, SolanaError> {
        Ok(CompiledInstruction { program_id_index: r.byte()?, accounts: r.bytes_vec()?, data: r.bytes_vec()? })
    }
}

/// A compact-u16 length and the bytes. Only a hand-built value can be longer than 65535 (a
/// transaction is at most 1232 bytes); `sanitize` refuses it and signing sanitizes first.
pub(super) fn write_bytes(bytes: &[u8], out: &mut Vec<u8>) {
    shortvec::encode(u16::try_from(bytes.len()).unwrap_or(u16::MAX), out);
    out.extend_from_slice(bytes);
}
