//! Codec behaviour common to all dialects: split input, noise, resynchronisation.

use bytes::BytesMut;
use tokio_util::codec::Decoder;

use super::ascii::AsciiSuitRank;
use super::barcode::Barcode4;
use super::line::{LineFormat, MAX_LINE};
use super::v1::{Body, Frame, V1Codec};
use crate::card::Card;
use crate::event::{Fault, FaultKind, ShoeItem};

/// Feeds `chunks` one after another, then EOF, collecting everything decoded.
fn decode_chunks<D, T>(codec: &mut D, chunks: &[&[u8]]) -> Vec<Result<T, Fault>>
where
    D: Decoder<Item = Result<T, Fault>, Error = std::io::Error>,
{
    let mut buf = BytesMut::new();
    let mut out = Vec::new();
    for chunk in chunks {
        buf.extend_from_slice(chunk);
        while let Some(item) = codec.decode(&mut buf).expect("decoders do not fail") {
            out.push(item);
        }
    }
    while let Some(item) = codec.decode_eof(&mut buf).expect("decoders do not fail") {
        out.push(item);
    }
    out
}

fn cards(codes: &[&str]) -> Vec<ShoeItem> {
    codes
        .iter()
        .map(|c| ShoeItem::Card(c.parse::<Card>().expect("card code")))
        .collect()
}

/// Splitting a stream anywhere, at any two places, must decode exactly as whole.
fn assert_split_invariant<D, T>(new: impl Fn() -> D, stream: &[u8])
where
    D: Decoder<Item = Result<T, Fault>, Error = std::io::Error>,
    T: PartialEq + std::fmt::Debug,
{
    let whole = decode_chunks(&mut new(), &[stream]);
    for i in 0..=stream.len() {
        for j in i..=stream.len() {
            let parts = [&stream[..i], &stream[i..j], &stream[j..]];
            assert_eq!(decode_chunks(&mut new(), &parts), whole, "split at {i},{j}");
        }
    }
    let bytes: Vec<&[u8]> = stream.chunks(1).collect();
    assert_eq!(decode_chunks(&mut new(), &bytes), whole, "byte by byte");
}

#[test]
fn ascii_lines_split_anywhere_with_noise() {
    let stream = b"D12\r\nS01\r\nxx\r\nH13\nC10\r";
    let new = || AsciiSuitRank::default().codec();
    let got = decode_chunks(&mut new(), &[stream]);
    let want_cards = cards(&["QD", "AS", "KH", "TC"]);
    let ok: Vec<ShoeItem> = got.iter().filter_map(|r| r.clone().ok()).collect();
    assert_eq!(ok, want_cards);
    assert_eq!(got[2], Err(Fault::new(FaultKind::Malformed, b"xx")));
    assert_split_invariant(new, stream);
}

#[test]
fn barcode_lines_split_anywhere_with_noise() {
    let stream = b"1010\r4130\r\n\x1b[A\r3100\r";
    let new = || Barcode4.codec();
    let got = decode_chunks(&mut new(), &[stream]);
    assert_eq!(got.len(), 4);
    assert_eq!(got[2], Err(Fault::new(FaultKind::Malformed, b"\x1b[A")));
    let ok: Vec<ShoeItem> = got.iter().filter_map(|r| r.clone().ok()).collect();
    assert_eq!(ok, cards(&["AS", "KD", "TC"]));
    assert_split_invariant(new, stream);
}

#[test]
fn line_noise_without_terminator_is_bounded_and_resyncs() {
    let mut codec = Barcode4.codec();
    let noise = vec![b'7'; MAX_LINE + 5];
    let got = decode_chunks(&mut codec, &[&noise, b"\r2010\r"]);
    assert_eq!(got[0], Err(Fault::new(FaultKind::Oversized, &noise)));
    assert_eq!(got.last(), Some(&Ok(cards(&["AH"])[0])));
    assert!(got.iter().filter(|r| r.is_ok()).count() == 1);
}

