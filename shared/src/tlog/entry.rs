//! What the log hashes for each receipt (docs/log.md "Entries"): one fixed-length byte string
//! that names the receipt and binds the enclave's signature over it, so a client recomputes
//! the leaf from the receipt it holds and nothing else.
//!
//! `kind (1) ‖ address (32) ‖ digest (32) ‖ signature (64)`, 129 bytes:
//! - kind 0x01, a chat receipt (v2): digest = sha256(ciphertext) (`encryptedPromptHash`),
//!   signature = `enclaveSigR ‖ enclaveSigS`;
//! - kind 0x02, a swap receipt (swap-v1): digest = sha256 of its signed message,
//!   signature = its `signature`;
//! - kind 0x03, a web app bundle the relay serves (docs/web.md): address and digest = the
//!   bundle's hash (SHA-256 of its manifest), signature zero (the tree head's signature covers
//!   it), so anyone holding the hash rebuilds the entry.

use crate::address::Address;
use crate::b64;
use crate::receipt::{Receipt, decode_hex32};

pub const KIND_CHAT: u8 = 0x01;
pub const KIND_SWAP: u8 = 0x02;
pub const KIND_WEB_BUNDLE: u8 = 0x03;
pub const ENTRY_LEN: usize = 1 + 32 + 32 + 64;

/// The entry bytes.
pub fn encode(kind: u8, address: &Address, digest: &[u8; 32], signature: &[u8; 64]) -> Vec<u8> {
    let mut out = Vec::with_capacity(ENTRY_LEN);
    out.push(kind);
    out.extend_from_slice(&address.0);
    out.extend_from_slice(digest);
    out.extend_from_slice(signature);
    out
}

/// The entry of a chat receipt; `None` if a field does not decode.
pub fn chat(receipt: &Receipt) -> Option<Vec<u8>> {
    let address = Address::parse(&receipt.address)?;
    let digest = decode_hex32(&receipt.encrypted_prompt_hash)?;
    let r: [u8; 32] = b64::decode_array(&receipt.enclave_sig_r)?;
    let s: [u8; 32] = b64::decode_array(&receipt.enclave_sig_s)?;
    let mut signature = [0u8; 64];
    signature[..32].copy_from_slice(&r);
    signature[32..].copy_from_slice(&s);
    Some(encode(KIND_CHAT, &address, &digest, &signature))
}

/// The entry of a swap receipt; `None` if a field does not decode.
#[cfg(feature = "solana")]
pub fn swap(receipt: &crate::swap::SwapReceipt) -> Option<Vec<u8>> {
    let address = Address::parse(&receipt.address)?;
    let digest = crate::sha256(&receipt.message().ok()?);
    let signature: [u8; 64] = b64::decode_array(&receipt.signature)?;
    Some(encode(KIND_SWAP, &address, &digest, &signature))
}

/// The entry of a web app bundle, by its hash.
pub fn web_bundle(bundle_sha256: &[u8; 32]) -> Vec<u8> {
    encode(KIND_WEB_BUNDLE, &Address(*bundle_sha256), bundle_sha256, &[0; 64])
}

/// The receipt address an entry names.
pub fn address(entry: &[u8]) -> Option<Address> {
    if entry.len() != ENTRY_LEN {
        return None;
    }
    Some(Address(entry[1..33].try_into().ok()?))
}
