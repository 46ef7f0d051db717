//! One `croupier-v1` frame before byte stuffing: `type, seq, len, payload, crc16`.

use crc::{Crc, CRC_16_IBM_3740};

use crate::card::{Card, Rank, Suit};
use crate::event::{FaultKind, ShoeStatus};

/// Frame delimiter.
pub const FLAG: u8 = 0x7E;
/// Escape: the next byte is XORed with [`ESCAPE_XOR`].
pub const ESCAPE: u8 = 0x7D;
/// What an escaped byte is XORed with.
pub const ESCAPE_XOR: u8 = 0x20;
/// The longest payload any frame type has; longer length fields are malformed.
pub const MAX_PAYLOAD: usize = 8;
/// Header (type, seq, len) plus CRC.
const OVERHEAD: usize = 5;

/// CRC-16/IBM-3740 (a.k.a. CRC-16/CCITT-FALSE): poly 0x1021, init 0xFFFF, no reflection,
/// no final XOR; check value 0x29B1 over `"123456789"`.
pub const CRC16: Crc<u16> = Crc::<u16>::new(&CRC_16_IBM_3740);

const STATUS_LID_OPEN: u8 = 0x01;
const STATUS_JAM: u8 = 0x02;
const STATUS_MISREAD: u8 = 0x04;

/// What the shoe's lamp shows; the host sets it, e.g. green while bets are closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LampState {
    /// Dark.
    Off = 0,
    /// Steady green: deal.
    Green = 1,
    /// Steady red: do not deal.
    Red = 2,
    /// Flashing: attention, e.g. a fault or supervisor call.
    Flash = 3,
}

impl LampState {
    fn from_byte(b: u8) -> Option<LampState> {
        [
            LampState::Off,
            LampState::Green,
            LampState::Red,
            LampState::Flash,
        ]
        .get(usize::from(b))
        .copied()
    }
}

/// A frame's meaning.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Body {
    /// Shoe → host, seq 0: the shoe (re)started and numbers data frames from 1 again.
    Hello,
    /// Shoe → host: a card was read.
    Card(Card),
    /// Shoe → host: the cut card passed.
    CutCard,
    /// Shoe → host: sensor flags, on change or when asked.
    Status(ShoeStatus),
    /// Shoe → host, seq 0, not acknowledged: "still here", every second when idle.
    Heartbeat,
    /// Host → shoe: data frame `seq` arrived (also re-sent for duplicates).
    Ack,
    /// Host → shoe: a garbled frame arrived; `seq` is the one the host expects next.
    Nak,
    /// Host → shoe: set the lamp. Idempotent, so not acknowledged.
    Lamp(LampState),
    /// Host → shoe: answer with a status frame.
    StatusRequest,
}

impl Body {
    /// The type byte.
    pub fn type_code(&self) -> u8 {
        match self {
            Body::Hello => 0x01,
            Body::Card(_) => 0x02,
            Body::CutCard => 0x03,
            Body::Status(_) => 0x04,
            Body::Heartbeat => 0x05,
            Body::Ack => 0x06,
            Body::Nak => 0x15,
            Body::Lamp(_) => 0x20,
            Body::StatusRequest => 0x21,
        }
    }

    /// True for the frames the shoe numbers and the host acknowledges.
    pub fn is_data(&self) -> bool {
        matches!(
            self,
            Body::Hello | Body::Card(_) | Body::CutCard | Body::Status(_)
        )
    }

    fn payload(&self) -> ([u8; 2], usize) {
        match *self {
            Body::Card(card) => ([card.rank.number(), card.suit.letter() as u8], 2),
            Body::Status(s) => {
                let flag = |set: bool, bit: u8| if set { bit } else { 0 };
                let flags = flag(s.lid_open, STATUS_LID_OPEN)
                    | flag(s.jam, STATUS_JAM)
                    | flag(s.misread, STATUS_MISREAD);
                ([flags, 0], 1)
            }
            Body::Lamp(lamp) => ([lamp as u8, 0], 1),
            _ => ([0, 0], 0),
        }
    }

