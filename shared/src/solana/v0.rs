//! Version 0 messages: a legacy body after the prefix byte `0x80`, then address table lookups
//! (accounts loaded from on-chain tables, so a router's transaction can name more keys).

use super::compile::compile;
use super::message::{is_writable, read_body, sanitize, write_body};
use super::reader::Reader;
use super::{CompiledInstruction, Hash, Instruction, MessageHeader, SolanaError, shortvec};
use crate::address::Address;

/// The prefix byte of a v0 message (high bit: versioned; low bits: version 0).
pub const V0_PREFIX: u8 = 0x80;

/// Accounts a v0 message loads from one address lookup table, by index in the table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddressTableLookup {
    pub account_key: Address,
    pub writable_indexes: Vec<u8>,
    pub readonly_indexes: Vec<u8>,
}

/// A v0 message. Account indexes past the static keys point into the lookups' accounts,
/// writable ones of every table first, then read-only ones.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageV0 {
    pub header: MessageHeader,
    pub account_keys: Vec<Address>,
    pub recent_blockhash: Hash,
    pub instructions: Vec<CompiledInstruction>,
    pub address_table_lookups: Vec<AddressTableLookup>,
}

impl MessageV0 {
    /// Compiles without lookup tables, as Solana's `v0::Message::try_compile(.., &[], ..)`.
    pub fn compile(payer: &Address, instructions: &[Instruction], recent_blockhash: Hash) -> Result<Self, SolanaError> {
        let c = compile(payer, instructions)?;
        let message = MessageV0 {
            header: c.header,
            account_keys: c.keys,
            recent_blockhash,
            instructions: c.instructions,
            address_table_lookups: Vec::new(),
        };
        message.sanitize()?;
        Ok(message)
    }

    /// Compiles with lookup tables, as Solana's `try_compile`: a key that is not a signer, not
    /// a called program and not in `keep_static` is loaded from the first table (in `tables`
    /// order) that lists it. Keeping a key static matters to a checker: a loaded key's slot is
    /// only an index into a table the signer cannot read.
    pub fn compile_with_lookups(
        payer: &Address,
        instructions: &[Instruction],
        recent_blockhash: Hash,
        tables: &[(Address, Vec<Address>)],
        keep_static: &[Address],
    ) -> Result<Self, SolanaError> {
        let c = compile(payer, instructions)?;
        let header = c.header;
        let signers = usize::from(header.num_required_signatures);
        let programs: Vec<u8> = c.instructions.iter().map(|ix| ix.program_id_index).collect();
        let movable = |i: usize| i >= signers && !programs.contains(&(i as u8)) && !keep_static.contains(&c.keys[i]);
        // Where each key goes: `Ok(static position)` or `Err((writable, table, index))`.
        let mut place: Vec<Option<(bool, usize, u8)>> = vec![None; c.keys.len()];
        let mut lookups: Vec<AddressTableLookup> = Vec::new();
        for (t, (table, addresses)) in tables.iter().enumerate() {
            let mut lookup =
                AddressTableLookup { account_key: *table, writable_indexes: vec![], readonly_indexes: vec![] };
            for (i, key) in c.keys.iter().enumerate() {
                let found = addresses.iter().position(|a| a == key).and_then(|n| u8::try_from(n).ok());
                if let (true, None, Some(n)) = (movable(i), place[i], found) {
                    let writable = is_writable(&header, c.keys.len(), i);
                    place[i] = Some((writable, t, n));
                    match writable {
                        true => lookup.writable_indexes.push(n),
                        false => lookup.readonly_indexes.push(n),
                    }
                }
            }
            if !lookup.writable_indexes.is_empty() || !lookup.readonly_indexes.is_empty() {
                lookups.push(lookup);
            }
        }
        // New indexes: static keys in order, then every table's writable loads, then readonly.
        let account_keys: Vec<Address> =
            c.keys.iter().zip(&place).filter(|(_, p)| p.is_none()).map(|(k, _)| *k).collect();
        let mut loaded: Vec<(bool, usize, u8)> = place.iter().flatten().copied().collect();
        loaded.sort_by_key(|(writable, t, _)| (!writable, *t));
        let index: Vec<u8> = (0..c.keys.len())
            .map(|i| match place[i] {
                None => c.keys[..i].iter().zip(&place).filter(|(_, p)| p.is_none()).count(),
                Some(p) => account_keys.len() + loaded.iter().position(|l| *l == p).unwrap_or(0),
            })
            .map(|n| u8::try_from(n).map_err(|_| SolanaError::TooManyAccounts))
            .collect::<Result<_, _>>()?;
        let moved_readonly = place.iter().flatten().filter(|(writable, _, _)| !writable).count();
        let header = MessageHeader {
            num_readonly_unsigned_accounts: header.num_readonly_unsigned_accounts - moved_readonly as u8,
            ..header
        };
        let instructions = c
            .instructions
            .into_iter()
            .map(|ix| CompiledInstruction {
                program_id_index: index[usize::from(ix.program_id_index)],
                accounts: ix.accounts.iter().map(|a| index[usize::from(*a)]).collect(),
                data: ix.data,
            })
            .collect();
        let message =
            MessageV0 { header, account_keys, recent_blockhash, instructions, address_table_lookups: lookups };
        message.sanitize()?;
        Ok(message)
    }

