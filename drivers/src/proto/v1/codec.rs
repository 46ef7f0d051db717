//! Byte-stuffed framing of `croupier-v1` on a byte stream.

use bytes::BytesMut;
use tokio_util::codec::{Decoder, Encoder};

use super::frame::{unstuff, Frame, FLAG, MAX_PAYLOAD};
use crate::event::{Fault, FaultKind};
use crate::proto::split::{Piece, Splitter};

/// The longest run of bytes between flags that could still be a frame (every byte
/// escaped); anything longer is noise and is reported without waiting for a flag.
pub const MAX_STUFFED: usize = 2 * (5 + MAX_PAYLOAD);

/// Splits the stream at flags and reads each run between them as a frame.
///
/// Every non-empty run between flags is either a [`Frame`] or a [`Fault`]: noise between
/// frames becomes a fault of its own, and the next flag resynchronises.
#[derive(Debug, Clone)]
pub struct V1Codec {
    split: Splitter,
}

impl Default for V1Codec {
    fn default() -> V1Codec {
        V1Codec {
            split: Splitter::new(MAX_STUFFED, |b| b == FLAG),
        }
    }
}

impl V1Codec {
    /// A fresh codec.
    pub fn new() -> V1Codec {
        V1Codec::default()
    }
}

fn read_run(run: &[u8]) -> Result<Frame, Fault> {
    let raw = unstuff(run).ok_or_else(|| Fault::new(FaultKind::Malformed, run))?;
    Frame::from_raw(&raw).map_err(|kind| Fault::new(kind, run))
}

impl Decoder for V1Codec {
    type Item = Result<Frame, Fault>;
    type Error = std::io::Error;

    fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Self::Item>, Self::Error> {
        Ok(self.split.next(buf).map(|piece| match piece {
            Piece::Run(run) => read_run(&run),
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

impl Encoder<Frame> for V1Codec {
    type Error = std::io::Error;

    fn encode(&mut self, frame: Frame, dst: &mut BytesMut) -> Result<(), Self::Error> {
        dst.extend_from_slice(&frame.to_wire());
        Ok(())
    }
}
