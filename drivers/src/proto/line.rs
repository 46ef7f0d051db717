//! Line framing shared by the dialects without a checksum: one record per CR- or
//! LF-terminated line, checked against an exact format by a [`LineFormat`].

use bytes::BytesMut;
use tokio_util::codec::Decoder;

use super::split::{Piece, Splitter};
use crate::event::{Fault, FaultKind, ShoeItem};

/// One record format carried in lines.
pub trait LineFormat {
    /// Reads one line (terminator stripped, never empty). Anything but the exact format is
    /// a [`FaultKind`], because with no checksum a loose parser would turn noise into cards.
    fn parse(&self, line: &[u8]) -> Result<ShoeItem, FaultKind>;

    /// The line a device sends for `item`, with its terminator, or `None` if the format
    /// cannot express it (most cannot express the cut card).
    fn encode(&self, item: ShoeItem) -> Option<Vec<u8>>;
}

/// A decoder yielding one item or fault per line.
#[derive(Debug, Clone)]
pub struct LineCodec<F> {
    format: F,
    split: Splitter,
}

/// Longer than any valid line of any dialect, short enough to resynchronise quickly
/// after noise or a wrong baud rate.
pub const MAX_LINE: usize = 32;

impl<F> LineCodec<F> {
    /// A codec for `format`.
    pub fn new(format: F) -> LineCodec<F> {
        LineCodec {
            format,
            split: Splitter::new(MAX_LINE, |b| b == b'\r' || b == b'\n'),
        }
    }

    /// The record format.
    pub fn format(&self) -> &F {
        &self.format
    }
}

impl<F: LineFormat> Decoder for LineCodec<F> {
    type Item = Result<ShoeItem, Fault>;
    type Error = std::io::Error;

    fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Self::Item>, Self::Error> {
        Ok(self.split.next(buf).map(|piece| match piece {
            Piece::Run(line) => self
                .format
                .parse(&line)
                .map_err(|kind| Fault::new(kind, &line)),
            Piece::Noise(fault) => Err(fault),
        }))
    }

    fn decode_eof(&mut self, buf: &mut BytesMut) -> Result<Option<Self::Item>, Self::Error> {
        match self.decode(buf)? {
            Some(item) => Ok(Some(item)),
            None => Ok(self.split.finish(buf).map(Err)),
        }
    }
}
