//! `barcode4`: four digits, suit 1–4 (♠ ♥ ♣ ♦) then rank × 10 (`010`–`130`), one line per
//! card, as keyboard-wedge card scanners send: `1010` = A♠, `4130` = K♦.

use crate::card::{Card, Rank, Suit};
use crate::event::{FaultKind, ShoeItem};
use crate::proto::line::{LineCodec, LineFormat};

/// The barcode suit digits, 1-based: note clubs before diamonds, unlike [`Suit::ALL`].
const SUITS: [Suit; 4] = [Suit::Spades, Suit::Hearts, Suit::Clubs, Suit::Diamonds];

/// The record format.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Barcode4;

impl Barcode4 {
    /// A line codec for this format.
    pub fn codec(self) -> LineCodec<Barcode4> {
        LineCodec::new(self)
    }
}

impl LineFormat for Barcode4 {
    fn parse(&self, line: &[u8]) -> Result<ShoeItem, FaultKind> {
        let &[s, r1, r2, zero] = line else {
            return Err(FaultKind::Malformed);
        };
        if !line.iter().all(u8::is_ascii_digit) || zero != b'0' {
            return Err(FaultKind::Malformed);
        }
        let suit = usize::from(s - b'0')
            .checked_sub(1)
            .and_then(|i| SUITS.get(i).copied())
            .ok_or(FaultKind::Malformed)?;
        let rank = Rank::from_number((r1 - b'0') * 10 + (r2 - b'0')).ok_or(FaultKind::Malformed)?;
        Ok(ShoeItem::Card(Card::new(rank, suit)))
    }

    fn encode(&self, item: ShoeItem) -> Option<Vec<u8>> {
        let ShoeItem::Card(card) = item else {
            return None;
        };
        let digit = SUITS.iter().position(|&s| s == card.suit)? as u8 + 1;
        let n = card.rank.number();
        // A keyboard wedge ends each scan with Enter, which arrives as CR.
        Some(vec![
            b'0' + digit,
            b'0' + n / 10,
            b'0' + n % 10,
            b'0',
            b'\r',
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::event::tests::card;

    #[test]
    fn reads_the_documented_examples() {
        assert_eq!(Barcode4.parse(b"1010"), Ok(card("AS")));
        assert_eq!(Barcode4.parse(b"4130"), Ok(card("KD")));
        assert_eq!(Barcode4.parse(b"3100"), Ok(card("TC")));
        assert_eq!(Barcode4.parse(b"2070"), Ok(card("7H")));
    }

    #[test]
    fn accepts_only_the_exact_shape() {
        for bad in [
            &b"101"[..],
            b"10100",
            b"0010",
            b"5010",
            b"1000",
            b"1140",
            b"1011",
            b"1O10",
            b" 1010",
            b"\x001010",
        ] {
            assert_eq!(Barcode4.parse(bad), Err(FaultKind::Malformed), "{bad:?}");
        }
    }
}
