//! Cutting a byte stream into delimiter-separated runs, shared by every dialect's decoder.

use bytes::{Buf, BytesMut};

use crate::event::{Fault, FaultKind};

/// What the stream yielded next.
pub(crate) enum Piece {
    /// The bytes between two delimiters (never empty, never longer than the limit).
    Run(BytesMut),
    /// Too many bytes without a delimiter: reported and dropped, so the buffer stays
    /// bounded and the next delimiter resynchronises.
    Noise(Fault),
}

/// Incremental splitter; remembers how far it searched so a run trickling in byte by byte
/// is not rescanned from its start each time.
#[derive(Debug, Clone)]
pub(crate) struct Splitter {
    scanned: usize,
    max_run: usize,
    is_delimiter: fn(u8) -> bool,
}

impl Splitter {
    /// Splits at bytes for which `is_delimiter` holds; runs longer than `max_run` are noise.
    pub(crate) fn new(max_run: usize, is_delimiter: fn(u8) -> bool) -> Splitter {
        Splitter {
            scanned: 0,
            max_run,
            is_delimiter,
        }
    }

    /// The next complete piece in `buf`, consuming it and its delimiter.
    pub(crate) fn next(&mut self, buf: &mut BytesMut) -> Option<Piece> {
        loop {
            let Some(at) = buf[self.scanned..]
                .iter()
                .position(|&b| (self.is_delimiter)(b))
            else {
                if buf.len() > self.max_run {
                    return Some(Piece::Noise(self.drain(buf, FaultKind::Oversized)));
                }
                self.scanned = buf.len();
                return None;
            };
            let at = self.scanned + at;
            self.scanned = 0;
            let run = buf.split_to(at);
            buf.advance(1);
            // Adjacent delimiters (CR LF, or one frame's closing flag and the next one's
            // opening flag) are idle, not errors.
            if run.is_empty() {
                continue;
            }
            if run.len() > self.max_run {
                return Some(Piece::Noise(Fault::new(FaultKind::Oversized, &run)));
            }
            return Some(Piece::Run(run));
        }
    }

    /// At end of stream: whatever is left is a truncated run.
    pub(crate) fn finish(&mut self, buf: &mut BytesMut) -> Option<Fault> {
        (!buf.is_empty()).then(|| self.drain(buf, FaultKind::Truncated))
    }

    fn drain(&mut self, buf: &mut BytesMut, kind: FaultKind) -> Fault {
        let fault = Fault::new(kind, buf);
        buf.clear();
        self.scanned = 0;
        fault
    }
}
