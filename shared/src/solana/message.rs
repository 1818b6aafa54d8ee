//! Legacy messages: header, account keys, recent blockhash, compiled instructions. What both
//! message versions share (the body, its checks, reading it back as instructions) lives here too.

use std::collections::BTreeSet;

use super::compile::compile;
use super::reader::Reader;
use super::{AccountMeta, CompiledInstruction, Hash, Instruction, SolanaError, shortvec};
use crate::address::Address;

/// How many of the account keys sign, and how many of the signers and non-signers are read-only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MessageHeader {
    pub num_required_signatures: u8,
    pub num_readonly_signed_accounts: u8,
    pub num_readonly_unsigned_accounts: u8,
}

/// A legacy message: what a legacy transaction's signatures sign.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    pub header: MessageHeader,
    pub account_keys: Vec<Address>,
    pub recent_blockhash: Hash,
    pub instructions: Vec<CompiledInstruction>,
}

impl Message {
    /// Compiles `instructions` with `payer` paying the fee, as Solana's `Message::new_with_blockhash`.
    pub fn compile(payer: &Address, instructions: &[Instruction], recent_blockhash: Hash) -> Result<Self, SolanaError> {
        let c = compile(payer, instructions)?;
        let message =
            Message { header: c.header, account_keys: c.keys, recent_blockhash, instructions: c.instructions };
        message.sanitize()?;
        Ok(message)
    }

    /// The wire bytes (what the signatures sign).
    pub fn serialize(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(256);
        write_body(&self.header, &self.account_keys, &self.recent_blockhash, &self.instructions, &mut out);
        out
    }

    /// Parses exactly one legacy message.
    pub fn parse(bytes: &[u8]) -> Result<Self, SolanaError> {
        Reader::whole(bytes, Self::read)
    }

    pub(super) fn read(r: &mut Reader<'_>) -> Result<Self, SolanaError> {
        let first = r.byte()?;
        if first & 0x80 != 0 {
            return Err(SolanaError::BadHeader("a versioned message where a legacy one was expected"));
        }
        let (header, account_keys, recent_blockhash, instructions) = read_body(first, r)?;
        let message = Message { header, account_keys, recent_blockhash, instructions };
        message.sanitize()?;
        Ok(message)
    }

    /// Solana's sanitize rules (plus no duplicate keys, and lengths that fit compact-u16).
    pub fn sanitize(&self) -> Result<(), SolanaError> {
        sanitize(&self.header, &self.account_keys, &self.instructions, 0)
    }
}

pub(super) fn write_body(
    header: &MessageHeader,
    keys: &[Address],
    blockhash: &Hash,
    instructions: &[CompiledInstruction],
    out: &mut Vec<u8>,
) {
    out.extend_from_slice(&[
        header.num_required_signatures,
        header.num_readonly_signed_accounts,
        header.num_readonly_unsigned_accounts,
    ]);
    shortvec::encode(u16::try_from(keys.len()).unwrap_or(u16::MAX), out);
    for key in keys {
        out.extend_from_slice(&key.0);
    }
    out.extend_from_slice(blockhash);
    shortvec::encode(u16::try_from(instructions.len()).unwrap_or(u16::MAX), out);
    for ix in instructions {
        ix.write(out);
    }
}

type Body = (MessageHeader, Vec<Address>, Hash, Vec<CompiledInstruction>);

/// Reads the body after its first header byte (already read: it tells the version apart).
pub(super) fn read_body(first: u8, r: &mut Reader<'_>) -> Result<Body, SolanaError> {
    let header = MessageHeader {
        num_required_signatures: first,
        num_readonly_signed_accounts: r.byte()?,
        num_readonly_unsigned_accounts: r.byte()?,
    };
    let n = r.len()?;
    let keys = (0..n).map(|_| r.array::<32>().map(Address)).collect::<Result<Vec<_>, _>>()?;
    let blockhash = r.array::<32>()?;
    let n = r.len()?;
    let instructions = (0..n).map(|_| CompiledInstruction::read(r)).collect::<Result<Vec<_>, _>>()?;
    Ok((header, keys, blockhash, instructions))
}

/// The checks of Solana's `Message::sanitize` / `v0::Message::sanitize`, with `dynamic` keys
/// loaded from lookup tables (0 for legacy).
pub(super) fn sanitize(
    header: &MessageHeader,
    keys: &[Address],
    instructions: &[CompiledInstruction],
    dynamic: usize,
) -> Result<(), SolanaError> {
    let required = usize::from(header.num_required_signatures);
    if required + usize::from(header.num_readonly_unsigned_accounts) > keys.len() {
        return Err(SolanaError::BadHeader("more signers and read-only accounts than keys"));
    }
    if header.num_readonly_signed_accounts >= header.num_required_signatures {
        return Err(SolanaError::BadHeader("no writable fee payer"));
    }
    let total = keys.len() + dynamic;
    if total > 256 || instructions.len() > usize::from(u16::MAX) {
        return Err(SolanaError::TooManyAccounts);
    }
    for (i, ix) in instructions.iter().enumerate() {
        let program = usize::from(ix.program_id_index);
        // A program is a static key and never the fee payer.
        if program == 0 || program >= keys.len() || ix.accounts.iter().any(|a| usize::from(*a) >= total) {
            return Err(SolanaError::IndexOutOfRange(i));
        }
        if ix.accounts.len() > usize::from(u16::MAX) || ix.data.len() > usize::from(u16::MAX) {
            return Err(SolanaError::LengthOverflow);
        }
    }
    // The runtime refuses a key loaded twice; refusing it here keeps index → key one-to-one.
    if keys.iter().collect::<BTreeSet<_>>().len() != keys.len() {
        return Err(SolanaError::DuplicateAccountKey);
    }
    Ok(())
}

