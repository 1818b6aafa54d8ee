//! Log anchors on the embedded ledger (docs/log.md "Anchoring"): one Memo-program transaction
//! whose memo is `svc-log-sth-v1:` and the hex of a signed tree head's hash, signed by the
//! ledger key and chained like every commit. A Solana writer can post the same message.

use ed25519_dalek::{Signer, SigningKey};

use super::{LedgerError, one_instruction};
use crate::address::Address;
use crate::solana::{Transaction, VersionedMessage};

/// The SPL Memo program (v2).
pub const MEMO_PROGRAM: &str = "MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr";
/// What every anchor memo starts with; 64 hex characters follow.
pub const MEMO_PREFIX: &str = "svc-log-sth-v1:";

/// A parsed anchor transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnchorTx {
    pub signature: [u8; 64],
    pub payer: [u8; 32],
    pub recent_blockhash: [u8; 32],
    pub sth_hash: [u8; 32],
}

impl AnchorTx {
    pub fn id(&self) -> String {
        super::format_id(&self.signature)
    }
}

fn memo_program() -> Address {
    Address::parse(MEMO_PROGRAM).expect("the memo program id is base58 of 32 bytes")
}

fn memo(sth_hash: &[u8; 32]) -> Vec<u8> {
    format!("{MEMO_PREFIX}{}", hex::encode(sth_hash)).into_bytes()
}

/// Builds and signs an anchor; returns the transaction bytes and the parsed anchor.
pub fn build(key: &SigningKey, blockhash: &[u8; 32], sth_hash: &[u8; 32]) -> (Vec<u8>, AnchorTx) {
    let payer = key.verifying_key().to_bytes();
    let msg = one_instruction(&payer, &memo_program(), blockhash, memo(sth_hash));
    let signature = key.sign(&msg.serialize()).to_bytes();
    let tx = Transaction { signatures: vec![signature], message: msg.into() }.serialize();
    (tx, AnchorTx { signature, payer, recent_blockhash: *blockhash, sth_hash: *sth_hash })
}

/// Parses an anchor strictly (every byte rebuilt and compared) and verifies its signature.
pub fn parse_and_verify(tx: &[u8]) -> Result<AnchorTx, LedgerError> {
    let parsed = Transaction::parse(tx).map_err(|_| LedgerError::NotACommit("not a Solana transaction"))?;
    let VersionedMessage::Legacy(m) = &parsed.message else {
        return Err(LedgerError::NotACommit("not a legacy message"));
    };
    let ([signature], [payer, _], [ix]) = (&parsed.signatures[..], &m.account_keys[..], &m.instructions[..]) else {
        return Err(LedgerError::NotACommit("unexpected message layout"));
    };
    let text = std::str::from_utf8(&ix.data).map_err(|_| LedgerError::NotACommit("memo is not UTF-8"))?;
    let hex_hash = text.strip_prefix(MEMO_PREFIX).ok_or(LedgerError::NotACommit("not a log anchor"))?;
    let mut sth_hash = [0u8; 32];
    hex::decode_to_slice(hex_hash, &mut sth_hash).map_err(|_| LedgerError::NotACommit("not a log anchor"))?;
    let rebuilt = one_instruction(&payer.0, &memo_program(), &m.recent_blockhash, memo(&sth_hash));
    if rebuilt != *m || parsed.serialize() != tx {
        return Err(LedgerError::NotACommit("unexpected message layout"));
    }
    parsed.verify().map_err(|_| LedgerError::BadSignature)?;
    Ok(AnchorTx { signature: *signature, payer: payer.0, recent_blockhash: m.recent_blockhash, sth_hash })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_every_flip_refused() {
        let key = SigningKey::from_bytes(&[3; 32]);
        let (tx, anchor) = build(&key, &[1; 32], &[7; 32]);
        assert_eq!(parse_and_verify(&tx).unwrap(), anchor);
        let memo_text = format!("{MEMO_PREFIX}{}", "07".repeat(32));
        assert!(tx.ends_with(memo_text.as_bytes()));
        // An anchor is not a receipt commit, and a receipt commit is not an anchor.
        assert!(crate::ledger::parse_and_verify(&tx).is_err());
        let (commit, _) = crate::ledger::build(&key, &Address([9; 32]), &[0; 32], &crate::keys::PromptHash([7; 32]));
        assert!(parse_and_verify(&commit).is_err());
        for i in 0..tx.len() {
            let mut t = tx.clone();
            t[i] ^= 0x10;
            assert!(parse_and_verify(&t).is_err(), "flip at byte {i} accepted");
        }
    }
}
