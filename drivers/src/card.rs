//! The card vocabulary shared by every layer: what a shoe reads, what the engine checks.
//!
//! It lives at the bottom of the dependency graph (in the drivers crate) because the shoe
//! decoders produce it; the service re-exports it as `croupier::cards`.
//!
//! Notation: rank `A 2 3 4 5 6 7 8 9 T J Q K` (`10` is accepted for `T`), then suit
//! `S H D C`, case-insensitive: `AS`, `td`, `10D`, `9c`. [`Card`]'s `Display` prints the
//! canonical two-character form (`TD`).

use std::fmt;
use std::str::FromStr;

/// A card's suit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Suit {
    /// ♠
    Spades = 0,
    /// ♥
    Hearts = 1,
    /// ♦
    Diamonds = 2,
    /// ♣
    Clubs = 3,
}

/// A suit's colour, as the pair side bets compare them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Colour {
    /// Hearts and diamonds.
    Red,
    /// Spades and clubs.
    Black,
}

impl Suit {
    /// All four suits, in index order.
    pub const ALL: [Suit; 4] = [Suit::Spades, Suit::Hearts, Suit::Diamonds, Suit::Clubs];

    /// The suit's colour.
    pub fn colour(self) -> Colour {
        match self {
            Suit::Hearts | Suit::Diamonds => Colour::Red,
            Suit::Spades | Suit::Clubs => Colour::Black,
        }
    }

    /// The notation letter (`S H D C`).
    pub fn letter(self) -> char {
        match self {
            Suit::Spades => 'S',
            Suit::Hearts => 'H',
            Suit::Diamonds => 'D',
            Suit::Clubs => 'C',
        }
    }

    /// Parses a notation letter, case-insensitive.
    pub fn from_letter(c: char) -> Option<Suit> {
        match c.to_ascii_uppercase() {
            'S' => Some(Suit::Spades),
            'H' => Some(Suit::Hearts),
            'D' => Some(Suit::Diamonds),
            'C' => Some(Suit::Clubs),
            _ => None,
        }
    }
}

/// A card's rank. The discriminant is the rank's number (ace 1 … king 13).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Rank {
    /// Ace.
    Ace = 1,
    /// 2.
    Two = 2,
    /// 3.
    Three = 3,
    /// 4.
    Four = 4,
    /// 5.
    Five = 5,
    /// 6.
    Six = 6,
    /// 7.
    Seven = 7,
    /// 8.
    Eight = 8,
    /// 9.
    Nine = 9,
    /// 10.
    Ten = 10,
    /// Jack.
    Jack = 11,
    /// Queen.
    Queen = 12,
    /// King.
    King = 13,
}

impl Rank {
    /// All thirteen ranks, ace first.
    pub const ALL: [Rank; 13] = [
        Rank::Ace,
        Rank::Two,
        Rank::Three,
        Rank::Four,
        Rank::Five,
        Rank::Six,
        Rank::Seven,
        Rank::Eight,
        Rank::Nine,
        Rank::Ten,
        Rank::Jack,
        Rank::Queen,
        Rank::King,
    ];

    /// The rank's number: ace 1, 2–10, jack 11, queen 12, king 13.
    pub fn number(self) -> u8 {
        self as u8
    }

    /// The rank for a number 1–13.
    pub fn from_number(n: u8) -> Option<Rank> {
        Rank::ALL.get(usize::from(n).checked_sub(1)?).copied()
    }

    /// The notation symbol (`A 2 … 9 T J Q K`).
    pub fn symbol(self) -> char {
        b"A23456789TJQK"[usize::from(self.number() - 1)] as char
    }

    /// Blackjack point value with the ace counted as 1 (faces count 10).
    pub fn points(self) -> u8 {
        self.number().min(10)
    }

    /// True for 10, J, Q and K: the cards that make a natural with an ace.
    pub fn is_ten_value(self) -> bool {
        self.number() >= 10
    }
}

/// One physical card.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Card {
    /// Its rank.
    pub rank: Rank,
    /// Its suit.
    pub suit: Suit,
}

impl Card {
    /// A card of this rank and suit.
    pub const fn new(rank: Rank, suit: Suit) -> Card {
        Card { rank, suit }
    }

    /// A dense index 0..52, for composition counters.
    pub fn index(self) -> usize {
        usize::from(self.rank.number() - 1) * 4 + self.suit as usize
    }

    /// The card for a dense index 0..52.
    pub fn from_index(i: usize) -> Option<Card> {
        let rank = Rank::from_number(u8::try_from(i / 4).ok()? + 1)?;
        let suit = *Suit::ALL.get(i % 4)?;
        Some(Card { rank, suit })
    }
}

impl fmt::Display for Card {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.rank.symbol(), self.suit.letter())
    }
}

/// Why a card code could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown card code {code:?}: expected rank A 2-9 T/10 J Q K then suit S H D C, e.g. \"AS\" or \"10D\"")]
pub struct CardCodeError {
    /// The code as given.
    pub code: String,
}

impl FromStr for Card {
    type Err = CardCodeError;

    fn from_str(s: &str) -> Result<Card, CardCodeError> {
        let err = || CardCodeError {
            code: s.to_string(),
        };
        let mut chars = s.chars();
        let suit_char = chars.next_back().ok_or_else(err)?;
        let rank_part = chars.as_str();
        let rank = match rank_part.to_ascii_uppercase().as_str() {
            "A" => Rank::Ace,
            "T" | "10" => Rank::Ten,
            "J" => Rank::Jack,
            "Q" => Rank::Queen,
            "K" => Rank::King,
            digit if digit.len() == 1 => match digit.as_bytes()[0] {
                b @ b'2'..=b'9' => Rank::from_number(b - b'0').ok_or_else(err)?,
                _ => return Err(err()),
            },
            _ => return Err(err()),
        };
        let suit = Suit::from_letter(suit_char).ok_or_else(err)?;
        Ok(Card { rank, suit })
    }
}

impl serde::Serialize for Card {
    /// A card travels as its notation (`"TD"`).
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Card {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Card, D::Error> {
        let code = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        code.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_notation_form() {
        assert_eq!("AS".parse(), Ok(Card::new(Rank::Ace, Suit::Spades)));
        assert_eq!("td".parse(), Ok(Card::new(Rank::Ten, Suit::Diamonds)));
        assert_eq!("10D".parse(), Ok(Card::new(Rank::Ten, Suit::Diamonds)));
        assert_eq!("9c".parse(), Ok(Card::new(Rank::Nine, Suit::Clubs)));
        assert_eq!("kH".parse(), Ok(Card::new(Rank::King, Suit::Hearts)));
    }

    #[test]
    fn rejects_malformed_codes() {
        for bad in [
            "", "A", "1S", "11S", "AX", "ZS", "AS ", " AS", "0S", "100S", "ÄS",
        ] {
            assert!(bad.parse::<Card>().is_err(), "{bad:?} should be rejected");
        }
    }

    #[test]
    fn display_round_trips_all_52() {
        for i in 0..52 {
            let card = Card::from_index(i).expect("index in range");
            assert_eq!(card.index(), i);
            assert_eq!(card.to_string().parse::<Card>(), Ok(card));
        }
        assert_eq!(Card::from_index(52), None);
    }

    #[test]
    fn values_and_colours() {
        assert_eq!(Rank::King.points(), 10);
        assert_eq!(Rank::Ace.points(), 1);
        assert!(Rank::Jack.is_ten_value() && !Rank::Nine.is_ten_value());
        assert_eq!(Suit::Diamonds.colour(), Colour::Red);
        assert_eq!(Suit::Clubs.colour(), Colour::Black);
    }
}
