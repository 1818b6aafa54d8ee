//! Transactions: one signature slot per required signer, then the message they sign.
//! Partial signing leaves a slot zeroed, as Solana clients do for a co-signer's slot.

use ed25519_dalek::{Signer, SigningKey, VerifyingKey};

use super::reader::Reader;
use super::{PACKET_DATA_SIZE, Signature, SolanaError, VersionedMessage, shortvec, signature_id};
use crate::address::Address;

pub const SIGNATURE_LEN: usize = 64;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transaction {
    /// One per required signer, in key order; all zeros while unsigned.
    pub signatures: Vec<Signature>,
    pub message: VersionedMessage,
}

impl Transaction {
    /// A transaction with every signature slot empty.
    pub fn new_unsigned(message: impl Into<VersionedMessage>) -> Self {
        let message = message.into();
        let slots = usize::from(message.header().num_required_signatures);
        Transaction { signatures: vec![[0; SIGNATURE_LEN]; slots], message }
    }

    /// Signs with `keys`, filling their slots and leaving the others as they are. Refuses a key
    /// that is not a required signer, and a message that is not valid.
    pub fn sign(&mut self, keys: &[&SigningKey]) -> Result<(), SolanaError> {
        self.message.sanitize()?;
        self.check_slots()?;
        let signers = self.message.signer_keys();
        let mut slots = Vec::with_capacity(keys.len());
        for key in keys {
            let public = Address(key.verifying_key().to_bytes());
            let slot = signers.iter().position(|k| *k == public).ok_or(SolanaError::NotASigner(public))?;
            slots.push((slot, *key));
        }
        let bytes = self.message.serialize();
        for (slot, key) in slots {
            self.signatures[slot] = key.sign(&bytes).to_bytes();
        }
        Ok(())
    }

    /// The wire bytes: compact-u16 signature count, signatures, message.
    pub fn serialize(&self) -> Vec<u8> {
        let message = self.message.serialize();
        let mut out = Vec::with_capacity(3 + SIGNATURE_LEN * self.signatures.len() + message.len());
        shortvec::encode(u16::try_from(self.signatures.len()).unwrap_or(u16::MAX), &mut out);
        for s in &self.signatures {
            out.extend_from_slice(s);
        }
        out.extend_from_slice(&message);
        out
    }

    /// Parses exactly one transaction of at most 1232 bytes, with exactly one signature per
    /// required signer. Signatures are not verified here ([`Transaction::verify`]).
    pub fn parse(bytes: &[u8]) -> Result<Self, SolanaError> {
        if bytes.len() > PACKET_DATA_SIZE {
            return Err(SolanaError::TooLarge { max: PACKET_DATA_SIZE });
        }
        let mut r = Reader::new(bytes);
        let n = r.len()?;
        let signatures = (0..n).map(|_| r.array::<SIGNATURE_LEN>()).collect::<Result<Vec<_>, _>>()?;
        let message = VersionedMessage::read(&mut r)?;
        r.finish()?;
        let tx = Transaction { signatures, message };
        tx.check_slots()?;
        Ok(tx)
    }

    fn check_slots(&self) -> Result<(), SolanaError> {
        let expected = usize::from(self.message.header().num_required_signatures);
        if self.signatures.len() != expected {
            return Err(SolanaError::SignatureCount { expected, found: self.signatures.len() });
        }
        Ok(())
    }

    /// Checks that every required signature is present and verifies (strict ed25519, as the
    /// runtime does).
    pub fn verify(&self) -> Result<(), SolanaError> {
        self.check_slots()?;
        let bytes = self.message.serialize();
        (0..self.signatures.len()).try_for_each(|i| self.verify_with(&bytes, i))
    }

    /// Checks the signature in slot `i` only (e.g. a client's, before a co-signer adds its own).
    pub fn verify_signature(&self, i: usize) -> Result<(), SolanaError> {
        self.verify_with(&self.message.serialize(), i)
    }

    fn verify_with(&self, message: &[u8], i: usize) -> Result<(), SolanaError> {
        let bad = SolanaError::BadSignature(i);
        let signature = self.signatures.get(i).ok_or(bad.clone())?;
        let key = self.message.signer_keys().get(i).ok_or(bad.clone())?;
        let key = VerifyingKey::from_bytes(&key.0).map_err(|_| bad.clone())?;
        key.verify_strict(message, &ed25519_dalek::Signature::from_bytes(signature)).map_err(|_| bad)
    }

