//! Receipt lookups by address, ciphertext hash or commit transaction, verified locally.

use shared::address::Address;
use shared::receipt::{Receipt, VerifiedReceipt, decode_hex32};

use crate::api::Client;
use crate::error::ClientError;

/// What a lookup string is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReceiptQuery {
    Address(String),
    Hash(String),
    Transaction(String),
}

impl ReceiptQuery {
    /// 64 hex characters: a ciphertext hash; base58 of 64 bytes: a transaction signature;
    /// base58 of 32 bytes: an address.
    pub fn parse(text: &str) -> Option<Self> {
        if let Some(hash) = decode_hex32(&text.to_ascii_lowercase()) {
            return Some(ReceiptQuery::Hash(hex::encode(hash)));
        }
        if shared::ledger::parse_id(text).is_some() {
            return Some(ReceiptQuery::Transaction(text.to_string()));
        }
        Address::parse(text).map(|a| ReceiptQuery::Address(a.to_string()))
    }

    fn path(&self) -> String {
        match self {
            ReceiptQuery::Address(a) => format!("/attestation/{a}"),
            ReceiptQuery::Hash(h) => format!("/attestation/by-hash/{h}"),
            ReceiptQuery::Transaction(t) => format!("/attestation/by-tx/{t}"),
        }
    }
}

impl Client {
    /// Fetches a receipt and verifies its signature and address; a hash or address query must
    /// also match the receipt returned.
    pub async fn receipt(&self, query: &ReceiptQuery) -> Result<(Receipt, VerifiedReceipt), ClientError> {
        let receipt: Receipt = self.get(&query.path()).await?;
        let verified = receipt.verify(&self.program_id)?;
        match query {
            ReceiptQuery::Address(a) if *a != verified.address.to_string() => {
                return Err(ClientError::Mismatch("relay returned a receipt for another address"));
            }
            ReceiptQuery::Hash(h) if *h != hex::encode(verified.body.prompt_hash) => {
                return Err(ClientError::Mismatch("relay returned a receipt for another hash"));
            }
            _ => {}
        }
        Ok((receipt, verified))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_forms() {
        let hash = "ab".repeat(32);
        assert_eq!(ReceiptQuery::parse(&hash), Some(ReceiptQuery::Hash(hash.clone())));
        assert_eq!(ReceiptQuery::parse(&hash.to_uppercase()), Some(ReceiptQuery::Hash(hash)));
        let addr = Address([7; 32]).to_string();
        assert_eq!(ReceiptQuery::parse(&addr), Some(ReceiptQuery::Address(addr)));
        let tx = shared::ledger::format_id(&[9; 64]);
        assert_eq!(ReceiptQuery::parse(&tx), Some(ReceiptQuery::Transaction(tx)));
        assert_eq!(ReceiptQuery::parse("nope!"), None);
    }
}
