//! Fresh random identifiers and tokens, from the operating system's generator.

use rand_core::{OsRng, RngCore};

pub fn random_bytes<const N: usize>() -> [u8; N] {
    let mut bytes = [0u8; N];
    OsRng.fill_bytes(&mut bytes);
    bytes
}

/// `n` random bytes as hex (nonces, lease tokens, journal and message ids).
pub fn random_hex(n: usize) -> String {
    let mut bytes = vec![0u8; n];
    OsRng.fill_bytes(&mut bytes);
    hex::encode(bytes)
}

/// A random (version 4) uuid: session and wallet ids.
pub fn new_uuid() -> String {
    let mut bytes: [u8; 16] = random_bytes();
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    shared::swap::format_uuid(&bytes)
}

#[cfg(test)]
mod tests {
    #[test]
    fn uuids_are_version_4_and_fresh() {
        let (a, b) = (super::new_uuid(), super::new_uuid());
        assert_ne!(a, b);
        assert_eq!(a.len(), 36);
        assert_eq!(&a[14..15], "4", "{a}");
        assert!(matches!(&a[19..20], "8" | "9" | "a" | "b"), "{a}");
        assert_eq!(super::random_hex(8).len(), 16);
    }
}