    fn parse(type_code: u8, payload: &[u8]) -> Result<Body, FaultKind> {
        let body = match (type_code, payload) {
            (0x01, []) => Body::Hello,
            (0x02, &[rank, suit]) => Body::Card(Card::new(
                Rank::from_number(rank).ok_or(FaultKind::Malformed)?,
                Suit::from_letter(char::from(suit))
                    .filter(|_| suit.is_ascii_uppercase())
                    .ok_or(FaultKind::Malformed)?,
            )),
            (0x03, []) => Body::CutCard,
            (0x04, &[flags]) => {
                if flags & !(STATUS_LID_OPEN | STATUS_JAM | STATUS_MISREAD) != 0 {
                    return Err(FaultKind::Malformed);
                }
                Body::Status(ShoeStatus {
                    lid_open: flags & STATUS_LID_OPEN != 0,
                    jam: flags & STATUS_JAM != 0,
                    misread: flags & STATUS_MISREAD != 0,
                })
            }
            (0x05, []) => Body::Heartbeat,
            (0x06, []) => Body::Ack,
            (0x15, []) => Body::Nak,
            (0x20, &[lamp]) => Body::Lamp(LampState::from_byte(lamp).ok_or(FaultKind::Malformed)?),
            (0x21, []) => Body::StatusRequest,
            (0x01..=0x06 | 0x15 | 0x20 | 0x21, _) => return Err(FaultKind::Malformed),
            _ => return Err(FaultKind::UnknownType),
        };
        Ok(body)
    }
}

/// A frame: a body and its sequence number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Frame {
    /// Data frames: 1–255 (wrapping to 1); `Hello` and heartbeats 0; ACK/NAK: the number
    /// they refer to; host commands 0.
    pub seq: u8,
    /// What it says.
    pub body: Body,
}

impl Frame {
    /// A frame of `body` numbered `seq`.
    pub fn new(seq: u8, body: Body) -> Frame {
        Frame { seq, body }
    }

    /// The unstuffed bytes: type, seq, len, payload, CRC-16 big-endian.
    pub fn to_raw(&self) -> Vec<u8> {
        let (payload, len) = self.body.payload();
        let mut raw = Vec::with_capacity(OVERHEAD + len);
        raw.extend_from_slice(&[self.body.type_code(), self.seq, len as u8]);
        raw.extend_from_slice(&payload[..len]);
        raw.extend_from_slice(&CRC16.checksum(&raw).to_be_bytes());
        raw
    }

    /// The bytes on the wire: flag, stuffed raw bytes, flag.
    pub fn to_wire(&self) -> Vec<u8> {
        let mut wire = Vec::with_capacity(16);
        stuff(&self.to_raw(), &mut wire);
        wire
    }

    /// Reads unstuffed bytes, checking length, CRC and payload.
    pub fn from_raw(raw: &[u8]) -> Result<Frame, FaultKind> {
        if raw.len() < OVERHEAD || raw.len() > OVERHEAD + MAX_PAYLOAD {
            return Err(FaultKind::Malformed);
        }
        let (body, crc) = raw.split_at(raw.len() - 2);
        if usize::from(body[2]) != body.len() - 3 {
            return Err(FaultKind::Malformed);
        }
        // Checked before the type so that line noise is reported as what it most likely is.
        if CRC16.checksum(body) != u16::from_be_bytes([crc[0], crc[1]]) {
            return Err(FaultKind::BadCrc);
        }
        Ok(Frame {
            seq: body[1],
            body: Body::parse(body[0], &body[3..])?,
        })
    }
}

/// Appends `raw` to `wire` as one delimited, byte-stuffed frame.
pub fn stuff(raw: &[u8], wire: &mut Vec<u8>) {
    wire.push(FLAG);
    for &b in raw {
        if b == FLAG || b == ESCAPE {
            wire.extend_from_slice(&[ESCAPE, b ^ ESCAPE_XOR]);
        } else {
            wire.push(b);
        }
    }
    wire.push(FLAG);
}

