//! What signing every message on the broker costs (issue #30): the table signs each
//! public message, log row and bucket snapshot with Ed25519 (`trust::wire`), and every
//! relay verifies each public message against the pinned key. Payloads of the sizes the
//! public stream carries (a `final` of about 100 bytes, a `view` of 1–2.5 kB):
//!
//! Since issue #37 a row published with its public messages is signed once for them all
//! (`wire::sign_together`): `sign_row` signs a log row of 400 bytes with one public
//! message of the given size, `verify_in_row` checks that message's proof.
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
        let row: Vec<u8> = (0..400).map(|i| b'a' + (i % 26) as u8).collect();
        let salt = wire::salt(&keys, "table-1:1:7");
        group.bench_with_input(BenchmarkId::new("sign_row", size), &payload, |b, p| {
            b.iter(|| {
                black_box(wire::sign_together(
                    &keys,
                    "table-1",
                    &row_parts(&row, salt, black_box(p)),
                ))
            })
        });
        let proofs = wire::sign_together(&keys, "table-1", &row_parts(&row, salt, &payload));
        group.bench_with_input(BenchmarkId::new("verify_in_row", size), &payload, |b, p| {
            b.iter(|| {
                black_box(wire::verify_proof(
                    &key,
                    wire::PUBLIC,
                    "table-1",
                    black_box(p),
                    proofs[1].as_ref(),
                ))
            })
        });
    }
    group.finish();
}

/// A log row and one public message, as the publisher signs them together.
fn row_parts<'a>(row: &'a [u8], salt: wire::Salt, public: &'a [u8]) -> [wire::Part<'a>; 2] {
    [
        wire::Part {
            domain: wire::LOG,
            payload: row,
            salt: Some(salt),
        },
        wire::Part {
            domain: wire::PUBLIC,
            payload: public,
            salt: None,
        },
    ]
}

criterion_group!(benches, bench);
criterion_main!(benches);
