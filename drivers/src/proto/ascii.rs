//! `ascii-suit-rank`: a suit letter then a two-digit rank, one line per card (`D12` = Q♦),
//! as baccarat studio shoes send at 9600 8N1. No checksum, so only the exact shape passes.

use crate::card::{Card, Rank, Suit};
use crate::event::{FaultKind, ShoeItem};
use crate::proto::line::{LineCodec, LineFormat};
use crate::shoe::config::{AsciiOptions, ConfigError};

/// The record format, with the suit letters of one shoe model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AsciiSuitRank {
    letters: [u8; 4],
    cut_card_line: Option<Vec<u8>>,
}

impl Default for AsciiSuitRank {
    fn default() -> AsciiSuitRank {
        AsciiSuitRank {
            letters: *b"SHDC",
            cut_card_line: None,
        }
    }
}

impl AsciiSuitRank {
    /// The format configured by `options`.
    pub fn new(options: &AsciiOptions) -> Result<AsciiSuitRank, ConfigError> {
        Ok(AsciiSuitRank {
            letters: options.letters()?,
            cut_card_line: options
                .cut_card_line
                .as_ref()
                .map(|line| line.as_bytes().to_vec()),
        })
    }

    /// A line codec for this format.
    pub fn codec(self) -> LineCodec<AsciiSuitRank> {
        LineCodec::new(self)
    }
}

fn two_digits(hi: u8, lo: u8) -> Option<u8> {
    (hi.is_ascii_digit() && lo.is_ascii_digit()).then(|| (hi - b'0') * 10 + (lo - b'0'))
}

impl LineFormat for AsciiSuitRank {
    fn parse(&self, line: &[u8]) -> Result<ShoeItem, FaultKind> {
        if self.cut_card_line.as_deref() == Some(line) {
            return Ok(ShoeItem::CutCard);
        }
        let &[letter, hi, lo] = line else {
            return Err(FaultKind::Malformed);
        };
        let suit = self
            .letters
            .iter()
            .position(|&l| l == letter)
            .and_then(|i| Suit::ALL.get(i).copied())
            .ok_or(FaultKind::Malformed)?;
        let rank = two_digits(hi, lo)
            .and_then(Rank::from_number)
            .ok_or(FaultKind::Malformed)?;
        Ok(ShoeItem::Card(Card::new(rank, suit)))
    }

    fn encode(&self, item: ShoeItem) -> Option<Vec<u8>> {
        let mut line = match item {
            ShoeItem::Card(card) => {
                let n = card.rank.number();
                vec![
                    AsciiOptions::letter(&self.letters, card.suit),
                    b'0' + n / 10,
                    b'0' + n % 10,
                ]
            }
            ShoeItem::CutCard => self.cut_card_line.clone()?,
        };
        line.extend_from_slice(b"\r\n");
        Some(line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::event::tests::card;

    #[test]
    fn reads_the_documented_examples() {
        let f = AsciiSuitRank::default();
        assert_eq!(f.parse(b"D12"), Ok(card("QD")));
        assert_eq!(f.parse(b"S01"), Ok(card("AS")));
        assert_eq!(f.parse(b"C10"), Ok(card("TC")));
        assert_eq!(f.parse(b"H13"), Ok(card("KH")));
    }

    #[test]
    fn accepts_only_the_exact_shape() {
        let f = AsciiSuitRank::default();
        for bad in [
            &b"D1"[..],
            b"D012",
            b"D00",
            b"D14",
            b"X05",
            b"d12",
            b" D12",
            b"D12 ",
            b"D1A",
            b"CUT",
        ] {
            assert_eq!(f.parse(bad), Err(FaultKind::Malformed), "{bad:?}");
        }
    }

    #[test]
    fn configured_letters_and_cut_card() {
        let f = AsciiSuitRank::new(&AsciiOptions {
            suit_letters: "PCQF".into(),
            cut_card_line: Some("CUT".into()),
        })
        .expect("valid");
        assert_eq!(f.parse(b"Q12"), Ok(card("QD")));
        assert_eq!(f.parse(b"C01"), Ok(card("AH")));
        assert_eq!(f.parse(b"S01"), Err(FaultKind::Malformed));
        assert_eq!(f.parse(b"CUT"), Ok(ShoeItem::CutCard));
        assert_eq!(f.encode(ShoeItem::CutCard), Some(b"CUT\r\n".to_vec()));
    }
}
