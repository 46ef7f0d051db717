//! Shared by the fuzz targets: decode arbitrary bytes, split at a fuzzer-chosen point,
//! and check the invariants every decoder must keep.

use bytes::BytesMut;
use croupier_drivers::proto::{Decoded, ShoeCodec};
use tokio_util::codec::Decoder;

fn decode_all(mut codec: ShoeCodec, chunks: &[&[u8]]) -> Vec<Decoded> {
    let mut buf = BytesMut::new();
    let mut out = Vec::new();
    for chunk in chunks {
        buf.extend_from_slice(chunk);
        while let Some(item) = codec.decode(&mut buf).expect("decoders never fail") {
            out.push(item);
        }
        // Bounded memory whatever the input.
        assert!(buf.len() <= 64, "buffer grew to {}", buf.len());
    }
    while let Some(item) = codec.decode_eof(&mut buf).expect("decoders never fail") {
        out.push(item);
    }
    assert!(buf.is_empty());
    out
}

/// Never panics, stays bounded, and decodes the same however the input is split.
pub fn check(codec: ShoeCodec, data: &[u8]) {
    let Some((&cut, data)) = data.split_first() else {
        return;
    };
    let whole = decode_all(codec.clone(), &[data]);
    let at = usize::from(cut).min(data.len());
    let (a, b) = data.split_at(at);
    assert_eq!(decode_all(codec, &[a, b]), whole);
}
