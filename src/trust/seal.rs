//! The sealed hole card. While a card lies face down the public stream carries only a
//! commitment to it; at the reveal, the card and the nonce that open the commitment.
//!
//! ```text
//! nonce      = HMAC-SHA256(seal secret, "croupier-seal-nonce/3\n" table "\n" round "\n" position "\n" salt)
//! commitment = SHA-256("croupier-seal/1\n" table "\n" round "\n" position "\n" card "\n" hex(nonce))
//! ```
//!
//! `salt` is the chain hash (hex) of the log row that recorded the sealed card. A row's
//! hash covers its record (the card) and, through the chain, every row before it with its
//! time: whenever a table gets a second history — a database restored from a backup (even
//! one taken mid-round, whose round shares its opening row with the lost history), a log
//! cut back and played on, a table started anew beside its old key file — a card recorded
//! on it is salted with a hash no other history has, so its nonce is new, and a viewer
//! who saved another history's reveals learns nothing about its face-down cards. Only the
//! very same row after the very same history gives the same salt, and then the same card
//! behind the same commitment. (Without a known row — no log — the version-1 nonce
//! `"croupier-seal-nonce/1\n" table "\n" round "\n" position` is used. Version 2 salted
//! with the row that *opened* the round, which a backup taken mid-round shares with the
//! lost history.) A verifier needs none of this: the reveal carries the nonce.
//!
//! Everything is UTF-8 text: `round` in decimal, `card` in the feed's notation (`"TD"`,
//! `"AS"`), `hex` lowercase (64 digits), no trailing newline; the commitment is published
//! as lowercase hex. `position` names the card: `dealer.1` is the dealer's second card
//! (0-based), the one dealt face down in every game with a hole card (Deluxe's hole card,
//! Ultimate's fourth card). The nonce is derived, not stored (ARCHITECTURE.md, "The sealed
//! hole card"): the same commitment comes out of every replay of the log, after a crash
//! too, and nobody without the table's key file can compute it before the reveal.

use super::keys::TableKeys;
use crate::cards::Card;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The position of the dealer's face-down card.
pub const HOLE: &str = "dealer.1";

/// A sealed card as the public stream carries it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Seal {
    /// Which card (`dealer.1`).
    pub position: String,
    /// SHA-256 of the preimage, lowercase hex.
    pub commitment: String,
    /// The card, once revealed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub card: Option<Card>,
    /// The nonce (lowercase hex), once revealed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nonce: Option<String>,
    /// Once revealed, the card a supervisor's resolution put where the sealed card lay
    /// (a disputed card corrected): the seal still opens the card as dealt — the table
    /// never re-commits — and the round played with this one. Absent when the round
    /// played with the sealed card.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub corrected: Option<Card>,
}

impl Seal {
    /// The card the round played in the sealed card's place, once revealed: the
    /// correction's card if a resolution replaced it, else the sealed card.
    pub fn played(&self) -> Option<Card> {
        self.corrected.or(self.card)
    }
}

/// The nonce of (`table`, `round`, `position`) for the card recorded at the row with chain
/// hash `salt`.
pub fn nonce(
    keys: &TableKeys,
    table: &str,
    round: u64,
    position: &str,
    salt: Option<&str>,
) -> [u8; 32] {
    let text = match salt {
        Some(salt) => format!("croupier-seal-nonce/3\n{table}\n{round}\n{position}\n{salt}"),
        None => format!("croupier-seal-nonce/1\n{table}\n{round}\n{position}"),
    };
    super::hmac_sha256(keys.seal_secret(), text.as_bytes())
}

/// The text the commitment hashes.
pub fn preimage(table: &str, round: u64, position: &str, card: Card, nonce_hex: &str) -> String {
    format!("croupier-seal/1\n{table}\n{round}\n{position}\n{card}\n{nonce_hex}")
}

/// The commitment (lowercase hex) to `card` at (`table`, `round`, `position`) with `nonce_hex`.
pub fn commitment(table: &str, round: u64, position: &str, card: Card, nonce_hex: &str) -> String {
    hex::encode(Sha256::digest(preimage(
        table, round, position, card, nonce_hex,
    )))
}

/// The seal of the dealer's face-down `card` in `round` (recorded at the row with chain
/// hash `salt`): the commitment, and the card with its nonce when `revealed`. `played` is
/// the card in that place now: another than `card` once a resolution corrected it, said
/// (`Seal::corrected`) only once revealed — before, it would show the face-down card.
pub fn seal_hole(
    keys: &TableKeys,
    table: &str,
    round: u64,
    salt: Option<&str>,
    card: Card,
    played: Card,
    revealed: bool,
) -> Seal {
    let nonce = hex::encode(nonce(keys, table, round, HOLE, salt));
    Seal {
        position: HOLE.to_string(),
        commitment: commitment(table, round, HOLE, card, &nonce),
        card: revealed.then_some(card),
        nonce: revealed.then_some(nonce),
        corrected: (revealed && played != card).then_some(played),
    }
}

