//! Known-answer vectors for the prompt envelope (DESIGN.md §4.1), the encrypted reply (§4.2) and
//! the v2 receipt (§4.5), made here with the real `shared` functions from fixed inputs and
//! committed as `tests/vectors/envelope_v1.json`, which the web page's tests read
//! (`relay/web/test/crypto-envelope.test.mjs`).
//!
//! The test fails when what Rust produces differs from the committed file, so a change on either
//! side shows. `SVC_WRITE_VECTORS=1` rewrites the file instead (then rerun the web tests). The
//! file's `js` section is an envelope the page's code sealed; Rust cannot make it, so a rewrite
//! keeps it as it is, and the test opens it here with the fixed enclave key.
//!
//! Randomness is injected through the `rng` parameter the functions already take: a scripted
//! source that hands out exactly the bytes it was given, and the test checks that the values
//! came out where they were meant to (nonce, `enc`, response nonce), so a change in the order
//! the functions draw bytes fails here instead of writing wrong vectors.

#![cfg(all(feature = "sender", feature = "ledger"))]

use chacha20poly1305::ChaCha20Poly1305;
use chacha20poly1305::aead::{Aead, KeyInit};
use ed25519_dalek::SigningKey;
use hkdf::Hkdf;
use rand_core::{CryptoRng, RngCore};
use serde_json::{Value, json};
use sha2::Sha256;
use shared::address::{Address, default_program_id, find_program_address, receipt_address};
use shared::envelope::{self, Envelope, Message, PromptPlaintext, Purpose, Role};
use shared::keys::TeeKey;
use shared::receipt::{Receipt, ReceiptBody, ReceiptContext};
use shared::served_by::ServedBy;
use shared::wire::{GpuVerdict, NodeVerdict, ReplyPlaintext, Usage};
use shared::{b64, catalog, reply, sha256};
use x25519_dalek::{PublicKey, StaticSecret};

const PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/vectors/envelope_v1.json");
const WRITE_VAR: &str = "SVC_WRITE_VECTORS";

/// A randomness source that returns exactly the scripted bytes, and panics past them.
struct Scripted {
    bytes: Vec<u8>,
    at: usize,
}

impl Scripted {
    fn new(parts: &[&[u8]]) -> Self {
        Scripted { bytes: parts.concat(), at: 0 }
    }

    fn assert_used_up(&self) {
        assert_eq!(self.at, self.bytes.len(), "the scripted randomness was not all drawn");
    }
}

impl RngCore for Scripted {
    fn next_u32(&mut self) -> u32 {
        let mut b = [0u8; 4];
        self.fill_bytes(&mut b);
        u32::from_le_bytes(b)
    }

    fn next_u64(&mut self) -> u64 {
        let mut b = [0u8; 8];
        self.fill_bytes(&mut b);
        u64::from_le_bytes(b)
    }

    fn fill_bytes(&mut self, dest: &mut [u8]) {
        let end = self.at + dest.len();
        assert!(end <= self.bytes.len(), "drew more randomness than scripted");
        dest.copy_from_slice(&self.bytes[self.at..end]);
        self.at = end;
    }

    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), rand_core::Error> {
        self.fill_bytes(dest);
        Ok(())
    }
}

impl CryptoRng for Scripted {}

/// A fixed 32-byte input: sha256 of a label, so the inputs are reproducible from their names.
fn fixed(label: &str) -> [u8; 32] {
    sha256(format!("svc envelope_v1 vector: {label}").as_bytes())
}

struct Inputs {
    enclave_secret: [u8; 32],
    client_secret: [u8; 32],
    nonce: [u8; 16],
    response_nonce: [u8; 32],
    enclave_seed: [u8; 32],
    binding_quote_sha256: [u8; 32],
    plaintext: PromptPlaintext,
    receipt_timestamp: u64,
    reply: &'static str,
    usage: Usage,
    verdict: NodeVerdict,
}

