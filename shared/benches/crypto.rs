//! The enclave's per-request crypto: envelope open (4 KiB prompt), reply seal, receipt
//! sign + verify, address derivation, and all of one request together.
//! Target: open + seal + sign ≤ 100 µs median (docs/benchmarks.md).

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use ed25519_dalek::SigningKey;
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
}

criterion_group!(crypto, benches);
criterion_main!(crypto);
