//! The enclave's per-request crypto: envelope open (4 KiB prompt), reply seal, receipt
//! sign + verify, address derivation, and all of one request together, beside its floor: the
//! primitives no implementation can skip (one X25519 Diffie–Hellman, one ed25519 signature, the
//! AEAD over the prompt and the reply). Targets: open + seal + sign ≤ 100 µs median, and
//! ≤ 1.15× the floor in the same run (docs/benchmarks.md).

use std::hint::black_box;

use chacha20poly1305::ChaCha20Poly1305;
use chacha20poly1305::aead::{Aead, KeyInit};
use criterion::{Criterion, criterion_group, criterion_main};
use ed25519_dalek::{Signer, SigningKey};
use rand_core::OsRng;
use shared::address::{default_program_id, receipt_address};
use shared::envelope::{self, Envelope};
use shared::receipt::{Receipt, ReceiptBody, ReceiptContext};
use shared::{hpke, reply};

fn prompt_4k() -> Vec<u8> {
    let text = "x".repeat(4096 - 40);
    serde_json::to_vec(&serde_json::json!({"prompt": text, "timestamp": 1_700_000_000u64})).unwrap()
}

fn body(env: &Envelope, tee: [u8; 32]) -> ReceiptBody {
    ReceiptBody {
        prompt_hash: env.ciphertext_hash(),
        tee_pubkey: shared::keys::TeeKey(tee),
        nonce: env.nonce,
        client_pubkey: env.client_key(),
        model: "gpt-oss:20b".into(),
        provider: "svc-gpu".into(),
    }
}

fn benches(c: &mut Criterion) {
    let (sk, pk) = hpke::generate_key_pair(&mut OsRng);
    let signer = SigningKey::generate(&mut OsRng);
    let pt = prompt_4k();
    let (env, _) = envelope::seal(&pk, &pt, &mut OsRng).unwrap();
    let wire = env.to_json_string();
    let reply_pt = vec![b'r'; 1024];
    let ctx = ReceiptContext { program_id: default_program_id(), timestamp: 1, tdx_quote_hash: Some([7; 32]) };

    c.bench_function("envelope_open_4KiB (parse + HPKE open)", |b| {
        b.iter(|| {
            let env = Envelope::parse(black_box(&wire)).unwrap();
            black_box(env.open(&sk, &pk).unwrap())
        })
    });

    let (_, hpke_ctx) = env.open(&sk, &pk).unwrap();
    c.bench_function("reply_seal_1KiB", |b| {
        b.iter(|| black_box(reply::seal(&hpke_ctx, &env.enc, black_box(&reply_pt), &mut OsRng)))
    });

    let receipt_body = body(&env, pk);
    c.bench_function("receipt_sign (incl. address)", |b| {
        b.iter(|| black_box(Receipt::issue(black_box(&receipt_body), &signer, &ctx).unwrap()))
    });
    let receipt = Receipt::issue(&receipt_body, &signer, &ctx).unwrap();
    c.bench_function("receipt_verify (incl. address)", |b| {
        b.iter(|| black_box(receipt.verify(&ctx.program_id).unwrap()))
    });
    c.bench_function("receipt_sign_and_verify", |b| {
        b.iter(|| {
            let r = Receipt::issue(black_box(&receipt_body), &signer, &ctx).unwrap();
            black_box(r.verify(&ctx.program_id).unwrap())
        })
    });

    let hash = env.ciphertext_hash();
    c.bench_function("address_derivation", |b| {
        b.iter(|| black_box(receipt_address(black_box(&hash), &ctx.program_id)))
    });

    c.bench_function("enclave_request_crypto (open 4KiB + sign receipt + seal reply)", |b| {
        b.iter(|| {
            let env = Envelope::parse(black_box(&wire)).unwrap();
            let (_pt, hpke_ctx) = env.open(&sk, &pk).unwrap();
            let r = Receipt::issue(&body(&env, pk), &signer, &ctx).unwrap();
            let mut plain = serde_json::to_vec(&r).unwrap();
            plain.extend_from_slice(&reply_pt);
            black_box(reply::seal(&hpke_ctx, &env.enc, &plain, &mut OsRng))
        })
    });

    // The floor: the same sizes through the bare primitives.
    let secret = x25519_dalek::StaticSecret::random_from_rng(OsRng);
    let peer = x25519_dalek::PublicKey::from(&x25519_dalek::StaticSecret::random_from_rng(OsRng));
    let message = receipt_body.signed_message().unwrap();
    let aead = ChaCha20Poly1305::new(&[9; 32].into());
    let prompt_ct = aead.encrypt(&[0; 12].into(), pt.as_slice()).unwrap();
    let reply_len = serde_json::to_vec(&receipt).unwrap().len() + reply_pt.len();
    let reply_plain = vec![b'r'; reply_len];
    c.bench_function("floor (X25519 DH + ed25519 sign + AEAD open 4KiB + AEAD seal reply)", |b| {
        b.iter(|| {
            black_box(secret.diffie_hellman(black_box(&peer)));
            black_box(signer.sign(black_box(&message)));
            black_box(aead.decrypt(&[0; 12].into(), black_box(prompt_ct.as_slice())).unwrap());
            black_box(aead.encrypt(&[1; 12].into(), black_box(reply_plain.as_slice())).unwrap())
        })
    });
}

criterion_group!(crypto, benches);
criterion_main!(crypto);