fn inputs() -> Inputs {
    let nonce: [u8; 16] = fixed("nonce")[..16].try_into().unwrap();
    let plaintext = PromptPlaintext {
        // Quotes, a backslash, control characters, non-ASCII and a character outside the BMP:
        // the page must serialise them exactly as serde_json does.
        prompt: Some("Héllo \"enclave\" \\ — ünïcödé 😀\n\t</script>\u{1}\u{7f}".into()),
        messages: None,
        model: Some(catalog::DEFAULT_MODEL.into()),
        max_tokens: Some(256),
        temperature: Some(0.5),
        timestamp: Some(1_800_000_000),
    };
    let gpu = GpuVerdict {
        device: hex::encode(fixed("gpu device")),
        driver: "550.90.07".into(),
        vbios: "96.00.9F.00.01".into(),
        board: "1010-0200-882".into(),
        fwid: hex::encode([fixed("gpu fwid").as_slice(), &fixed("gpu fwid 2")[..16]].concat()),
        measurements_matched: 33,
        ocsp_produced_at: 1_799_999_000,
    };
    let verdict = NodeVerdict {
        tls_spki_sha256: hex::encode(fixed("node tls spki")),
        quote_sha256: hex::encode(fixed("node quote")),
        evidence_digest: hex::encode(fixed("gpu evidence")),
        trust_root: "dev:vectors".into(),
        tcb_status: Some("UpToDate".into()),
        device_root: "dev:vectors".into(),
        gpus: vec![gpu],
        verified_at: 1_799_999_900,
    };
    Inputs {
        enclave_secret: fixed("enclave x25519 secret"),
        client_secret: fixed("client ephemeral secret"),
        nonce,
        response_nonce: fixed("response nonce"),
        enclave_seed: fixed("enclave ed25519 seed"),
        binding_quote_sha256: fixed("binding quote"),
        plaintext,
        receipt_timestamp: 1_800_000_002,
        reply: "Bonjour — the answer is 42 ✓",
        usage: Usage { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 },
        verdict,
    }
}

/// The reply key and AEAD nonce of DESIGN.md §4.2, computed here independently of
/// `shared::reply` (whose helper is private) so the file shows the intermediate values.
fn reply_key(secret: &[u8; 32], enc: &[u8; 32], response_nonce: &[u8; 32]) -> ([u8; 32], [u8; 12]) {
    let salt = [enc.as_slice(), response_nonce].concat();
    let hk = Hkdf::<Sha256>::new(Some(&salt), secret);
    let (mut key, mut nonce) = ([0u8; 32], [0u8; 12]);
    hk.expand(b"key", &mut key).unwrap();
    hk.expand(b"nonce", &mut nonce).unwrap();
    (key, nonce)
}

