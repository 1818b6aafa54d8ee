//! Bech32 (BIP 173, not Bech32m) decoding of an upper-case `AGE-SECRET-KEY-1…` string.

use zeroize::Zeroizing;

const CHARSET: &[u8; 32] = b"QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L";
const GENERATOR: [u32; 5] = [0x3b6a_57b2, 0x2650_8e6d, 0x1ea1_19fa, 0x3d42_33dd, 0x2a14_62b3];

/// The 32-byte scalar in an age X25519 secret key, or why it is not one.
pub(super) fn decode_secret_key(text: &str) -> Result<Zeroizing<[u8; 32]>, &'static str> {
    const HRP: &str = "AGE-SECRET-KEY-";
    let (hrp, data) = text.rsplit_once('1').ok_or("not Bech32")?;
    if hrp != HRP {
        return Err("not an AGE-SECRET-KEY-1 (X25519) key");
    }
    let mut values = Zeroizing::new(Vec::with_capacity(data.len()));
    for c in data.bytes() {
        values.push(CHARSET.iter().position(|&d| d == c).ok_or("not upper-case Bech32")? as u8);
    }
    let hrp_lower = HRP.to_ascii_lowercase();
    let expanded = hrp_lower.bytes().map(|b| b >> 5).chain([0]).chain(hrp_lower.bytes().map(|b| b & 31));
    if values.len() < 6 || polymod(expanded.chain(values.iter().copied())) != 1 {
        return Err("bad Bech32 checksum");
    }
    // Regroup the 5-bit values into bytes; leftover bits must be fewer than 5, and zero.
    let mut key = Zeroizing::new([0u8; 32]);
    let (mut acc, mut bits, mut len) = (Zeroizing::new(0u32), 0, 0);
    for &v in &values[..values.len() - 6] {
        *acc = (*acc << 5 | u32::from(v)) & 0xfff;
        bits += 5;
        if bits >= 8 {
            bits -= 8;
            *key.get_mut(len).ok_or("not a 32-byte key")? = (*acc >> bits) as u8;
            len += 1;
        }
    }
    if len != 32 || bits >= 5 || *acc & ((1 << bits) - 1) != 0 {
        return Err("not a 32-byte key");
    }
    Ok(key)
}

fn polymod(values: impl Iterator<Item = u8>) -> u32 {
    values.fold(1, |chk, v| {
        let top = chk >> 25;
        let chk = (chk & 0x1ff_ffff) << 5 ^ u32::from(v);
        GENERATOR.iter().enumerate().filter(|(i, _)| top >> i & 1 == 1).fold(chk, |chk, (_, g)| chk ^ g)
    })
}
