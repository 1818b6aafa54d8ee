//! Sealed objects (DESIGN §10): seal and open of a 1 KiB object (AES-256-GCM payload under a
//! fresh data key, the data key wrapped by the KEK). docs/benchmarks.md records the medians.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use enclave::sealed::{Header, Keks, open, seal};
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
}

criterion_group!(group, benches);
criterion_main!(group);