    /// The signers whose slots are still empty (all zeros).
    pub fn missing_signers(&self) -> Vec<Address> {
        let signers = self.message.signer_keys();
        self.signatures.iter().zip(signers).filter(|(s, _)| **s == [0; SIGNATURE_LEN]).map(|(_, k)| *k).collect()
    }

    /// The transaction id: base58 of the first signature (the fee payer's). A parsed or
    /// compiled transaction always has one; an empty hand-built one gives "".
    pub fn id(&self) -> String {
        self.signatures.first().map(signature_id).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solana::{Message, MessageV0, memo, system};

    fn key(n: u8) -> SigningKey {
        SigningKey::from_bytes(&[n; 32])
    }

    fn addr(k: &SigningKey) -> Address {
        Address(k.verifying_key().to_bytes())
    }

    fn two_signers() -> (SigningKey, SigningKey, Transaction) {
        let (payer, other) = (key(1), key(2));
        let ixs = [system::transfer(&addr(&payer), &Address([5; 32]), 10), memo::memo(b"hi", &[&addr(&other)])];
        let m = Message::compile(&addr(&payer), &ixs, [9; 32]).unwrap();
        (payer, other, Transaction::new_unsigned(m))
    }

    #[test]
    fn sign_serialize_parse_verify() {
        let (payer, other, mut tx) = two_signers();
        assert_eq!(tx.missing_signers(), [addr(&payer), addr(&other)]);
        assert_eq!(tx.verify(), Err(SolanaError::BadSignature(0)));
        tx.sign(&[&other]).unwrap();
        assert_eq!(tx.missing_signers(), [addr(&payer)]);
        assert_eq!(tx.verify_signature(1), Ok(()));
        assert_eq!(tx.verify(), Err(SolanaError::BadSignature(0)));
        tx.sign(&[&payer]).unwrap();
        assert_eq!(tx.verify(), Ok(()));
        let bytes = tx.serialize();
        assert_eq!(bytes[0], 2);
        assert_eq!(&bytes[1..65], &payer.sign(&tx.message.serialize()).to_bytes());
        assert_eq!(&bytes[129..], &tx.message.serialize()[..]);
        let back = Transaction::parse(&bytes).unwrap();
        assert_eq!(back, tx);
        assert_eq!(back.id(), bs58::encode(&bytes[1..65]).into_string());
    }

    #[test]
    fn refuses_foreign_keys_and_bad_counts() {
        let (_, _, mut tx) = two_signers();
        assert_eq!(tx.sign(&[&key(3)]), Err(SolanaError::NotASigner(addr(&key(3)))));
        assert_eq!(tx.missing_signers().len(), 2, "nothing signed on refusal");
        let bytes = tx.serialize();
        let mut fewer = vec![1];
        fewer.extend_from_slice(&bytes[65..]);
        assert_eq!(Transaction::parse(&fewer), Err(SolanaError::SignatureCount { expected: 2, found: 1 }));
        let mut more = vec![3];
        more.extend_from_slice(&[0; 64]);
        more.extend_from_slice(&bytes[1..]);
        assert_eq!(Transaction::parse(&more), Err(SolanaError::SignatureCount { expected: 2, found: 3 }));
        assert_eq!(Transaction::parse(&[bytes.clone(), vec![0]].concat()), Err(SolanaError::TrailingBytes));
        assert_eq!(Transaction::parse(&[1u8; 1233]), Err(SolanaError::TooLarge { max: 1232 }));
        assert!(Transaction::parse(&[]).is_err());
    }

    #[test]
    fn a_flipped_bit_fails_verification_or_parsing() {
        let (payer, other, mut tx) = two_signers();
        tx.sign(&[&payer, &other]).unwrap();
        let bytes = tx.serialize();
        for i in 0..bytes.len() {
            let mut b = bytes.clone();
            b[i] ^= 0x01;
            assert!(Transaction::parse(&b).and_then(|t| t.verify()).is_err(), "flip at {i} accepted");
        }
    }

    #[test]
    fn v0_transactions_sign_too() {
        let payer = key(4);
        let m = MessageV0::compile(&addr(&payer), &[memo::memo(b"v0", &[])], [1; 32]).unwrap();
        let mut tx = Transaction::new_unsigned(m);
        tx.sign(&[&payer]).unwrap();
        let bytes = tx.serialize();
        assert_eq!(bytes[65], 0x80);
        let back = Transaction::parse(&bytes).unwrap();
        assert_eq!(back.message.version(), Some(0));
        assert_eq!(back.verify(), Ok(()));
    }
}