    /// The wire bytes, prefix included.
    pub fn serialize(&self) -> Vec<u8> {
        let mut out = vec![V0_PREFIX];
        write_body(&self.header, &self.account_keys, &self.recent_blockhash, &self.instructions, &mut out);
        shortvec::encode(u16::try_from(self.address_table_lookups.len()).unwrap_or(u16::MAX), &mut out);
        for lookup in &self.address_table_lookups {
            out.extend_from_slice(&lookup.account_key.0);
            for indexes in [&lookup.writable_indexes, &lookup.readonly_indexes] {
                shortvec::encode(u16::try_from(indexes.len()).unwrap_or(u16::MAX), &mut out);
                out.extend_from_slice(indexes);
            }
        }
        out
    }

    /// Parses exactly one v0 message, prefix included.
    pub fn parse(bytes: &[u8]) -> Result<Self, SolanaError> {
        Reader::whole(bytes, Self::read)
    }

    pub(super) fn read(r: &mut Reader<'_>) -> Result<Self, SolanaError> {
        let prefix = r.byte()?;
        if prefix & 0x80 == 0 {
            return Err(SolanaError::BadHeader("a legacy message where a v0 one was expected"));
        }
        if prefix != V0_PREFIX {
            return Err(SolanaError::UnsupportedVersion(prefix & 0x7f));
        }
        let first = r.byte()?;
        let (header, account_keys, recent_blockhash, instructions) = read_body(first, r)?;
        let n = r.len()?;
        let address_table_lookups = (0..n)
            .map(|_| {
                Ok(AddressTableLookup {
                    account_key: Address(r.array::<32>()?),
                    writable_indexes: r.bytes_vec()?,
                    readonly_indexes: r.bytes_vec()?,
                })
            })
            .collect::<Result<Vec<_>, SolanaError>>()?;
        let message = MessageV0 { header, account_keys, recent_blockhash, instructions, address_table_lookups };
        message.sanitize()?;
        Ok(message)
    }

    /// Solana's v0 sanitize rules: every lookup loads at least one account, at most 256 keys in
    /// all, programs only among the static keys.
    pub fn sanitize(&self) -> Result<(), SolanaError> {
        let mut dynamic = 0usize;
        for lookup in &self.address_table_lookups {
            let n = lookup.writable_indexes.len() + lookup.readonly_indexes.len();
            if n == 0 {
                return Err(SolanaError::BadHeader("an address table lookup that loads nothing"));
            }
            dynamic += n;
        }
        sanitize(&self.header, &self.account_keys, &self.instructions, dynamic)
    }

    /// How many accounts the lookups load.
    pub fn loaded_len(&self) -> usize {
        self.address_table_lookups.iter().map(|l| l.writable_indexes.len() + l.readonly_indexes.len()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::address::filled as a;
    use crate::solana::{Message, VersionedMessage, system};

    #[test]
    fn without_lookups_it_is_the_legacy_body_behind_a_prefix() {
        let ixs = [system::transfer(&a(1), &a(2), 9)];
        let legacy = Message::compile(&a(1), &ixs, [3; 32]).unwrap().serialize();
        let v0 = MessageV0::compile(&a(1), &ixs, [3; 32]).unwrap();
        assert_eq!(v0.serialize(), [&[V0_PREFIX][..], &legacy, &[0]].concat());
        assert_eq!(MessageV0::parse(&v0.serialize()), Ok(v0));
    }

    fn with_lookup() -> MessageV0 {
        let mut m = MessageV0::compile(&a(1), &[system::transfer(&a(1), &a(2), 9)], [3; 32]).unwrap();
        m.address_table_lookups.push(AddressTableLookup {
            account_key: a(8),
            writable_indexes: vec![4],
            readonly_indexes: vec![0, 44],
        });
        // Point the transfer's destination at the first loaded account (index 3 = static len).
        m.instructions[0].accounts[1] = 3;
        m
    }

    #[test]
    fn lookups_round_trip_and_resolve_only_static_keys() {
        let m = with_lookup();
        let bytes = m.serialize();
        // Count, table key, writable indexes, read-only indexes.
        assert_eq!(&bytes[bytes.len() - 38..bytes.len() - 5], &[&[1u8][..], &[8; 32]].concat()[..]);
        assert_eq!(&bytes[bytes.len() - 5..], &[1, 4, 2, 0, 44]);
        assert_eq!(MessageV0::parse(&bytes), Ok(m.clone()));
        assert_eq!(m.loaded_len(), 3);
        let v: VersionedMessage = m.into();
        let ix = &v.instructions()[0];
        assert_eq!(v.instruction_account(ix, 0), Some(&a(1)));
        assert_eq!(v.instruction_account(ix, 1), None);
        assert_eq!(v.decompile(), Err(SolanaError::UnresolvedAccount(3)));
    }

    #[test]
    fn v0_sanitize_rules() {
        let mut m = with_lookup();
        m.address_table_lookups[0].writable_indexes.clear();
        m.address_table_lookups[0].readonly_indexes.clear();
        assert!(matches!(m.sanitize(), Err(SolanaError::BadHeader(_))));
        let mut m = with_lookup();
        m.instructions[0].program_id_index = 3; // programs never come from a table
        assert_eq!(m.sanitize(), Err(SolanaError::IndexOutOfRange(0)));
        let mut m = with_lookup();
        m.instructions[0].accounts[1] = 6;
        assert_eq!(m.sanitize(), Err(SolanaError::IndexOutOfRange(0)));
        let mut bytes = with_lookup().serialize();
        bytes[0] = 0x81;
        assert_eq!(MessageV0::parse(&bytes), Err(SolanaError::UnsupportedVersion(1)));
    }
}