/// Everything Rust produces from the fixed inputs, as the file holds it (without `js`).
fn generate() -> Value {
    let inp = inputs();
    let enclave_sk = StaticSecret::from(inp.enclave_secret);
    let enclave_pk = PublicKey::from(&enclave_sk).to_bytes();
    let client_pk = PublicKey::from(&StaticSecret::from(inp.client_secret)).to_bytes();
    let signing = SigningKey::from_bytes(&inp.enclave_seed);
    let program_id = default_program_id();

    // The client seals, exactly as `svc chat` does (client/src/chat.rs).
    let plaintext_bytes = serde_json::to_vec(&inp.plaintext).unwrap();
    let mut rng = Scripted::new(&[&inp.nonce, &inp.client_secret]);
    let (env, client_ctx) = envelope::seal(&enclave_pk, &plaintext_bytes, &mut rng).unwrap();
    rng.assert_used_up();
    assert_eq!(env.nonce, inp.nonce, "seal drew the nonce first");
    assert_eq!(env.enc, client_pk, "seal drew the ephemeral secret second");
    assert_eq!(env.key_id, Some(sha256(&enclave_pk)));
    let encrypted_prompt = env.to_json_string();

    // The enclave opens it as enclave/src/inference/chat.rs does.
    let parsed = Envelope::parse(&encrypted_prompt).unwrap();
    assert_eq!(parsed, env);
    let (opened, enclave_ctx) = parsed.open(&enclave_sk, &enclave_pk).unwrap();
    assert_eq!(opened.as_slice(), plaintext_bytes.as_slice());
    assert_eq!(PromptPlaintext::parse(&opened).unwrap(), inp.plaintext);

    // The receipt and the GPU node statement the enclave signs.
    let body = ReceiptBody {
        prompt_hash: env.ciphertext_hash(),
        tee_pubkey: TeeKey(enclave_pk),
        nonce: env.nonce,
        client_pubkey: env.client_key(),
        model: catalog::DEFAULT_MODEL.into(),
        provider: catalog::PROVIDER.into(),
    };
    let ctx =
        ReceiptContext { program_id, timestamp: inp.receipt_timestamp, tdx_quote_hash: Some(inp.binding_quote_sha256) };
    let receipt = Receipt::issue(&body, &signing, &ctx).unwrap();
    let verified = receipt.verify(&program_id).unwrap();
    assert_eq!(verified.body, body);
    let (address, bump) = find_program_address(&[b"attestation_v2", &body.prompt_hash.0], &program_id).unwrap();
    assert_eq!(address.to_string(), receipt.address);
    let served_by = ServedBy::issue(&receipt, &inp.verdict, &signing).unwrap();
    served_by.verify(&receipt).unwrap();

    // The sealed reply.
    let reply_plaintext = ReplyPlaintext {
        reply: inp.reply.into(),
        model: catalog::DEFAULT_MODEL.into(),
        usage: inp.usage,
        receipt: receipt.clone(),
        served_by: Some(served_by),
    };
    let reply_bytes = serde_json::to_vec(&reply_plaintext).unwrap();
    let mut rng = Scripted::new(&[&inp.response_nonce]);
    let encrypted_response = reply::seal(&enclave_ctx, &env.enc, &reply_bytes, &mut rng);
    rng.assert_used_up();
    assert_eq!(encrypted_response.nonce, b64::encode(inp.response_nonce));
    let reopened = reply::open(&client_ctx, &env.enc, &encrypted_response).unwrap();
    assert_eq!(reopened.as_slice(), reply_bytes.as_slice());

    let mut secret = [0u8; 32];
    client_ctx.export(reply::EXPORT_LABEL, &mut secret);
    let (key, aead_nonce) = reply_key(&secret, &env.enc, &inp.response_nonce);
    let ct = b64::decode(&encrypted_response.ciphertext).unwrap();
    let direct = ChaCha20Poly1305::new((&key).into()).decrypt((&aead_nonce).into(), ct.as_slice()).unwrap();
    assert_eq!(direct, reply_bytes, "the reply key matches DESIGN.md §4.2 step by step");

    // PDAs for 48 hashes, so the page's off-curve check meets bumps below 255.
    let addresses: Vec<Value> = (0u8..48)
        .map(|i| {
            let hash = sha256(&[i]);
            let (a, bump) = find_program_address(&[b"attestation_v2", &hash], &program_id).unwrap();
            assert_eq!(receipt_address(&shared::keys::PromptHash(hash), &program_id), a);
            json!({"ciphertextHash": hex::encode(hash), "address": a.to_string(), "bump": bump})
        })
        .collect();
    assert!(
        addresses.iter().any(|a| a["bump"].as_u64() != Some(255)),
        "the address list must exercise the off-curve search"
    );

    let models: Vec<Value> = [
        "gpt-oss:20b",
        "svc-gpu:gpt-oss:20b",
        "gpt-oss-20b",
        "qwen3.8:27b",
        "qwen3:8b",
        "qwen3-8b",
        "svc-gpu:qwen3:8b",
        "gemma4:31b",
        "llama-9000",
        "other:gpt-oss:20b",
        "svc-gpu:",
    ]
    .iter()
    .map(|m| json!([m, catalog::resolve(m)]))
    .collect();

    json!({
        "description": "Known answers for DESIGN.md §4.1 (envelope), §4.2 (encrypted reply) and §4.5 (v2 receipt), \
    made by shared/tests/envelope_vectors.rs with the real shared crate from the fixed inputs below; \
    each fixed 32-byte input is sha256(\"svc envelope_v1 vector: <label>\"). Bytes are lowercase hex unless a field is a wire string. \
    `js` is an envelope the web page sealed (relay/web/src/crypto), which the Rust test opens. \
    Rewrite with SVC_WRITE_VECTORS=1 cargo test -p shared --features sender,ledger --test envelope_vectors.",
        "inputs": {
            "enclaveX25519Secret": hex::encode(inp.enclave_secret),
            "clientEphemeralSecret": hex::encode(inp.client_secret),
            "nonce": hex::encode(inp.nonce),
            "plaintext": serde_json::to_value(&inp.plaintext).unwrap(),
            "responseNonce": hex::encode(inp.response_nonce),
            "enclaveEd25519Seed": hex::encode(inp.enclave_seed),
            "programId": program_id.to_string(),
            "receiptTimestamp": inp.receipt_timestamp,
            "bindingQuoteSha256": hex::encode(inp.binding_quote_sha256),
            "model": catalog::DEFAULT_MODEL,
            "provider": catalog::PROVIDER,
            "reply": inp.reply,
            "usage": serde_json::to_value(inp.usage).unwrap(),
            "nodeVerdict": serde_json::to_value(&inp.verdict).unwrap(),
        },
        "envelope": {
            "enclaveX25519Public": hex::encode(enclave_pk),
            "keyId": hex::encode(sha256(&enclave_pk)),
            "info": hex::encode(envelope::info(Purpose::Prompt, &inp.nonce)),
            "plaintextJson": String::from_utf8(plaintext_bytes).unwrap(),
            "enc": hex::encode(env.enc),
            "ciphertext": hex::encode(&env.ciphertext),
            "ciphertextSha256": hex::encode(env.ciphertext_hash().0),
            "encryptedPrompt": encrypted_prompt,
        },
        "reply": {
            "exportedSecret": hex::encode(secret),
            "key": hex::encode(key),
            "aeadNonce": hex::encode(aead_nonce),
            "plaintextJson": String::from_utf8(reply_bytes).unwrap(),
            "encryptedResponse": serde_json::to_value(&encrypted_response).unwrap(),
        },
        "receipt": {
            "enclaveEd25519Public": hex::encode(signing.verifying_key().as_bytes()),
            "signedMessage": hex::encode(body.signed_message().unwrap()),
            "bump": bump,
            "receipt": serde_json::to_value(&receipt).unwrap(),
        },
        "addresses": {
            "programId": program_id.to_string(),
            "defaultProgramIdLabel": "svc attestation program v2 (embedded ledger)",
            "list": addresses,
        },
        "models": {
            "default": catalog::DEFAULT_MODEL,
            "resolve": models,
        },
    })
}

