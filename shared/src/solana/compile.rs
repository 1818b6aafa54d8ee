//! Compiling instructions into a message's keys, header and indexes, exactly as Solana's
//! `CompiledKeys` does: the fee payer first; then signers-writable, signers-readonly,
//! non-signers-writable, non-signers-readonly, each group in ascending key order (Solana keeps
//! keys in a `BTreeMap`); a key used several times appears once with its flags OR-ed; a program
//! id is a read-only non-signer unless an instruction also uses it otherwise.

use std::collections::BTreeMap;

use super::{CompiledInstruction, Instruction, MessageHeader, SolanaError};
use crate::address::Address;

#[derive(Default, Clone, Copy)]
struct Flags {
    signer: bool,
    writable: bool,
}

/// The header, the account keys and the compiled instructions of a message.
pub(super) struct Compiled {
    pub header: MessageHeader,
    pub keys: Vec<Address>,
    pub instructions: Vec<CompiledInstruction>,
}

pub(super) fn compile(payer: &Address, instructions: &[Instruction]) -> Result<Compiled, SolanaError> {
    let mut flags = BTreeMap::<Address, Flags>::new();
    for ix in instructions {
        flags.entry(ix.program_id).or_default();
        for meta in &ix.accounts {
            let f = flags.entry(meta.pubkey).or_default();
            f.signer |= meta.is_signer;
            f.writable |= meta.is_writable;
        }
    }
    flags.remove(payer);

    let group = |signer: bool, writable: bool| {
        flags.iter().filter(move |(_, f)| f.signer == signer && f.writable == writable).map(|(k, _)| *k)
    };
    let readonly_signers = group(true, false).count();
    let readonly_unsigned = group(false, false).count();
    let keys: Vec<Address> = std::iter::once(*payer)
        .chain(group(true, true))
        .chain(group(true, false))
        .chain(group(false, true))
        .chain(group(false, false))
        .collect();
    let signers = 1 + group(true, true).count() + readonly_signers;
    let count = |n: usize| u8::try_from(n).map_err(|_| SolanaError::TooManyAccounts);
    let header = MessageHeader {
        num_required_signatures: count(signers)?,
        num_readonly_signed_accounts: count(readonly_signers)?,
        num_readonly_unsigned_accounts: count(readonly_unsigned)?,
    };
    if keys.len() > 256 {
        return Err(SolanaError::TooManyAccounts);
    }

    let index_of: BTreeMap<Address, u8> =
        keys.iter().enumerate().map(|(i, k)| (*k, u8::try_from(i).unwrap_or(u8::MAX))).collect();
    let index = |k: &Address| index_of.get(k).copied().ok_or(SolanaError::TooManyAccounts);
    let instructions = instructions
        .iter()
        .map(|ix| {
            Ok(CompiledInstruction {
                program_id_index: index(&ix.program_id)?,
                accounts: ix.accounts.iter().map(|m| index(&m.pubkey)).collect::<Result<_, _>>()?,
                data: ix.data.clone(),
            })
        })
        .collect::<Result<Vec<_>, SolanaError>>()?;
    Ok(Compiled { header, keys, instructions })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::address::filled as a;
    use crate::solana::AccountMeta;

    #[test]
    fn orders_groups_then_keys_and_merges_flags() {
        let ix = Instruction {
            program_id: a(9),
            accounts: vec![
                AccountMeta::readonly(a(8), false),
                AccountMeta::readonly(a(7), true),
                AccountMeta::writable(a(6), false),
                AccountMeta::writable(a(5), true),
                AccountMeta::readonly(a(4), false),
                AccountMeta::writable(a(4), false), // merged: writable
                AccountMeta::readonly(a(1), false), // the payer: stays first, signer, writable
            ],
            data: vec![1, 2],
        };
        let c = compile(&a(1), &[ix]).unwrap();
        assert_eq!(c.keys, [a(1), a(5), a(7), a(4), a(6), a(8), a(9)]);
        assert_eq!(
            c.header,
            MessageHeader {
                num_required_signatures: 3,
                num_readonly_signed_accounts: 1,
                num_readonly_unsigned_accounts: 2
            }
        );
        assert_eq!(c.instructions[0].program_id_index, 6);
        assert_eq!(c.instructions[0].accounts, [5, 2, 4, 1, 3, 3, 0]);
    }

    #[test]
    fn a_program_used_as_an_account_keeps_that_role() {
        let ix = Instruction { program_id: a(3), accounts: vec![AccountMeta::writable(a(3), false)], data: vec![] };
        let c = compile(&a(1), &[ix]).unwrap();
        assert_eq!(c.keys, [a(1), a(3)]);
        assert_eq!(c.header.num_readonly_unsigned_accounts, 0);
    }

    #[test]
    fn too_many_accounts() {
        let accounts = (0..=256u16)
            .map(|i| {
                let mut k = [0u8; 32];
                k[..2].copy_from_slice(&i.to_be_bytes());
                k[31] = 1;
                AccountMeta::readonly(Address(k), false)
            })
            .collect();
        let ix = Instruction { program_id: a(2), accounts, data: vec![] };
        assert!(matches!(compile(&a(1), &[ix]), Err(SolanaError::TooManyAccounts)));
    }
}
