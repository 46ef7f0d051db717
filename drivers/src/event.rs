//! What the shoe driver reports upwards: cards, the cut card, sensor status, faults and
//! link state. Whatever the device or dialect, the table service only ever sees these.

use std::fmt;

use crate::card::Card;

/// One thing a shoe pushes out, in dealing order.
///
/// The cut card is not a [`Card`]: it has no rank or suit and only tells the table that
/// the shoe is finished after the current round.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ShoeItem {
    /// A playing card.
    Card(Card),
    /// The plastic cut card.
    CutCard,
}

impl fmt::Display for ShoeItem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ShoeItem::Card(card) => card.fmt(f),
            ShoeItem::CutCard => f.write_str("CUT"),
        }
    }
}

/// The shoe's sensor flags, as reported by a `croupier-v1` status frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct ShoeStatus {
    /// The lid is open, so cards could be removed without being read.
    pub lid_open: bool,
    /// A card is stuck in the reader.
    pub jam: bool,
    /// The last card could not be read; the dealer must re-feed or the supervisor decide.
    pub misread: bool,
}

/// Why received bytes were rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FaultKind {
    /// The bytes do not have the dialect's exact shape.
    Malformed,
    /// A `croupier-v1` frame whose CRC-16 does not match.
    BadCrc,
    /// A well-formed frame of a type this host does not know or does not expect from a shoe.
    UnknownType,
    /// Too many bytes without a frame delimiter: noise, or the wrong baud rate.
    Oversized,
    /// A partial frame cut off by a disconnect.
    Truncated,
}

impl fmt::Display for FaultKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FaultKind::Malformed => "malformed frame",
            FaultKind::BadCrc => "CRC mismatch",
            FaultKind::UnknownType => "unknown or unexpected frame type",
            FaultKind::Oversized => "oversized frame",
            FaultKind::Truncated => "frame truncated by disconnect",
        })
    }
}

/// Bytes from the wire that did not make a valid frame. Never a card.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Fault {
    /// What was wrong.
    pub kind: FaultKind,
    /// The offending bytes exactly as received (capped at [`Fault::MAX_BYTES`]), for the log.
    pub bytes: Vec<u8>,
}

impl Fault {
    /// How many of the offending bytes a fault keeps; noise can be unbounded.
    pub const MAX_BYTES: usize = 256;

    /// A fault of `kind` carrying (at most [`Fault::MAX_BYTES`] of) `bytes`.
    pub fn new(kind: FaultKind, bytes: &[u8]) -> Fault {
        let keep = bytes.len().min(Fault::MAX_BYTES);
        Fault {
            kind,
            bytes: bytes[..keep].to_vec(),
        }
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:", self.kind)?;
        for b in &self.bytes {
            write!(f, " {b:02X}")?;
        }
        Ok(())
    }
}

/// Everything a shoe driver delivers to the table service.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShoeEvent {
    /// The port is open and the shoe can be heard.
    Connected {
        /// The device path that was opened.
        port: String,
    },
    /// The link is down; the driver keeps trying to reopen it.
    Disconnected {
        /// Why, for the operator.
        reason: String,
    },
    /// A card came out of the shoe.
    Card(Card),
    /// The cut card came out of the shoe.
    CutCard,
    /// The shoe's sensors changed or were asked for.
    Status(ShoeStatus),
    /// Bytes arrived that were not a valid frame.
    Fault(Fault),
}

impl From<ShoeItem> for ShoeEvent {
    fn from(item: ShoeItem) -> ShoeEvent {
        match item {
            ShoeItem::Card(card) => ShoeEvent::Card(card),
            ShoeItem::CutCard => ShoeEvent::CutCard,
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::ShoeItem;

    /// The shoe item for a card code such as `"QD"`.
    pub(crate) fn card(code: &str) -> ShoeItem {
        ShoeItem::Card(code.parse().expect("valid card code"))
    }
}
