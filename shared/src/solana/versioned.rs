//! Either message version, told apart by the first byte, with the accessors a checker needs.

use super::message::{decompile, is_signer, is_writable};
use super::reader::Reader;
use super::{
    AddressTableLookup, CompiledInstruction, Hash, Instruction, Message, MessageHeader, MessageV0, SolanaError,
};
use crate::address::Address;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VersionedMessage {
    Legacy(Message),
    V0(MessageV0),
}

impl From<Message> for VersionedMessage {
    fn from(m: Message) -> Self {
        VersionedMessage::Legacy(m)
    }
}

impl From<MessageV0> for VersionedMessage {
    fn from(m: MessageV0) -> Self {
        VersionedMessage::V0(m)
    }
}

impl VersionedMessage {
    /// Parses exactly one message of either version.
    pub fn parse(bytes: &[u8]) -> Result<Self, SolanaError> {
        Reader::whole(bytes, Self::read)
    }

    pub(super) fn read(r: &mut Reader<'_>) -> Result<Self, SolanaError> {
        match r.rest().first() {
            Some(b) if b & 0x80 != 0 => MessageV0::read(r).map(Self::V0),
            _ => Message::read(r).map(Self::Legacy),
        }
    }

    pub fn serialize(&self) -> Vec<u8> {
        match self {
            Self::Legacy(m) => m.serialize(),
            Self::V0(m) => m.serialize(),
        }
    }

    pub fn sanitize(&self) -> Result<(), SolanaError> {
        match self {
            Self::Legacy(m) => m.sanitize(),
            Self::V0(m) => m.sanitize(),
        }
    }

    /// `None` for legacy, `Some(0)` for v0.
    pub fn version(&self) -> Option<u8> {
        match self {
            Self::Legacy(_) => None,
            Self::V0(_) => Some(0),
        }
    }

    pub fn header(&self) -> &MessageHeader {
        match self {
            Self::Legacy(m) => &m.header,
            Self::V0(m) => &m.header,
        }
    }

    /// The keys in the message itself (for v0, not those loaded from lookup tables).
    pub fn static_account_keys(&self) -> &[Address] {
        match self {
            Self::Legacy(m) => &m.account_keys,
            Self::V0(m) => &m.account_keys,
        }
    }

    pub fn recent_blockhash(&self) -> &Hash {
        match self {
            Self::Legacy(m) => &m.recent_blockhash,
            Self::V0(m) => &m.recent_blockhash,
        }
    }

    pub fn instructions(&self) -> &[CompiledInstruction] {
        match self {
            Self::Legacy(m) => &m.instructions,
            Self::V0(m) => &m.instructions,
        }
    }

    /// Empty for legacy messages.
    pub fn address_table_lookups(&self) -> &[AddressTableLookup] {
        match self {
            Self::Legacy(_) => &[],
            Self::V0(m) => &m.address_table_lookups,
        }
    }

    /// The fee payer: the first key.
    pub fn fee_payer(&self) -> Option<&Address> {
        self.static_account_keys().first()
    }

    /// The keys that must sign, in signature order.
    pub fn signer_keys(&self) -> &[Address] {
        let keys = self.static_account_keys();
        &keys[..usize::from(self.header().num_required_signatures).min(keys.len())]
    }

    /// Whether static key `i` signs.
    pub fn is_signer(&self, i: usize) -> bool {
        i < self.static_account_keys().len() && is_signer(self.header(), i)
    }

    /// Whether static key `i` is writable according to the header.
    pub fn is_writable(&self, i: usize) -> bool {
        let keys = self.static_account_keys().len();
        i < keys && is_writable(self.header(), keys, i)
    }

    /// The program an instruction calls.
    pub fn program_id(&self, ix: &CompiledInstruction) -> Option<&Address> {
        self.static_account_keys().get(usize::from(ix.program_id_index))
    }

    /// The key of an instruction's `n`-th account; `None` if it has fewer accounts or the
    /// account comes from a lookup table.
    pub fn instruction_account(&self, ix: &CompiledInstruction, n: usize) -> Option<&Address> {
        self.static_account_keys().get(usize::from(*ix.accounts.get(n)?))
    }

    /// The instructions with keys and flags (flags as the header gives them, so merged).
    pub fn decompile(&self) -> Result<Vec<Instruction>, SolanaError> {
        decompile(self.header(), self.static_account_keys(), self.instructions())
    }
}
