//! What signing every message on the broker costs (issue #30): the table signs each
//! public message, log row and bucket snapshot with Ed25519 (`trust::wire`), and every
//! relay verifies each public message against the pinned key. Payloads of the sizes the
//! public stream carries (a `final` of about 100 bytes, a `view` of 1–2.5 kB):
//!
//!     cargo bench --bench wire

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use croupier::trust::{attest, wire, TableKeys};

fn bench(c: &mut Criterion) {
    let keys = TableKeys::from_secrets([7; 32], [8; 32]);
    let key = attest::verifying_key(&keys.public_hex()).expect("key");
    let mut group = c.benchmark_group("wire");
    for size in [100usize, 1_000, 2_500] {
        let payload: Vec<u8> = (0..size).map(|i| b'a' + (i % 26) as u8).collect();
        group.throughput(Throughput::Bytes(size as u64));
        group.bench_with_input(BenchmarkId::new("sign", size), &payload, |b, p| {
            b.iter(|| black_box(wire::sign(&keys, wire::PUBLIC, "table-1", black_box(p))))
        });
        let sig = wire::sign(&keys, wire::PUBLIC, "table-1", &payload);
        group.bench_with_input(BenchmarkId::new("verify", size), &payload, |b, p| {
            b.iter(|| {
                black_box(wire::verify(
                    &key,
                    wire::PUBLIC,
                    "table-1",
                    black_box(p),
                    &sig,
                ))
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
