//! RFC 9180 Appendix A.2.1: DHKEM(X25519, HKDF-SHA256), HKDF-SHA256, ChaCha20Poly1305, base mode.

use super::*;
use serde_json::Value;

const VECTORS: &str = include_str!("../../tests/vectors/rfc9180_base_x25519_sha256_chachapoly.json");

fn h(v: &Value, name: &str) -> Vec<u8> {
    hex::decode(v[name].as_str().unwrap_or_else(|| panic!("{name} missing"))).unwrap()
}

fn h32(v: &Value, name: &str) -> [u8; 32] {
    h(v, name).try_into().unwrap()
}

#[test]
fn rfc9180_a21_setup() {
    let v: Value = serde_json::from_str(VECTORS).unwrap();
    assert_eq!(
        (v["mode"].as_u64(), v["kem_id"].as_u64(), v["kdf_id"].as_u64(), v["aead_id"].as_u64()),
        (Some(0), Some(u64::from(KEM_ID)), Some(u64::from(KDF_ID)), Some(u64::from(AEAD_ID)))
    );

    let (sk_e, pk_e) = derive_key_pair(&h(&v, "ikmE"));
    assert_eq!(sk_e.to_bytes(), h32(&v, "skEm"));
    assert_eq!(pk_e, h32(&v, "pkEm"));
    let (sk_r, pk_r) = derive_key_pair(&h(&v, "ikmR"));
    assert_eq!(sk_r.to_bytes(), h32(&v, "skRm"));
    assert_eq!(pk_r, h32(&v, "pkRm"));

    let dh = dh(&sk_e, &pk_r).unwrap();
    let shared = extract_and_expand(&dh, &pk_e, &pk_r);
    assert_eq!(shared.as_slice(), h(&v, "shared_secret"));

    let info = h(&v, "info");
    let (enc, sender) = setup_sender_with_ephemeral(&pk_r, &info, &sk_e).unwrap();
    assert_eq!(enc, h32(&v, "enc"));
    assert_eq!(sender.key.as_slice(), h(&v, "key"));
    assert_eq!(sender.base_nonce.as_slice(), h(&v, "base_nonce"));
    assert_eq!(sender.exporter_secret.as_slice(), h(&v, "exporter_secret"));

    let receiver = setup_receiver(&enc, &sk_r, &pk_r, &info).unwrap();
    assert_eq!(receiver.key, sender.key);
    assert_eq!(receiver.base_nonce, sender.base_nonce);
    assert_eq!(receiver.exporter_secret, sender.exporter_secret);
}

#[test]
fn rfc9180_a21_encryptions_and_exports() {
    let v: Value = serde_json::from_str(VECTORS).unwrap();
    let (sk_e, _) = derive_key_pair(&h(&v, "ikmE"));
    let (sk_r, pk_r) = derive_key_pair(&h(&v, "ikmR"));
    let info = h(&v, "info");
    let (enc, mut sender) = setup_sender_with_ephemeral(&pk_r, &info, &sk_e).unwrap();
    let mut receiver = setup_receiver(&enc, &sk_r, &pk_r, &info).unwrap();

    let encryptions = v["encryptions"].as_array().unwrap();
    assert!(encryptions.len() >= 6);
    for (expected_seq, e) in (0u64..).zip(encryptions) {
        // The vectors are consecutive sequence numbers; seal/open advance one each.
        assert_eq!(e["seq"].as_u64(), Some(expected_seq));
        let nonce = sender.clone_nonce_for_test();
        assert_eq!(nonce.as_slice(), h(e, "nonce"), "nonce at seq {expected_seq}");
        let ct = sender.seal(&h(e, "aad"), &h(e, "pt")).unwrap();
        assert_eq!(ct, h(e, "ct"), "ct at seq {expected_seq}");
        let pt = receiver.open(&h(e, "aad"), &ct).unwrap();
        assert_eq!(pt.as_slice(), h(e, "pt"));
    }

    let exports = v["exports"].as_array().unwrap();
    assert_eq!(exports.len(), 3);
    for x in exports {
        let len = x["L"].as_u64().unwrap() as usize;
        let mut out = vec![0u8; len];
        sender.export(&h(x, "exporter_context"), &mut out);
        assert_eq!(out, h(x, "exported_value"));
        receiver.export(&h(x, "exporter_context"), &mut out);
        assert_eq!(out, h(x, "exported_value"));
    }
}

impl Context {
    fn clone_nonce_for_test(&self) -> [u8; N_N] {
        let mut nonce = self.base_nonce;
        for (n, s) in nonce[N_N - 8..].iter_mut().zip(self.seq.to_be_bytes()) {
            *n ^= s;
        }
        nonce
    }
}

#[test]
fn open_failure_does_not_advance_sequence() {
    let (sk_r, pk_r) = generate_key_pair(&mut rand_core::OsRng);
    let (enc, mut s) = setup_sender(&pk_r, b"info", &mut rand_core::OsRng).unwrap();
    let mut r = setup_receiver(&enc, &sk_r, &pk_r, b"info").unwrap();
    let ct = s.seal(b"", b"hello").unwrap();
    let mut bad = ct.clone();
    bad[0] ^= 1;
    assert_eq!(r.open(b"", &bad).unwrap_err(), HpkeError::OpenFailed);
    assert_eq!(r.open(b"", &ct).unwrap().as_slice(), b"hello");
}

#[test]
fn small_order_keys_are_refused() {
    let (sk_r, pk_r) = generate_key_pair(&mut rand_core::OsRng);
    // The all-zero point and the order-8 point 1 give an all-zero shared secret.
    let mut one = [0u8; 32];
    one[0] = 1;
    for bad in [[0u8; 32], one] {
        assert_eq!(setup_receiver(&bad, &sk_r, &pk_r, b"").err(), Some(HpkeError::SmallOrderKey));
        assert_eq!(setup_sender(&bad, b"", &mut rand_core::OsRng).err(), Some(HpkeError::SmallOrderKey));
    }
}

/// Issue 18 finding 7 asked for chacha20poly1305's `zeroize` feature. Version 0.10 has none to
/// turn on: it always builds chacha20 with `zeroize` and wipes the key when the cipher drops.
/// This fails to compile if a new version stops promising that.
#[test]
fn the_aead_cipher_wipes_its_key_on_drop() {
    fn wipes_on_drop<T: zeroize::ZeroizeOnDrop>() {}
    wipes_on_drop::<chacha20poly1305::ChaCha20Poly1305>();
}
