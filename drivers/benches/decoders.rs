//! Decoder throughput per dialect: frames per second through the tokio-util codec, on a
//! buffer of back-to-back frames. Run: `cargo bench -p croupier-drivers --bench decoders`.

use std::time::Duration;

use bytes::BytesMut;
use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use croupier_drivers::card::Card;
use croupier_drivers::proto::ascii::AsciiSuitRank;
use croupier_drivers::proto::barcode::Barcode4;
use croupier_drivers::proto::line::LineFormat;
use croupier_drivers::proto::v1::{Body, Frame, V1Codec};
use croupier_drivers::proto::ShoeCodec;
use croupier_drivers::ShoeItem;
use tokio_util::codec::Decoder;

const FRAMES: usize = 10_000;

fn card(i: usize) -> Card {
    Card::from_index(i % 52).expect("index below 52")
}

fn stream(encode: impl Fn(usize) -> Vec<u8>) -> Vec<u8> {
    (0..FRAMES).flat_map(encode).collect()
}

fn bench_codec(c: &mut Criterion, name: &str, codec: ShoeCodec, bytes: Vec<u8>) {
    let mut group = c.benchmark_group("decode");
    group.throughput(Throughput::Elements(FRAMES as u64));
    group.bench_function(name, |b| {
        b.iter_batched(
            || (codec.clone(), BytesMut::from(&bytes[..])),
            |(mut codec, mut buf)| {
                let mut n = 0;
                while let Ok(Some(_)) = codec.decode(&mut buf) {
                    n += 1;
                }
                assert_eq!(n, FRAMES);
            },
            BatchSize::LargeInput,
        )
    });
    group.finish();
}

fn decoders(c: &mut Criterion) {
    let v1 = stream(|i| Frame::new((i % 255) as u8 + 1, Body::Card(card(i))).to_wire());
    bench_codec(c, "croupier-v1", ShoeCodec::V1(V1Codec::new()), v1);
    let ascii = AsciiSuitRank::default();
    let lines = stream(|i| ascii.encode(ShoeItem::Card(card(i))).expect("cards encode"));
    bench_codec(c, "ascii-suit-rank", ShoeCodec::Ascii(ascii.codec()), lines);
    let scans = stream(|i| {
        Barcode4
            .encode(ShoeItem::Card(card(i)))
            .expect("cards encode")
    });
    bench_codec(c, "barcode4", ShoeCodec::Barcode(Barcode4.codec()), scans);
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(30)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    targets = decoders
}
criterion_main!(benches);