/// Opens the page's envelope with the fixed enclave key; the `js` section is the page's work.
fn open_js_envelope(js: &Value) {
    let inp = inputs();
    let enclave_sk = StaticSecret::from(inp.enclave_secret);
    let enclave_pk = PublicKey::from(&enclave_sk).to_bytes();
    let text = |k: &str| js[k].as_str().unwrap_or_else(|| panic!("js.{k} is missing"));
    let hex32 = |k: &str| -> [u8; 32] { hex::decode(text(k)).unwrap().try_into().unwrap() };

    let env = Envelope::parse(text("encryptedPrompt")).expect("the page's envelope parses strictly");
    assert_eq!(env.key_id, Some(sha256(&enclave_pk)), "keyId names the enclave key");
    assert_eq!(hex::encode(env.nonce), text("nonce"));
    let ephemeral = PublicKey::from(&StaticSecret::from(hex32("ekm"))).to_bytes();
    assert_eq!(env.enc, ephemeral, "publicKey is the X25519 public key of the fixed ekm");
    let (opened, enclave_ctx) = env.open(&enclave_sk, &enclave_pk).expect("the page's envelope opens in Rust");
    assert_eq!(std::str::from_utf8(&opened).unwrap(), text("plaintextJson"));
    let parsed = PromptPlaintext::parse(&opened).expect("the enclave accepts the page's plaintext");
    assert_eq!(serde_json::to_value(&parsed).unwrap(), js["plaintext"], "plaintext fields");
    assert_eq!(
        parsed.messages,
        Some(vec![
            Message { role: Role::System, content: "Answer briefly.".into() },
            Message { role: Role::User, content: "Wie spät ist es? 🕰️ \"quoted\"\n".into() },
        ])
    );
    // A prompt envelope never opens as another purpose.
    assert!(env.open_for(Purpose::Provision, &enclave_sk, &enclave_pk).is_err());

    // The page reads what the enclave seals to it: check the exported secret it would use.
    let mut secret = [0u8; 32];
    enclave_ctx.export(reply::EXPORT_LABEL, &mut secret);
    assert_eq!(hex::encode(secret), text("exportedSecret"), "the page's context holds the same secret");

    // And the provision envelope opens only as one.
    let provision = &js["provision"];
    let env = Envelope::parse(provision["encryptedPrompt"].as_str().unwrap()).unwrap();
    assert!(env.open(&enclave_sk, &enclave_pk).is_err(), "a provision envelope is not a prompt");
    let (opened, _) = env.open_for(Purpose::Provision, &enclave_sk, &enclave_pk).unwrap();
    assert_eq!(std::str::from_utf8(&opened).unwrap(), provision["plaintextJson"].as_str().unwrap());
}

#[test]
fn envelope_reply_and_receipt_vectors() {
    let committed: Option<Value> = std::fs::read_to_string(PATH).ok().map(|t| serde_json::from_str(&t).unwrap());
    let mut generated = generate();
    let js = committed.as_ref().and_then(|c| c.get("js")).cloned();
    if let Some(js) = &js {
        generated["js"] = js.clone();
    }

    if std::env::var_os(WRITE_VAR).is_some() {
        let text = serde_json::to_string_pretty(&generated).unwrap() + "\n";
        std::fs::write(PATH, text).unwrap();
        eprintln!("wrote {PATH}");
    } else {
        let committed = committed.unwrap_or_else(|| panic!("{PATH} is missing; run with {WRITE_VAR}=1"));
        // Compared as JSON values (member order aside); every wire string inside compares exactly.
        for (key, value) in generated.as_object().unwrap() {
            assert_eq!(
                committed.get(key),
                Some(value),
                "`{key}` in {PATH} differs from what shared produces; if the change is intended, \
                 rerun with {WRITE_VAR}=1 and then the web tests"
            );
        }
        assert_eq!(committed, generated, "{PATH} has members the generator does not make");
    }
    open_js_envelope(js.as_ref().expect("the `js` section (an envelope the page sealed) is missing"));
}

/// The page computes the default program id from its label, as the file names it.
#[test]
fn default_program_id_is_the_labelled_hash() {
    assert_eq!(default_program_id(), Address(sha256(b"svc attestation program v2 (embedded ledger)")));
}
