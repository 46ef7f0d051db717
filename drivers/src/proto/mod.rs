//! The three wire dialects, each as a `tokio_util` codec.
//!
//! Decoders never fail on bad input: a garbled or unknown frame is yielded as a
//! [`Fault`](crate::event::Fault) carrying the bytes, and decoding resumes at the next
//! delimiter. The only decoder errors are I/O errors from below.

use bytes::BytesMut;
use tokio_util::codec::Decoder;

use crate::event::{Fault, ShoeItem};
use crate::shoe::config::{ConfigError, Dialect, ShoeConfig};

pub mod ascii;
pub mod barcode;
pub mod line;
mod split;
pub mod v1;

/// One decoded unit from any dialect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decoded {
    /// A `croupier-v1` frame, still to be run through the link rules.
    Frame(v1::Frame),
    /// A card or cut card from a line dialect.
    Item(ShoeItem),
    /// Bytes that were not a valid frame.
    Fault(Fault),
}

/// The decoder for whichever dialect the config names.
#[derive(Debug, Clone)]
pub enum ShoeCodec {
    /// `croupier-v1`.
    V1(v1::V1Codec),
    /// `ascii-suit-rank`.
    Ascii(line::LineCodec<ascii::AsciiSuitRank>),
    /// `barcode4`.
    Barcode(line::LineCodec<barcode::Barcode4>),
}

impl ShoeCodec {
    /// The codec for `config`'s dialect and options.
    pub fn for_config(config: &ShoeConfig) -> Result<ShoeCodec, ConfigError> {
        Ok(match config.dialect {
            Dialect::CroupierV1 => ShoeCodec::V1(v1::V1Codec::new()),
            Dialect::AsciiSuitRank => {
                ShoeCodec::Ascii(ascii::AsciiSuitRank::new(&config.ascii)?.codec())
            }
            Dialect::Barcode4 => ShoeCodec::Barcode(barcode::Barcode4.codec()),
        })
    }
}

fn lift<T>(item: Option<Result<T, Fault>>, ok: impl FnOnce(T) -> Decoded) -> Option<Decoded> {
    item.map(|r| r.map_or_else(Decoded::Fault, ok))
}

impl Decoder for ShoeCodec {
    type Item = Decoded;
    type Error = std::io::Error;

    fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Decoded>, Self::Error> {
        Ok(match self {
            ShoeCodec::V1(c) => lift(c.decode(buf)?, Decoded::Frame),
            ShoeCodec::Ascii(c) => lift(c.decode(buf)?, Decoded::Item),
            ShoeCodec::Barcode(c) => lift(c.decode(buf)?, Decoded::Item),
        })
    }

    fn decode_eof(&mut self, buf: &mut BytesMut) -> Result<Option<Decoded>, Self::Error> {
        Ok(match self {
            ShoeCodec::V1(c) => lift(c.decode_eof(buf)?, Decoded::Frame),
            ShoeCodec::Ascii(c) => lift(c.decode_eof(buf)?, Decoded::Item),
            ShoeCodec::Barcode(c) => lift(c.decode_eof(buf)?, Decoded::Item),
        })
    }
}

#[cfg(test)]
mod tests;
