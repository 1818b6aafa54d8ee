//! Well-known program and account ids, decoded from base58 at compile time.

use crate::address::Address;

pub const SYSTEM_PROGRAM: Address = id("11111111111111111111111111111111");
pub const TOKEN_PROGRAM: Address = id("TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA");
pub const TOKEN_2022_PROGRAM: Address = id("TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb");
pub const ASSOCIATED_TOKEN_PROGRAM: Address = id("ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL");
/// Memo v2 (the one clients use); v1 below is still deployed.
pub const MEMO_PROGRAM: Address = id("MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr");
pub const MEMO_V1_PROGRAM: Address = id("Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo");
pub const COMPUTE_BUDGET_PROGRAM: Address = id("ComputeBudget111111111111111111111111111111");
pub const ADDRESS_LOOKUP_TABLE_PROGRAM: Address = id("AddressLookupTab1e1111111111111111111111111");
/// Jupiter's aggregator v6 (swap routes; `jupiter`).
pub const JUPITER_PROGRAM: Address = id("JUP6LkbZbjS1jKKwapdHNy74zcZ3tLUZoi5QNyVTaV4");
/// The wrapped-SOL mint.
pub const NATIVE_MINT: Address = id("So11111111111111111111111111111111111111112");

/// Base58 → 32 bytes, evaluated at compile time only (a bad constant fails the build).
pub(crate) const fn id(text: &str) -> Address {
    const ALPHABET: &[u8; 58] = b"123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
    let text = text.as_bytes();
    let mut out = [0u8; 32];
    let mut i = 0;
    while i < text.len() {
        let mut digit = 0;
        while digit < 58 && ALPHABET[digit] != text[i] {
            digit += 1;
        }
        assert!(digit < 58, "not a base58 character");
        // out = out * 58 + digit, big-endian.
        let mut carry = digit as u32;
        let mut j = 32;
        while j > 0 {
            j -= 1;
            let v = out[j] as u32 * 58 + carry;
            out[j] = v as u8;
            carry = v >> 8;
        }
        assert!(carry == 0, "more than 32 bytes");
        i += 1;
    }
    Address(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_round_trip_through_base58() {
        for (id, text) in [
            (SYSTEM_PROGRAM, "11111111111111111111111111111111"),
            (TOKEN_PROGRAM, "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA"),
            (TOKEN_2022_PROGRAM, "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb"),
            (ASSOCIATED_TOKEN_PROGRAM, "ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL"),
            (MEMO_PROGRAM, "MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr"),
            (MEMO_V1_PROGRAM, "Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo"),
            (COMPUTE_BUDGET_PROGRAM, "ComputeBudget111111111111111111111111111111"),
            (ADDRESS_LOOKUP_TABLE_PROGRAM, "AddressLookupTab1e1111111111111111111111111"),
            (NATIVE_MINT, "So11111111111111111111111111111111111111112"),
            (JUPITER_PROGRAM, "JUP6LkbZbjS1jKKwapdHNy74zcZ3tLUZoi5QNyVTaV4"),
        ] {
            assert_eq!(Address::parse(text), Some(id), "{text}");
            assert_eq!(id.to_string(), text);
        }
        assert_eq!(SYSTEM_PROGRAM, Address([0; 32]));
    }
}