#[test]
fn partial_line_at_eof_is_a_truncation_fault() {
    let got = decode_chunks(&mut AsciiSuitRank::default().codec(), &[b"S01\r\nD1"]);
    assert_eq!(
        got,
        vec![
            Ok(cards(&["AS"])[0]),
            Err(Fault::new(FaultKind::Truncated, b"D1"))
        ]
    );
}

fn v1_stream() -> Vec<u8> {
    let mut s = Vec::new();
    s.extend(Frame::new(0, Body::Hello).to_wire());
    s.extend(b"noise!");
    s.extend(Frame::new(0x7E, Body::Card("AS".parse().expect("card"))).to_wire());
    s.extend(Frame::new(0, Body::Heartbeat).to_wire());
    let mut bad = Frame::new(0x7F, Body::Card("KD".parse().expect("card"))).to_wire();
    let n = bad.len();
    bad[n - 2] ^= 0x01;
    s.extend(&bad);
    s.extend(Frame::new(0x7D, Body::CutCard).to_wire());
    s
}

#[test]
fn v1_noise_and_bad_crc_become_faults_between_good_frames() {
    let got = decode_chunks(&mut V1Codec::new(), &[&v1_stream()]);
    let bodies: Vec<Result<Body, FaultKind>> = got
        .iter()
        .map(|r| r.as_ref().map(|f| f.body).map_err(|e| e.kind))
        .collect();
    assert_eq!(
        bodies,
        vec![
            Ok(Body::Hello),
            Err(FaultKind::Malformed),
            Ok(Body::Card("AS".parse().expect("card"))),
            Ok(Body::Heartbeat),
            Err(FaultKind::BadCrc),
            Ok(Body::CutCard),
        ]
    );
    assert_eq!(got[1], Err(Fault::new(FaultKind::Malformed, b"noise!")));
}

#[test]
fn v1_frames_split_anywhere() {
    assert_split_invariant(V1Codec::new, &v1_stream());
}

#[test]
fn v1_flagless_noise_is_bounded() {
    let noise = [0x55u8; 100];
    let hb = Frame::new(0, Body::Heartbeat).to_wire();
    let got = decode_chunks(&mut V1Codec::new(), &[&noise, &hb]);
    assert!(matches!(&got[0], Err(f) if f.kind == FaultKind::Oversized));
    assert_eq!(got.last(), Some(&Ok(Frame::new(0, Body::Heartbeat))));
    assert!(got[..got.len() - 1].iter().all(|r| r.is_err()));
}

#[test]
fn no_single_bit_error_in_a_card_frame_yields_a_different_card() {
    // CRC-16 detects every single-bit error, so a corrupted card frame is a fault or
    // (if the flip hits a flag) a split into faults: never some other card.
    let frame = Frame::new(9, Body::Card("QD".parse().expect("card")));
    let wire = frame.to_wire();
    for byte in 0..wire.len() {
        for bit in 0..8 {
            let mut w = wire.clone();
            w[byte] ^= 1 << bit;
            for f in decode_chunks(&mut V1Codec::new(), &[&w])
                .into_iter()
                .flatten()
            {
                assert_eq!(f, frame, "flip {byte}:{bit} produced {f:?}");
            }
        }
    }
}

#[test]
fn line_formats_round_trip_all_52() {
    let formats: [&dyn LineFormat; 2] = [&AsciiSuitRank::default(), &Barcode4];
    for format in formats {
        assert_eq!(format.encode(ShoeItem::CutCard), None);
        for i in 0..52 {
            let item = ShoeItem::Card(Card::from_index(i).expect("index in range"));
            let line = format.encode(item).expect("every card encodes");
            let body = line.strip_suffix(b"\r\n").or(line.strip_suffix(b"\r"));
            assert_eq!(format.parse(body.expect("terminated")), Ok(item));
        }
    }
}
