use super::*;
use crate::address::default_program_id;

fn body() -> ReceiptBody {
    ReceiptBody {
        prompt_hash: PromptHash([1; 32]),
        tee_pubkey: TeeKey([2; 32]),
        nonce: [3; 16],
        client_pubkey: ClientKey([4; 32]),
        model: "gpt-oss:20b".into(),
        provider: "svc-gpu".into(),
    }
}

fn ctx() -> ReceiptContext {
    ReceiptContext { program_id: default_program_id(), timestamp: 1_700_000_000, tdx_quote_hash: None }
}

#[test]
fn signed_message_layout_is_exact() {
    let m = body().signed_message().unwrap();
    let mut expected = b"SVC-ATTEST-v2".to_vec();
    expected.extend([1u8; 32]);
    expected.extend([2u8; 32]);
    expected.extend([3u8; 16]);
    expected.extend([4u8; 32]);
    expected.push(11);
    expected.extend(b"gpt-oss:20b");
    expected.push(7);
    expected.extend(b"svc-gpu");
    assert_eq!(m, expected);
    assert_eq!(m.len(), 13 + 32 + 32 + 16 + 32 + 1 + 11 + 1 + 7);
}

#[test]
fn field_length_limits() {
    let mut b = body();
    b.model = "m".repeat(255);
    assert!(b.signed_message().is_ok());
    b.model = "m".repeat(256);
    assert_eq!(b.signed_message(), Err(ReceiptError::FieldTooLong("model")));
    let mut b = body();
    b.provider = "p".repeat(256);
    assert_eq!(b.signed_message(), Err(ReceiptError::FieldTooLong("provider")));
    // The limit is on bytes, not characters.
    let mut b = body();
    b.model = "é".repeat(128);
    assert_eq!(b.signed_message(), Err(ReceiptError::FieldTooLong("model")));
}

/// RFC 8032 §7.1 TEST 1 secret key: signing is deterministic, so the signature over our
/// message is a fixed value that any other ed25519 implementation reproduces.
#[test]
fn signature_is_rfc8032_ed25519() {
    let sk: [u8; 32] =
        hex::decode("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60").unwrap().try_into().unwrap();
    let key = SigningKey::from_bytes(&sk);
    assert_eq!(
        hex::encode(key.verifying_key().as_bytes()),
        "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a"
    );
    // RFC 8032 TEST 1 (empty message) pins the primitive itself.
    assert_eq!(
        hex::encode(key.sign(b"").to_bytes()),
        "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"
    );
    let r = Receipt::issue(&body(), &key, &ctx()).unwrap();
    let v = r.verify(&default_program_id()).unwrap();
    assert_eq!(v.body, body());
    assert_eq!(v.enclave_pubkey, EnclaveKey(key.verifying_key().to_bytes()));
}

#[test]
fn issue_then_verify_and_json_names() {
    let key = SigningKey::from_bytes(&[7; 32]);
    let r = Receipt::issue(&body(), &key, &ctx()).unwrap();
    let json = serde_json::to_value(&r).unwrap();
    for name in [
        "version",
        "address",
        "encryptedPromptHash",
        "teePubkey",
        "nonce",
        "clientPubkey",
        "enclavePubkey",
        "enclaveSigR",
        "enclaveSigS",
        "model",
        "provider",
        "timestamp",
        "backendSawPlaintext",
        "teeProcessed",
        "tdxQuoteHash",
    ] {
        assert!(json.get(name).is_some(), "missing {name}");
    }
    assert_eq!(json["version"], "v2");
    assert_eq!(json["backendSawPlaintext"], false);
    assert_eq!(json["teeProcessed"], true);
    assert_eq!(json["encryptedPromptHash"], hex::encode([1u8; 32]));
    assert!(r.verify(&default_program_id()).is_ok());
}

#[test]
fn every_signed_field_is_covered() {
    let key = SigningKey::from_bytes(&[7; 32]);
    let good = Receipt::issue(&body(), &key, &ctx()).unwrap();
    let pid = default_program_id();
    let tweak_b64 = |s: &str| {
        let mut b = b64::decode(s).unwrap();
        b[0] ^= 1;
        b64::encode(b)
    };
    let mut cases: Vec<(Receipt, ReceiptError)> = Vec::new();
    let mut r = good.clone();
    r.tee_pubkey = tweak_b64(&r.tee_pubkey);
    cases.push((r, ReceiptError::BadSignature));
    let mut r = good.clone();
    r.nonce = tweak_b64(&r.nonce);
    cases.push((r, ReceiptError::BadSignature));
    let mut r = good.clone();
    r.client_pubkey = tweak_b64(&r.client_pubkey);
    cases.push((r, ReceiptError::BadSignature));
    let mut r = good.clone();
    r.model = "qwen3.8:27b".into();
    cases.push((r, ReceiptError::BadSignature));
    let mut r = good.clone();
    r.provider = "other".into();
    cases.push((r, ReceiptError::BadSignature));
    let mut r = good.clone();
    r.enclave_sig_s = tweak_b64(&r.enclave_sig_s);
    cases.push((r, ReceiptError::BadSignature));
    let mut r = good.clone();
    r.enclave_pubkey = b64::encode(SigningKey::from_bytes(&[8; 32]).verifying_key().as_bytes());
    cases.push((r, ReceiptError::BadSignature));
    // A different hash moves the address too: the address check catches it first.
    let mut r = good.clone();
    r.encrypted_prompt_hash = hex::encode([9u8; 32]);
    cases.push((r, ReceiptError::AddressMismatch));
    let mut r = good.clone();
    r.address = crate::address::Address([5; 32]).to_string();
    cases.push((r, ReceiptError::AddressMismatch));
    let mut r = good.clone();
    r.version = "v1".into();
    cases.push((r, ReceiptError::WrongVersion("v1".into())));
    let mut r = good.clone();
    r.nonce = b64::encode([0u8; 15]);
    cases.push((r, ReceiptError::Malformed("nonce")));
    let mut r = good.clone();
    r.encrypted_prompt_hash = "AB".repeat(32);
    cases.push((r, ReceiptError::Malformed("encryptedPromptHash")));
    let mut r = good.clone();
    r.tdx_quote_hash = "zz".into();
    cases.push((r, ReceiptError::Malformed("tdxQuoteHash")));
    for (receipt, want) in cases {
        assert_eq!(receipt.verify(&pid), Err(want));
    }
    // Another program id gives another address.
    assert_eq!(good.verify(&crate::address::Address([0; 32])), Err(ReceiptError::AddressMismatch));
}
