//! Ledger addresses: Solana program-derived addresses (`find_program_address`), base58.

use curve25519_dalek::edwards::CompressedEdwardsY;
use sha2::{Digest, Sha256};

/// Seed prefix of receipt addresses (contract §9).
pub const RECEIPT_SEED: &[u8] = b"attestation_v2";
const PDA_MARKER: &[u8] = b"ProgramDerivedAddress";

/// A 32-byte ledger address or key, shown in base58.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Address(pub [u8; 32]);

impl Address {
    pub fn parse(text: &str) -> Option<Self> {
        // A 32-byte value is at most 44 base58 characters; refuse long input before decoding.
        if text.is_empty() || text.len() > 44 {
            return None;
        }
        let bytes = bs58::decode(text).into_vec().ok()?;
        Some(Address(bytes.try_into().ok()?))
    }
}

impl std::fmt::Display for Address {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&bs58::encode(self.0).into_string())
    }
}

/// In JSON an address is its base58 text, as every wire document and sealed book writes it.
impl serde::Serialize for Address {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Address {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Address::parse(&text).ok_or_else(|| serde::de::Error::custom("not a base58 address of 32 bytes"))
    }
}

impl std::fmt::Debug for Address {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Address({self})")
    }
}

fn is_on_curve(bytes: &[u8; 32]) -> bool {
    CompressedEdwardsY(*bytes).decompress().is_some()
}

/// `find_program_address`: the first bump from 255 down to 1 whose digest is off the ed25519
/// curve, exactly as the Solana runtime searches. `None` only if every bump lands on the curve
/// (probability about 2^-255).
pub fn find_program_address(seeds: &[&[u8]], program_id: &Address) -> Option<(Address, u8)> {
    let mut prefix = Sha256::new();
    for seed in seeds {
        prefix.update(seed);
    }
    for bump in (1..=u8::MAX).rev() {
        let digest: [u8; 32] =
            prefix.clone().chain_update([bump]).chain_update(program_id.0).chain_update(PDA_MARKER).finalize().into();
        if !is_on_curve(&digest) {
            return Some((Address(digest), bump));
        }
    }
    None
}

/// The receipt address for a ciphertext hash (contract §2.6).
pub fn receipt_address(ciphertext_hash: &crate::keys::PromptHash, program_id: &Address) -> Address {
    find_program_address(&[RECEIPT_SEED, &ciphertext_hash.0], program_id)
        .expect("a PDA exists for all but a 2^-255 fraction of seeds")
        .0
}

/// The attestation program id used when none is configured: a fixed placeholder for the
/// embedded ledger (sha256 of a label, so nobody holds its key).
pub fn default_program_id() -> Address {
    Address(crate::sha256(b"svc attestation program v2 (embedded ledger)"))
}

/// An address of 32 equal bytes: distinct keys a unit test can read at a glance.
#[cfg(all(test, feature = "solana"))]
pub(crate) fn filled(byte: u8) -> Address {
    Address([byte; 32])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Known vector from protocols.md §4.1: ATA of (owner, Tokenkeg, USDC) under the ATA program.
    #[test]
    fn associated_token_account_vector() {
        let owner = Address::parse("2wKupLR9q6wXYppw8Gr2NvWxKBUqm4PPJKkQfoxHDBg4").unwrap();
        let token = Address::parse("TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA").unwrap();
        let mint = Address::parse("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v").unwrap();
        let ata = Address::parse("ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL").unwrap();
        let (addr, bump) = find_program_address(&[&owner.0, &token.0, &mint.0], &ata).unwrap();
        assert_eq!(addr.to_string(), "3XZXfFJHF5ox3yPop16oqYfSWxLpkjsEuvTe2S67G2rj");
        assert_eq!(bump, 254);
    }

    #[test]
    fn parse_refuses_bad_input() {
        assert_eq!(Address::parse(""), None);
        assert_eq!(Address::parse("0OIl"), None); // not base58 characters
        assert_eq!(Address::parse("abc"), None); // too short
        assert_eq!(Address::parse(&"1".repeat(45)), None);
    }

    /// JSON carries the base58 text (the USDC mint's well-known address), and refuses what
    /// `parse` refuses.
    #[test]
    fn json_is_the_base58_text() {
        let usdc = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
        let address: Address = serde_json::from_str(&format!("\"{usdc}\"")).unwrap();
        assert_eq!(address, Address::parse(usdc).unwrap());
        assert_eq!(serde_json::to_string(&address).unwrap(), format!("\"{usdc}\""));
        for bad in ["\"\"", "\"0OIl\"", "\"11111111111111111111111111111111111111111111111\"", "32"] {
            assert!(serde_json::from_str::<Address>(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn derived_addresses_are_off_curve() {
        for i in 0u8..50 {
            let hash = crate::keys::PromptHash(crate::sha256(&[i]));
            let a = receipt_address(&hash, &default_program_id());
            assert!(!is_on_curve(&a.0));
        }
    }
}
