//! Sealed objects (DESIGN §10): seal and open of a 1 KiB object (AES-256-GCM payload under a
//! fresh data key, the data key wrapped by the KEK), and of managed wallets' records: a wallet
//! key (`managed-wallet`) and a mint's book of private balances (`privacy-book`) at 1, 1,000,
//! 10,000 and 100,000 wallets (each with a credited transaction), and a whole book step on it:
//! open, decode, one credit, encode, seal, and the digest the witness appends. Every credit and
//! payout does that step once. docs/benchmarks.md records the medians and the sizes.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use enclave::funds::pool::Book;
use enclave::keys::sealed::{Header, Keks, open, seal};
use shared::address::Address;
use zeroize::Zeroizing;

fn benches(c: &mut Criterion) {
    let keks = Keks { current: Zeroizing::new([7; 32]), previous: vec![Zeroizing::new([6; 32])] };
    let header = Header { id: [1; 16], kind: "signing-key".into(), version: 1 };
    let object = vec![0x5a; 1024];
    let blob = seal(&keks, &header, &object).unwrap();
    c.bench_function("sealed_object_seal_1KiB", |b| b.iter(|| seal(&keks, black_box(&header), black_box(&object))));
    c.bench_function("sealed_object_open_1KiB", |b| b.iter(|| open(&keks, black_box(&blob))));
    let old = seal(&Keks { current: Zeroizing::new([6; 32]), previous: Vec::new() }, &header, &object).unwrap();
    c.bench_function("sealed_object_open_1KiB_previous_kek", |b| b.iter(|| open(&keks, black_box(&old))));

    // A wallet record: seed, wallet id and owner key, as enclave::funds seals it.
    let wallet = br#"{"seed":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=","walletId":"978f9ba3-38f4-48eb-98db-e26a2190152e","ownerPubkey":"9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin"}"#;
    let header = Header { id: [2; 16], kind: "managed-wallet".into(), version: 1 };
    let sealed_wallet = seal(&keks, &header, wallet).unwrap();
    c.bench_function("wallet_record_seal", |b| b.iter(|| seal(&keks, black_box(&header), black_box(wallet))));
    c.bench_function("wallet_record_open", |b| b.iter(|| open(&keks, black_box(&sealed_wallet))));

    let header = Header { id: [3; 16], kind: "privacy-book".into(), version: 1 };
    for wallets in [1usize, 1_000, 10_000, 100_000] {
        let book = book(wallets);
        let blob = seal(&keks, &header, &book.to_plaintext()).unwrap();
        let text = shared::b64::encode(&blob);
        println!("book of {wallets} wallets: {} bytes sealed, {} as base64", blob.len(), text.len());
        c.bench_function(&format!("book_seal_{wallets}_wallets"), |b| {
            b.iter(|| seal(&keks, &header, &black_box(&book).to_plaintext()))
        });
        c.bench_function(&format!("book_open_{wallets}_wallets"), |b| {
            b.iter(|| Book::from_plaintext(&open(&keks, black_box(&blob)).unwrap().plaintext).unwrap())
        });
        c.bench_function(&format!("book_step_{wallets}_wallets"), |b| {
            b.iter(|| {
                let bytes = shared::b64::decode(black_box(&text)).unwrap();
                let mut book = Book::from_plaintext(&open(&keks, &bytes).unwrap().plaintext).unwrap();
                book.credit(&Address([9; 32]), ("new transaction", 2_000), 1_000).unwrap();
                book.prune(2_000);
                let sealed = shared::b64::encode(seal(&keks, &header, &book.to_plaintext()).unwrap());
                shared::witness::Head::of(book.version + 1, &sealed)
            })
        });
    }
}

/// A book of `wallets` balances, each wallet with one credited encrypt transaction.
fn book(wallets: usize) -> Book {
    let address = |i: usize| Address(shared::sha256(&i.to_le_bytes()));
    let mut book = Book::genesis(&address(usize::MAX), &address(usize::MAX - 1));
    book.version = 42;
    book.balances = (0..wallets).map(|i| (address(i), 1_000_000 + i as u64)).collect();
    book.credited = (0..wallets).map(|i| (shared::sha256(&i.to_be_bytes()), 1_000)).collect();
    book
}

criterion_group!(group, benches);
criterion_main!(group);