/// Undoes [`stuff`] on the bytes between two flags; `None` if an escape is dangling or
/// escapes a byte that never needs escaping.
pub fn unstuff(stuffed: &[u8]) -> Option<Vec<u8>> {
    let mut raw = Vec::with_capacity(stuffed.len());
    let mut bytes = stuffed.iter();
    while let Some(&b) = bytes.next() {
        if b == ESCAPE {
            let orig = bytes.next()? ^ ESCAPE_XOR;
            if orig != FLAG && orig != ESCAPE {
                return None;
            }
            raw.push(orig);
        } else {
            raw.push(b);
        }
    }
    Some(raw)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        s.split_whitespace()
            .map(|h| u8::from_str_radix(h, 16).expect("hex byte"))
            .collect()
    }

    #[test]
    fn crc_is_ibm_3740_with_its_check_value() {
        assert_eq!(CRC16.checksum(b"123456789"), 0x29B1);
    }

    /// The worked examples of PROTOCOL.md, byte for byte.
    #[test]
    fn protocol_md_examples() {
        let qd = Card::new(Rank::Queen, Suit::Diamonds);
        let examples = [
            (Frame::new(0, Body::Hello), "7E 01 00 00 FB AC 7E"),
            (Frame::new(1, Body::Card(qd)), "7E 02 01 02 0C 44 00 76 7E"),
            (Frame::new(2, Body::CutCard), "7E 03 02 00 F3 AE 7E"),
            (
                Frame::new(
                    3,
                    Body::Status(ShoeStatus {
                        lid_open: true,
                        jam: false,
                        misread: true,
                    }),
                ),
                "7E 04 03 01 05 74 F5 7E",
            ),
            (Frame::new(0, Body::Heartbeat), "7E 05 00 00 27 6C 7E"),
            (Frame::new(1, Body::Ack), "7E 06 01 00 4D 0D 7E"),
            (Frame::new(2, Body::Nak), "7E 15 02 00 02 6D 7E"),
            (
                Frame::new(0, Body::Lamp(LampState::Green)),
                "7E 20 00 01 01 90 9E 7E",
            ),
            (
                Frame::new(0, Body::StatusRequest),
                "7E 21 00 00 7D 5D 6A 7E",
            ),
            (
                Frame::new(0x7E, Body::Card(Card::new(Rank::Ace, Suit::Spades))),
                "7E 02 7D 5E 02 01 53 82 67 7E",
            ),
        ];
        let doc = include_str!("../../../PROTOCOL.md");
        for (frame, wire) in examples {
            assert_eq!(frame.to_wire(), hex(wire), "{frame:?}");
            assert!(
                doc.contains(&format!("`{wire}`")),
                "PROTOCOL.md lacks {wire}"
            );
        }
    }

    #[test]
    fn stuffing_escapes_flag_and_escape_and_round_trips() {
        let raw = [0x01, FLAG, 0x02, ESCAPE, 0x03];
        let mut wire = Vec::new();
        stuff(&raw, &mut wire);
        assert_eq!(wire, hex("7E 01 7D 5E 02 7D 5D 03 7E"));
        assert_eq!(unstuff(&wire[1..wire.len() - 1]), Some(raw.to_vec()));
        assert_eq!(unstuff(&[0x01, ESCAPE]), None, "dangling escape");
        assert_eq!(unstuff(&[ESCAPE, 0x41]), None, "needless escape");
    }

    #[test]
    fn every_body_round_trips() {
        let bodies = [
            Body::Hello,
            Body::Card(Card::new(Rank::Ace, Suit::Spades)),
            Body::CutCard,
            Body::Status(ShoeStatus {
                lid_open: false,
                jam: true,
                misread: false,
            }),
            Body::Heartbeat,
            Body::Ack,
            Body::Nak,
            Body::Lamp(LampState::Flash),
            Body::StatusRequest,
        ];
        for (seq, body) in bodies.into_iter().enumerate() {
            let frame = Frame::new(seq as u8 + 0x7C, body);
            assert_eq!(Frame::from_raw(&frame.to_raw()), Ok(frame));
        }
    }

    #[test]
    fn rejects_bad_crc_length_type_and_payload() {
        let mut raw = Frame::new(1, Body::Card(Card::new(Rank::Two, Suit::Clubs))).to_raw();
        let last = raw.len() - 1;
        raw[last] ^= 1;
        assert_eq!(Frame::from_raw(&raw), Err(FaultKind::BadCrc));

        let with_crc = |body: &[u8]| {
            let mut v = body.to_vec();
            v.extend_from_slice(&CRC16.checksum(body).to_be_bytes());
            v
        };
        assert_eq!(
            Frame::from_raw(&with_crc(&[0x02, 1, 3, 1, b'S'])),
            Err(FaultKind::Malformed)
        );
        assert_eq!(
            Frame::from_raw(&with_crc(&[0x02, 1, 2, 14, b'S'])),
            Err(FaultKind::Malformed)
        );
        assert_eq!(
            Frame::from_raw(&with_crc(&[0x02, 1, 2, 1, b's'])),
            Err(FaultKind::Malformed)
        );
        assert_eq!(
            Frame::from_raw(&with_crc(&[0x04, 1, 1, 0x08])),
            Err(FaultKind::Malformed)
        );
        assert_eq!(
            Frame::from_raw(&with_crc(&[0x03, 1, 1, 0])),
            Err(FaultKind::Malformed)
        );
        assert_eq!(
            Frame::from_raw(&with_crc(&[0x42, 1, 0])),
            Err(FaultKind::UnknownType)
        );
        assert_eq!(Frame::from_raw(&[1, 2, 3]), Err(FaultKind::Malformed));
    }
}
