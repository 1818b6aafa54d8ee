//! Receipt commits for the embedded ledger, as Solana legacy transactions.
//!
//! Each stored receipt is committed as a one-instruction transaction signed by the relay's
//! ledger key: the instruction calls the attestation program with data `0x02 ‖ sha256(ciphertext)`.
//! Its base58 signature is the transaction id that `GET /attestation/by-tx/{signature}` takes.
//! The layout is the real Solana wire format (compact-u16 lengths, message header, account
//! keys, recent blockhash, instructions), so a Solana writer can post the same message; the
//! embedded ledger chains commits by using the previous commit's hash as the blockhash.

pub mod anchor;

use ed25519_dalek::{Signer, SigningKey};

use crate::address::Address;
use crate::keys::PromptHash;
use crate::solana::{CompiledInstruction, Message, MessageHeader, Transaction, VersionedMessage};

/// Instruction tag for "record a v2 receipt".
pub const ATTEST_V2_TAG: u8 = 0x02;
const DATA_LEN: usize = 33;
const MESSAGE_LEN: usize = 3 + 1 + 64 + 32 + 1 + 1 + 1 + 1 + DATA_LEN;
/// Total length of a commit transaction: one signature and the fixed message.
pub const TX_LEN: usize = 1 + 64 + MESSAGE_LEN;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum LedgerError {
    #[error("commit transaction has the wrong length")]
    BadLength,
    #[error("commit transaction is not a receipt commit: {0}")]
    NotACommit(&'static str),
    #[error("commit transaction signature does not verify")]
    BadSignature,
}

/// A parsed receipt commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Commit {
    pub signature: [u8; 64],
    pub payer: [u8; 32],
    pub program_id: Address,
    pub recent_blockhash: [u8; 32],
    pub prompt_hash: PromptHash,
}

impl Commit {
    /// The transaction id: base58 of the signature.
    pub fn id(&self) -> String {
        format_id(&self.signature)
    }
}

/// Formats a transaction id (base58 of the signature).
pub fn format_id(signature: &[u8; 64]) -> String {
    crate::solana::signature_id(signature)
}

/// The commit message, with its keys laid out by hand rather than compiled: payer then program,
/// whatever their byte order (a compiled message would merge them if they were equal).
fn message(payer: &[u8; 32], program_id: &Address, blockhash: &[u8; 32], prompt_hash: &[u8; 32]) -> Message {
    let mut data = Vec::with_capacity(DATA_LEN);
    data.push(ATTEST_V2_TAG);
    data.extend_from_slice(prompt_hash);
    one_instruction(payer, program_id, blockhash, data)
}

/// A transaction of one instruction to `program_id` with no accounts, paid by `payer`.
fn one_instruction(payer: &[u8; 32], program_id: &Address, blockhash: &[u8; 32], data: Vec<u8>) -> Message {
    Message {
        // 1 required signature, 0 read-only signed, 1 read-only unsigned (the program).
        header: MessageHeader {
            num_required_signatures: 1,
            num_readonly_signed_accounts: 0,
            num_readonly_unsigned_accounts: 1,
        },
        account_keys: vec![Address(*payer), *program_id],
        recent_blockhash: *blockhash,
        instructions: vec![CompiledInstruction { program_id_index: 1, accounts: vec![], data }],
    }
}

/// Builds and signs a commit; returns the transaction bytes and the parsed commit.
pub fn build(
    key: &SigningKey,
    program_id: &Address,
    blockhash: &[u8; 32],
    prompt_hash: &PromptHash,
) -> (Vec<u8>, Commit) {
    let payer = key.verifying_key().to_bytes();
    let msg = message(&payer, program_id, blockhash, &prompt_hash.0);
    // Signed directly: the payer is the one signer by construction.
    let signature = key.sign(&msg.serialize()).to_bytes();
    let tx = Transaction { signatures: vec![signature], message: msg.into() }.serialize();
    let commit =
        Commit { signature, payer, program_id: *program_id, recent_blockhash: *blockhash, prompt_hash: *prompt_hash };
    (tx, commit)
}

