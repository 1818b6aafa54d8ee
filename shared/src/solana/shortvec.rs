//! Solana's compact-u16 ("short vec") length prefix: 7 bits a byte, low bits first, at most
//! three bytes. Decoding is as strict as Solana's: no zero continuation byte (an alias of a
//! shorter form), no fourth byte, nothing above `u16::MAX`.

use super::SolanaError;

/// The longest encoding, in bytes.
pub const MAX_LEN: usize = 3;

/// Appends the encoding of `value`.
pub fn encode(value: u16, out: &mut Vec<u8>) {
    let mut rest = value;
    loop {
        let low = (rest & 0x7f) as u8;
        rest >>= 7;
        if rest == 0 {
            out.push(low);
            return;
        }
        out.push(low | 0x80);
    }
}

/// Appends the encoding of a length; `TooManyAccounts`-free callers know it fits, others get
/// `LengthOverflow`.
pub fn encode_len(len: usize, out: &mut Vec<u8>) -> Result<(), SolanaError> {
    encode(u16::try_from(len).map_err(|_| SolanaError::LengthOverflow)?, out);
    Ok(())
}

/// Decodes a value at the start of `bytes`; returns it and the number of bytes read.
pub fn decode(bytes: &[u8]) -> Result<(u16, usize), SolanaError> {
    let mut value: u32 = 0;
    for i in 0..MAX_LEN {
        let byte = *bytes.get(i).ok_or(SolanaError::Truncated)?;
        // A zero byte after the first adds nothing: the shorter form is the only valid one.
        if byte == 0 && i != 0 {
            return Err(SolanaError::NonCanonicalLength);
        }
        value |= u32::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            let value = u16::try_from(value).map_err(|_| SolanaError::LengthOverflow)?;
            return Ok((value, i + 1));
        }
    }
    // A third byte that still says "more" would need a fourth.
    Err(SolanaError::NonCanonicalLength)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(v: u16) -> Vec<u8> {
        let mut out = Vec::new();
        encode(v, &mut out);
        out
    }

    /// Known answers from Solana's `short_vec` tests.
    #[test]
    fn known_answers() {
        let cases: [(u16, &[u8]); 9] = [
            (0x0, &[0x0]),
            (0x7f, &[0x7f]),
            (0x80, &[0x80, 0x01]),
            (0xff, &[0xff, 0x01]),
            (0x100, &[0x80, 0x02]),
            (0x7fff, &[0xff, 0xff, 0x01]),
            (0x3fff, &[0xff, 0x7f]),
            (0x4000, &[0x80, 0x80, 0x01]),
            (0xffff, &[0xff, 0xff, 0x03]),
        ];
        for (value, bytes) in cases {
            assert_eq!(enc(value), bytes, "{value:#x}");
            assert_eq!(decode(bytes), Ok((value, bytes.len())), "{value:#x}");
        }
    }

    #[test]
    fn round_trips_every_value() {
        for v in 0..=u16::MAX {
            let bytes = enc(v);
            assert_eq!(decode(&bytes), Ok((v, bytes.len())));
        }
    }

    #[test]
    fn refuses_aliases_overflow_and_truncation() {
        assert_eq!(decode(&[0x80, 0x00]), Err(SolanaError::NonCanonicalLength));
        assert_eq!(decode(&[0x80, 0x80, 0x00]), Err(SolanaError::NonCanonicalLength));
        assert_eq!(decode(&[0xff, 0xff, 0x04]), Err(SolanaError::LengthOverflow));
        assert_eq!(decode(&[0x80, 0x80, 0x80, 0x00]), Err(SolanaError::NonCanonicalLength));
        assert_eq!(decode(&[0x80]), Err(SolanaError::Truncated));
        assert_eq!(decode(&[]), Err(SolanaError::Truncated));
        // Trailing input is left for the caller.
        assert_eq!(decode(&[0x05, 0xaa]), Ok((5, 1)));
        assert!(encode_len(65_536, &mut Vec::new()).is_err());
    }
}