/// Why a seal does not open.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SealError {
    /// Card and nonce do not hash to the commitment.
    #[error("round {round}: the revealed card {card} and nonce do not match the commitment {commitment}")]
    Mismatch {
        /// The round.
        round: u64,
        /// The card revealed.
        card: Card,
        /// The commitment.
        commitment: String,
    },
}

/// Whether a revealed `seal` of `table`'s `round` opens (`Ok(false)`: not revealed yet).
pub fn check(seal: &Seal, table: &str, round: u64) -> Result<bool, SealError> {
    let (Some(card), Some(nonce)) = (seal.card, seal.nonce.as_deref()) else {
        return Ok(false);
    };
    if commitment(table, round, &seal.position, card, nonce) == seal.commitment {
        Ok(true)
    } else {
        Err(SealError::Mismatch {
            round,
            card,
            commitment: seal.commitment.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys() -> TableKeys {
        TableKeys::from_secrets([7; 32], [9; 32])
    }

    #[test]
    fn a_reveal_opens_its_commitment_and_nothing_else() {
        let card: Card = "QS".parse().expect("card");
        let hidden = seal_hole(&keys(), "t1", 4, Some("ab"), card, card, false);
        assert_eq!(hidden.card, None);
        let open = seal_hole(&keys(), "t1", 4, Some("ab"), card, card, true);
        assert_eq!(open.commitment, hidden.commitment);
        assert_eq!(check(&open, "t1", 4), Ok(true));
        assert_eq!(check(&hidden, "t1", 4), Ok(false));
        // Another card, another round, another table: no.
        let mut swapped = open.clone();
        swapped.card = Some("KS".parse().expect("card"));
        assert!(check(&swapped, "t1", 4).is_err());
        assert!(check(&open, "t1", 5).is_err());
        assert!(check(&open, "t2", 4).is_err());
        // Another key: another nonce, another commitment.
        let other = seal_hole(
            &TableKeys::from_secrets([7; 32], [8; 32]),
            "t1",
            4,
            Some("ab"),
            card,
            card,
            true,
        );
        assert_ne!(other.commitment, open.commitment);
        // The same round's card recorded at another row (another history): another
        // nonce, and the first history's reveal says nothing about the second's card.
        let again = seal_hole(&keys(), "t1", 4, Some("cd"), card, card, true);
        assert_ne!(again.nonce, open.nonce);
        let deck: Vec<Card> = "A23456789TJQK"
            .chars()
            .flat_map(|r| {
                "CDHS"
                    .chars()
                    .filter_map(move |s| format!("{r}{s}").parse::<Card>().ok())
            })
            .collect();
        assert_eq!(deck.len(), 52);
        let guessed = deck
            .iter()
            .filter(|c| {
                commitment(
                    "t1",
                    4,
                    HOLE,
                    **c,
                    open.nonce.as_deref().unwrap_or_default(),
                ) == again.commitment
            })
            .count();
        assert_eq!(
            guessed, 0,
            "the old nonce opens no card of the new commitment"
        );
    }

    #[test]
    fn a_corrected_hole_card_keeps_its_commitment_and_is_said_only_once_revealed() {
        let dealt: Card = "7S".parse().expect("card");
        let corrected: Card = "9S".parse().expect("card");
        let sealed = seal_hole(&keys(), "t1", 4, Some("ab"), dealt, dealt, false);
        // Corrected while face down: nothing of either card shows.
        let hidden = seal_hole(&keys(), "t1", 4, Some("ab"), dealt, corrected, false);
        assert_eq!(hidden, sealed);
        // Revealed: the seal opens the card as dealt, and says which card the round played.
        let open = seal_hole(&keys(), "t1", 4, Some("ab"), dealt, corrected, true);
        assert_eq!(open.commitment, sealed.commitment);
        assert_eq!(check(&open, "t1", 4), Ok(true));
        assert_eq!(
            (open.card, open.corrected, open.played()),
            (Some(dealt), Some(corrected), Some(corrected))
        );
        let plain = seal_hole(&keys(), "t1", 4, Some("ab"), dealt, dealt, true);
        assert_eq!((plain.corrected, plain.played()), (None, Some(dealt)));
        // Absent from the wire unless corrected: earlier histories read the same.
        let wire = serde_json::to_value(&plain).expect("json");
        assert!(wire.get("corrected").is_none(), "{wire}");
    }

    #[test]
    fn the_encoding_is_the_documented_one() {
        // A third party recomputes it with nothing but SHA-256.
        let nonce = "00".repeat(32);
        let text = format!("croupier-seal/1\nt1\n4\ndealer.1\nTD\n{nonce}");
        assert_eq!(
            preimage("t1", 4, HOLE, "TD".parse().expect("card"), &nonce),
            text
        );
        assert_eq!(
            commitment("t1", 4, HOLE, "TD".parse().expect("card"), &nonce),
            hex::encode(Sha256::digest(text.as_bytes()))
        );
    }
}