/// Parses a commit transaction strictly and verifies its signature against its fee payer.
pub fn parse_and_verify(tx: &[u8]) -> Result<Commit, LedgerError> {
    if tx.len() != TX_LEN {
        return Err(LedgerError::BadLength);
    }
    if tx[0] != 1 {
        return Err(LedgerError::NotACommit("expected one signature"));
    }
    let tx = Transaction::parse(tx).map_err(|_| LedgerError::NotACommit("not a Solana transaction"))?;
    let VersionedMessage::Legacy(m) = &tx.message else {
        return Err(LedgerError::NotACommit("not a legacy message"));
    };
    let ([signature], [payer, program_id], [ix]) = (&tx.signatures[..], &m.account_keys[..], &m.instructions[..])
    else {
        return Err(LedgerError::NotACommit("unexpected message layout"));
    };
    let Some((&ATTEST_V2_TAG, prompt_hash)) = ix.data.split_first() else {
        return Err(LedgerError::NotACommit("unexpected message layout"));
    };
    let prompt_hash: [u8; 32] =
        prompt_hash.try_into().map_err(|_| LedgerError::NotACommit("unexpected message layout"))?;
    // Rebuilding the message from the parsed fields and comparing checks every fixed byte.
    if message(&payer.0, program_id, &m.recent_blockhash, &prompt_hash) != *m {
        return Err(LedgerError::NotACommit("unexpected message layout"));
    }
    tx.verify().map_err(|_| LedgerError::BadSignature)?;
    Ok(Commit {
        signature: *signature,
        payer: payer.0,
        program_id: *program_id,
        recent_blockhash: m.recent_blockhash,
        prompt_hash: PromptHash(prompt_hash),
    })
}

/// The chain link: the next commit's blockhash is sha256 of this transaction.
pub fn link_hash(tx: &[u8]) -> [u8; 32] {
    crate::sha256(tx)
}

/// Parses a base58 transaction id.
pub fn parse_id(text: &str) -> Option<[u8; 64]> {
    if text.is_empty() || text.len() > 88 {
        return None;
    }
    bs58::decode(text).into_vec().ok()?.try_into().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn build_parse_round_trip_and_layout() {
        let key = SigningKey::from_bytes(&[3; 32]);
        let program = Address([9; 32]);
        let (tx, commit) = build(&key, &program, &[0; 32], &PromptHash([7; 32]));
        assert_eq!(tx.len(), TX_LEN);
        // Instruction data sits at the very end: tag, then the hash.
        assert_eq!(tx[TX_LEN - 33], ATTEST_V2_TAG);
        assert_eq!(&tx[TX_LEN - 32..], &[7; 32]);
        assert_eq!(parse_and_verify(&tx).unwrap(), commit);
        assert_eq!(parse_id(&commit.id()), Some(commit.signature));
    }

    /// The bytes the hand-rolled encoder wrote before the codec existed: not one may change.
    #[test]
    fn known_answer() {
        let (tx, _) = build(&SigningKey::from_bytes(&[3; 32]), &Address([9; 32]), &[1; 32], &PromptHash([7; 32]));
        let want = "01650a842b5d6caf59580a5ae0a65b40523c07ee937af761434a00d0f535e29d5a30bb2cb8d8082aa52e7b04b5adb9b7\
                    41655a9e2b9aa120e79f5153cbd210a40001000102ed4928c628d1c2c6eae90338905995612959273a5c63f93636c146\
                    14ac8737d1090909090909090909090909090909090909090909090909090909090909090901010101010101010101010101\
                    0101010101010101010101010101010101010101010021020707070707070707070707070707070707070707070707070707\
                    070707070707";
        assert_eq!(hex::encode(tx), want);
    }

    #[test]
    fn any_flipped_bit_is_refused() {
        let key = SigningKey::from_bytes(&[3; 32]);
        let (tx, _) = build(&key, &Address([9; 32]), &[1; 32], &PromptHash([7; 32]));
        for i in 0..tx.len() {
            let mut t = tx.clone();
            t[i] ^= 0x10;
            assert!(parse_and_verify(&t).is_err(), "flip at byte {i} accepted");
        }
        assert_eq!(parse_and_verify(&tx[..TX_LEN - 1]), Err(LedgerError::BadLength));
    }

    #[test]
    fn ids_are_strict() {
        assert_eq!(parse_id(""), None);
        assert_eq!(parse_id("0"), None);
        assert_eq!(parse_id(&"1".repeat(89)), None);
    }
}
