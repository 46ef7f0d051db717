//! The shoe's half of the `croupier-v1` link rules: number data frames, hold one
//! unacknowledged frame at a time (stop-and-wait) and resend it until it is acknowledged.
//!
//! The simulator runs this; firmware for a real shoe follows the same rules.

use std::collections::VecDeque;

use super::frame::{Body, Frame};
use super::host::next_seq;

/// Shoe-side link state.
#[derive(Debug, Clone)]
pub struct ShoeSession {
    next_seq: u8,
    queue: VecDeque<Body>,
    unacked: Option<Frame>,
}

impl Default for ShoeSession {
    fn default() -> ShoeSession {
        ShoeSession::new()
    }
}

impl ShoeSession {
    /// A freshly powered shoe: its first frame is `Hello`.
    pub fn new() -> ShoeSession {
        ShoeSession {
            next_seq: 1,
            queue: VecDeque::from([Body::Hello]),
            unacked: None,
        }
    }

    /// Queues a data body (card, cut card, status) to be sent in order.
    pub fn push(&mut self, body: Body) {
        self.queue.push_back(body);
    }

    /// The next frame to transmit for the first time, if the previous one is acknowledged.
    pub fn next_frame(&mut self) -> Option<Frame> {
        if self.unacked.is_some() {
            return None;
        }
        let body = self.queue.pop_front()?;
        let seq = if body == Body::Hello {
            0
        } else {
            let seq = self.next_seq;
            self.next_seq = next_seq(seq);
            seq
        };
        let frame = Frame::new(seq, body);
        self.unacked = Some(frame);
        Some(frame)
    }

    /// The frame awaiting acknowledgement, to resend on timeout or reconnect.
    pub fn unacked(&self) -> Option<Frame> {
        self.unacked
    }

    /// True when everything queued has been acknowledged.
    pub fn is_idle(&self) -> bool {
        self.unacked.is_none() && self.queue.is_empty()
    }

    /// Handles an ACK for `seq`; true if it released the unacknowledged frame.
    pub fn on_ack(&mut self, seq: u8) -> bool {
        if self.unacked.is_some_and(|f| f.seq == seq) {
            self.unacked = None;
            true
        } else {
            false
        }
    }

    /// Handles a NAK for `seq`: the frame to resend at once, if it is the one outstanding.
    pub fn on_nak(&self, seq: u8) -> Option<Frame> {
        self.unacked.filter(|f| f.seq == seq)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::card::{Card, Rank, Suit};

    #[test]
    fn stop_and_wait_with_hello_first() {
        let mut shoe = ShoeSession::new();
        let card = Body::Card(Card::new(Rank::Nine, Suit::Hearts));
        shoe.push(card);
        shoe.push(Body::CutCard);
        assert_eq!(shoe.next_frame(), Some(Frame::new(0, Body::Hello)));
        assert_eq!(shoe.next_frame(), None, "waits for the ACK");
        assert!(!shoe.on_ack(5));
        assert!(shoe.on_ack(0));
        assert_eq!(shoe.next_frame(), Some(Frame::new(1, card)));
        assert_eq!(shoe.on_nak(1), Some(Frame::new(1, card)));
        assert_eq!(shoe.on_nak(2), None);
        assert!(shoe.on_ack(1));
        assert_eq!(shoe.next_frame(), Some(Frame::new(2, Body::CutCard)));
        assert!(shoe.on_ack(2));
        assert!(shoe.is_idle());
    }
}
