//! Receipt commits for the embedded ledger, as Solana legacy transactions.
//!
//! Each stored receipt is committed as a one-instruction transaction signed by the relay's
//! ledger key: the instruction calls the attestation program with data `0x02 ‖ sha256(ciphertext)`.
//! Its base58 signature is the transaction id that `GET /attestation/by-tx/{signature}` takes.
//! The layout is the real Solana wire format (compact-u16 lengths, message header, account
//! keys, recent blockhash, instructions), so a Solana writer can post the same message; the
//! embedded ledger chains commits by using the previous commit's hash as the blockhash.

use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};

use crate::address::Address;

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
    pub prompt_hash: [u8; 32],
}

impl Commit {
    /// The transaction id: base58 of the signature.
    pub fn id(&self) -> String {
        format_id(&self.signature)
    }
}

/// Formats a transaction id (base58 of the signature).
pub fn format_id(signature: &[u8; 64]) -> String {
    bs58::encode(signature).into_string()
}

fn message(payer: &[u8; 32], program_id: &Address, blockhash: &[u8; 32], prompt_hash: &[u8; 32]) -> [u8; MESSAGE_LEN] {
    let mut m = [0u8; MESSAGE_LEN];
    let mut i = 0;
    let mut put = |bytes: &[u8]| {
        m[i..i + bytes.len()].copy_from_slice(bytes);
        i += bytes.len();
    };
    // Header: 1 required signature, 0 read-only signed, 1 read-only unsigned (the program).
    put(&[1, 0, 1]);
    put(&[2]); // compact-u16: two account keys
    put(payer);
    put(&program_id.0);
    put(blockhash);
    put(&[1]); // one instruction
    put(&[1]); // program id index
    put(&[0]); // no accounts
    put(&[DATA_LEN as u8]);
    put(&[ATTEST_V2_TAG]);
    put(prompt_hash);
    m
}

/// Builds and signs a commit; returns the transaction bytes and the parsed commit.
pub fn build(
    key: &SigningKey,
    program_id: &Address,
    blockhash: &[u8; 32],
    prompt_hash: &[u8; 32],
) -> (Vec<u8>, Commit) {
    let payer = key.verifying_key().to_bytes();
    let msg = message(&payer, program_id, blockhash, prompt_hash);
    let signature = key.sign(&msg).to_bytes();
    let mut tx = Vec::with_capacity(TX_LEN);
    tx.push(1);
    tx.extend_from_slice(&signature);
    tx.extend_from_slice(&msg);
    let commit =
        Commit { signature, payer, program_id: *program_id, recent_blockhash: *blockhash, prompt_hash: *prompt_hash };
    (tx, commit)
}

/// Parses a commit transaction strictly and verifies its signature against its fee payer.
pub fn parse_and_verify(tx: &[u8]) -> Result<Commit, LedgerError> {
    let tx: &[u8; TX_LEN] = tx.try_into().map_err(|_| LedgerError::BadLength)?;
    if tx[0] != 1 {
        return Err(LedgerError::NotACommit("expected one signature"));
    }
    let signature: [u8; 64] = tx[1..65].try_into().expect("fixed range");
    let m = &tx[65..];
    let payer: [u8; 32] = m[4..36].try_into().expect("fixed range");
    let program_id = Address(m[36..68].try_into().expect("fixed range"));
    let recent_blockhash: [u8; 32] = m[68..100].try_into().expect("fixed range");
    let prompt_hash: [u8; 32] = m[MESSAGE_LEN - 32..].try_into().expect("fixed range");
    // Rebuilding the message from the parsed fields and comparing checks every fixed byte.
    if message(&payer, &program_id, &recent_blockhash, &prompt_hash) != *m {
        return Err(LedgerError::NotACommit("unexpected message layout"));
    }
    let key = VerifyingKey::from_bytes(&payer).map_err(|_| LedgerError::BadSignature)?;
    key.verify_strict(m, &Signature::from_bytes(&signature)).map_err(|_| LedgerError::BadSignature)?;
    Ok(Commit { signature, payer, program_id, recent_blockhash, prompt_hash })
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
        let (tx, commit) = build(&key, &program, &[0; 32], &[7; 32]);
        assert_eq!(tx.len(), TX_LEN);
        // Instruction data sits at the very end: tag, then the hash.
        assert_eq!(tx[TX_LEN - 33], ATTEST_V2_TAG);
        assert_eq!(&tx[TX_LEN - 32..], &[7; 32]);
        assert_eq!(parse_and_verify(&tx).unwrap(), commit);
        assert_eq!(parse_id(&commit.id()), Some(commit.signature));
    }

    #[test]
    fn any_flipped_bit_is_refused() {
        let key = SigningKey::from_bytes(&[3; 32]);
        let (tx, _) = build(&key, &Address([9; 32]), &[1; 32], &[7; 32]);
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
