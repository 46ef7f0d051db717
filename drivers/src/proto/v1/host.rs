//! The host's half of the `croupier-v1` link rules: acknowledge every data frame, deliver
//! each sequence number once, ask for a retransmit when a frame arrives garbled.
//!
//! Pure state: the link manager feeds it decoded frames and writes back its replies. It
//! outlives connections, so a frame the shoe retransmits after a reconnect is still
//! recognised as a duplicate.

use super::frame::{Body, Frame};
use crate::event::{Fault, FaultKind, ShoeEvent};

/// The data sequence number after `seq`: 1–255, wrapping to 1, because 0 is `Hello`'s.
pub fn next_seq(seq: u8) -> u8 {
    if seq == u8::MAX {
        1
    } else {
        seq + 1
    }
}

/// What to do about one received frame or fault.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Outcome {
    /// What to deliver to the table, if anything.
    pub event: Option<ShoeEvent>,
    /// What to write back to the shoe, if anything.
    pub reply: Option<Frame>,
    /// The frame was a retransmission of one already delivered.
    pub duplicate: bool,
}

/// Host-side link state.
#[derive(Debug, Clone, Default)]
pub struct HostSession {
    /// The last data sequence number delivered; `None` until the first since start-up.
    last_delivered: Option<u8>,
}

impl HostSession {
    /// A session that has delivered nothing yet.
    pub fn new() -> HostSession {
        HostSession::default()
    }

    /// The sequence number the host expects next, as sent in a NAK.
    pub fn expected(&self) -> u8 {
        next_seq(self.last_delivered.unwrap_or(0))
    }

    /// Handles a frame that decoded cleanly.
    pub fn on_frame(&mut self, frame: Frame) -> Outcome {
        let ack = Some(Frame::new(frame.seq, Body::Ack));
        match frame.body {
            Body::Heartbeat => Outcome::default(),
            Body::Hello => {
                // The shoe restarted its numbering; whatever it sends next is new.
                self.last_delivered = Some(0);
                Outcome {
                    reply: ack,
                    ..Outcome::default()
                }
            }
            _ if frame.body.is_data() && frame.seq == 0 => Outcome {
                event: Some(ShoeEvent::Fault(Fault::new(
                    FaultKind::Malformed,
                    &frame.to_wire(),
                ))),
                ..Outcome::default()
            },
            _ if frame.body.is_data() && self.last_delivered == Some(frame.seq) => Outcome {
                // Our ACK was lost: acknowledge again, deliver nothing.
                reply: ack,
                duplicate: true,
                ..Outcome::default()
            },
            Body::Card(card) => self.deliver(frame.seq, ShoeEvent::Card(card)),
            Body::CutCard => self.deliver(frame.seq, ShoeEvent::CutCard),
            Body::Status(status) => self.deliver(frame.seq, ShoeEvent::Status(status)),
            // Intact, but a host-to-shoe type: a loop-back or a confused device.
            Body::Ack | Body::Nak | Body::Lamp(_) | Body::StatusRequest => Outcome {
                event: Some(ShoeEvent::Fault(Fault::new(
                    FaultKind::UnknownType,
                    &frame.to_wire(),
                ))),
                ..Outcome::default()
            },
        }
    }

    /// Handles bytes that were not a frame: report them and ask for a retransmit.
    pub fn on_fault(&mut self, fault: Fault) -> Outcome {
        Outcome {
            event: Some(ShoeEvent::Fault(fault)),
            reply: Some(Frame::new(self.expected(), Body::Nak)),
            duplicate: false,
        }
    }

    fn deliver(&mut self, seq: u8, event: ShoeEvent) -> Outcome {
        self.last_delivered = Some(seq);
        Outcome {
            event: Some(event),
            reply: Some(Frame::new(seq, Body::Ack)),
            duplicate: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::card::{Card, Rank, Suit};

    const AS: Card = Card::new(Rank::Ace, Suit::Spades);

    #[test]
    fn sequence_wraps_past_zero() {
        assert_eq!(next_seq(0), 1);
        assert_eq!(next_seq(254), 255);
        assert_eq!(next_seq(255), 1);
    }

    #[test]
    fn delivers_once_and_reacks_duplicates() {
        let mut host = HostSession::new();
        let first = host.on_frame(Frame::new(7, Body::Card(AS)));
        assert_eq!(first.event, Some(ShoeEvent::Card(AS)));
        assert_eq!(first.reply, Some(Frame::new(7, Body::Ack)));
        let again = host.on_frame(Frame::new(7, Body::Card(AS)));
        assert_eq!(again.event, None);
        assert!(again.duplicate);
        assert_eq!(again.reply, Some(Frame::new(7, Body::Ack)));
        let next = host.on_frame(Frame::new(8, Body::CutCard));
        assert_eq!(next.event, Some(ShoeEvent::CutCard));
    }

    #[test]
    fn hello_resets_numbering() {
        let mut host = HostSession::new();
        host.on_frame(Frame::new(1, Body::Card(AS)));
        let hello = host.on_frame(Frame::new(0, Body::Hello));
        assert_eq!(hello.reply, Some(Frame::new(0, Body::Ack)));
        assert_eq!(hello.event, None);
        // Seq 1 again after a restart is a new card, not a duplicate.
        let fresh = host.on_frame(Frame::new(1, Body::Card(AS)));
        assert_eq!(fresh.event, Some(ShoeEvent::Card(AS)));
    }

    #[test]
    fn faults_nak_the_expected_sequence_and_never_deliver_cards() {
        let mut host = HostSession::new();
        let nak = host.on_fault(Fault::new(FaultKind::BadCrc, b"x"));
        assert_eq!(nak.reply, Some(Frame::new(1, Body::Nak)));
        host.on_frame(Frame::new(255, Body::Card(AS)));
        let nak = host.on_fault(Fault::new(FaultKind::BadCrc, b"x"));
        assert_eq!(nak.reply, Some(Frame::new(1, Body::Nak)));
        assert!(matches!(nak.event, Some(ShoeEvent::Fault(_))));

        let seq0 = host.on_frame(Frame::new(0, Body::Card(AS)));
        assert!(matches!(seq0.event, Some(ShoeEvent::Fault(_))));
        let wrong_way = host.on_frame(Frame::new(3, Body::Ack));
        assert!(matches!(wrong_way.event, Some(ShoeEvent::Fault(_))));
        assert_eq!(
            host.on_frame(Frame::new(0, Body::Heartbeat)),
            Outcome::default()
        );
    }
}