/// Whether static key `i` signs.
pub(super) fn is_signer(header: &MessageHeader, i: usize) -> bool {
    i < usize::from(header.num_required_signatures)
}

/// Whether static key `i` is writable according to the header.
pub(super) fn is_writable(header: &MessageHeader, keys: usize, i: usize) -> bool {
    let required = usize::from(header.num_required_signatures);
    if i < required {
        i < required - usize::from(header.num_readonly_signed_accounts).min(required)
    } else {
        i < keys.saturating_sub(usize::from(header.num_readonly_unsigned_accounts))
    }
}

/// Turns compiled instructions back into instructions with keys and flags. Accounts from lookup
/// tables cannot be named without the tables: `UnresolvedAccount`.
pub(super) fn decompile(
    header: &MessageHeader,
    keys: &[Address],
    instructions: &[CompiledInstruction],
) -> Result<Vec<Instruction>, SolanaError> {
    let meta = |i: u8| {
        let i = usize::from(i);
        let pubkey = *keys.get(i).ok_or(SolanaError::UnresolvedAccount(i))?;
        Ok(AccountMeta { pubkey, is_signer: is_signer(header, i), is_writable: is_writable(header, keys.len(), i) })
    };
    instructions
        .iter()
        .map(|ix| {
            Ok(Instruction {
                program_id: meta(ix.program_id_index)?.pubkey,
                accounts: ix.accounts.iter().map(|a| meta(*a)).collect::<Result<_, SolanaError>>()?,
                data: ix.data.clone(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::address::filled as a;
    use crate::solana::system;

    /// A SOL transfer, laid out by hand from the wire format.
    #[test]
    fn transfer_known_answer() {
        let m = Message::compile(&a(1), &[system::transfer(&a(1), &a(2), 5000)], [7; 32]).unwrap();
        let mut want = vec![1, 0, 1, 3];
        want.extend_from_slice(&[1; 32]);
        want.extend_from_slice(&[2; 32]);
        want.extend_from_slice(&[0; 32]);
        want.extend_from_slice(&[7; 32]);
        want.extend_from_slice(&[1, 2, 2, 0, 1, 12, 2, 0, 0, 0, 0x88, 0x13, 0, 0, 0, 0, 0, 0]);
        assert_eq!(m.serialize(), want);
        assert_eq!(Message::parse(&want), Ok(m.clone()));
        let back = decompile(&m.header, &m.account_keys, &m.instructions).unwrap();
        assert_eq!(back, [system::transfer(&a(1), &a(2), 5000)]);
    }

    fn sample() -> Vec<u8> {
        Message::compile(&a(1), &[system::transfer(&a(1), &a(2), 1)], [7; 32]).unwrap().serialize()
    }

    #[test]
    fn parse_refuses_truncation_and_trailing_bytes() {
        let bytes = sample();
        for n in 0..bytes.len() {
            assert!(Message::parse(&bytes[..n]).is_err(), "prefix of {n} bytes accepted");
        }
        assert_eq!(Message::parse(&[bytes.clone(), vec![0]].concat()), Err(SolanaError::TrailingBytes));
    }

    #[test]
    fn sanitize_rules() {
        let good = Message::parse(&sample()).unwrap();
        let mut m = good.clone();
        m.header.num_readonly_signed_accounts = 1;
        assert!(matches!(m.sanitize(), Err(SolanaError::BadHeader(_))));
        let mut m = good.clone();
        m.header.num_required_signatures = 0;
        m.header.num_readonly_signed_accounts = 0;
        assert!(matches!(m.sanitize(), Err(SolanaError::BadHeader(_))));
        let mut m = good.clone();
        m.header.num_readonly_unsigned_accounts = 3;
        assert!(matches!(m.sanitize(), Err(SolanaError::BadHeader(_))));
        let mut m = good.clone();
        m.instructions[0].program_id_index = 0;
        assert_eq!(m.sanitize(), Err(SolanaError::IndexOutOfRange(0)));
        let mut m = good.clone();
        m.instructions[0].accounts[1] = 3;
        assert_eq!(m.sanitize(), Err(SolanaError::IndexOutOfRange(0)));
        let mut m = good.clone();
        m.account_keys[1] = a(1);
        assert_eq!(m.sanitize(), Err(SolanaError::DuplicateAccountKey));
        // A parse runs the same rules.
        assert!(Message::parse(&m.serialize()).is_err());
        // A versioned message is not a legacy one.
        assert!(matches!(Message::parse(&[&[0x80u8][..], &sample()].concat()), Err(SolanaError::BadHeader(_))));
    }

    #[test]
    fn header_flags() {
        let h = MessageHeader {
            num_required_signatures: 3,
            num_readonly_signed_accounts: 1,
            num_readonly_unsigned_accounts: 2,
        };
        let writable: Vec<bool> = (0..7).map(|i| is_writable(&h, 7, i)).collect();
        assert_eq!(writable, [true, true, false, true, true, false, false]);
        let signer: Vec<bool> = (0..7).map(|i| is_signer(&h, i)).collect();
        assert_eq!(signer, [true, true, true, false, false, false, false]);
    }
}
