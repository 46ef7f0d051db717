//! Players' public names (issue #32 item 7). The platform's player id is the key to a
//! person's account: it stays in the log, the wallet and the staff's screens, and never
//! reaches an anonymous viewer. Everything public (the public view, the feed, the published
//! stream, signed result statements) names a player by a per-table pseudonym instead:
//! `player-` and 8 hex digits of HMAC-SHA256 over the player id, keyed by a secret derived
//! from the table's seal secret (`keys.rs`). It is stable for the life of the table's key,
//! so a viewer can follow "the same player" from round to round at one table, but cannot
//! learn the id, nor match the same person across tables (each has its own key).

use super::TableKeys;
use crate::engine::{PlayerBets, RoundResult, SeatBets};

/// The key that turns player ids into public names. The default (a zero key) serves only
/// views built without a table key (tests, a table whose key file cannot be written, which
/// also publishes unsigned results and says so in its log).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Pseudonyms {
    key: [u8; 32],
}

impl std::fmt::Debug for Pseudonyms {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the key.
        f.write_str("Pseudonyms(..)")
    }
}

impl Pseudonyms {
    /// The table's: derived from its seal secret, so it lives and dies with the table key
    /// (kept in [`TableKeys::pseudonyms`], derived once).
    pub fn of_table(keys: &TableKeys) -> Pseudonyms {
        keys.pseudonyms().clone()
    }

    /// Derived from a table's seal secret.
    pub(super) fn of_seal_secret(seal: &[u8; 32]) -> Pseudonyms {
        Pseudonyms {
            key: mac(seal, b"croupier-pseudonym-key/1"),
        }
    }

    /// A player's public name at this table.
    pub fn name(&self, player: &str) -> String {
        let digest = mac(&self.key, player.as_bytes());
        format!("player-{}", hex::encode(&digest[..4]))
    }

    /// `bets` with every player named publicly (the seated player and those behind).
    pub fn seat_bets(&self, bets: &mut SeatBets) {
        if let Some(p) = &mut bets.player {
            *p = self.name(p);
        }
        for b in &mut bets.behind {
            b.player = self.name(&b.player);
        }
    }

    /// A common draw's bets with the player named publicly.
    pub fn player_bets(&self, bets: &mut PlayerBets) {
        bets.player = self.name(&bets.player);
        for b in &mut bets.boxes {
            self.seat_bets(b);
        }
    }

    /// `result` with every player named publicly.
    pub fn result(&self, result: &mut RoundResult) {
        for h in &mut result.hands {
            if let Some(p) = &mut h.player {
                *p = self.name(p).as_str().into();
            }
        }
        for b in &mut result.bets {
            if let Some(p) = &mut b.player {
                *p = self.name(p).as_str().into();
            }
        }
    }
}

fn mac(key: &[u8; 32], message: &[u8]) -> [u8; 32] {
    super::hmac_sha256(key, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_stable_per_table_distinct_across_tables_and_hide_the_id() {
        let a = Pseudonyms::of_table(&TableKeys::from_secrets([1; 32], [2; 32]));
        let b = Pseudonyms::of_table(&TableKeys::from_secrets([1; 32], [3; 32]));
        assert_eq!(a.name("alice"), a.name("alice"));
        assert_ne!(a.name("alice"), a.name("bob"));
        assert_ne!(
            a.name("alice"),
            b.name("alice"),
            "not linkable across tables"
        );
        let n = a.name("alice");
        assert!(
            n.starts_with("player-") && n.len() == 15 && !n.contains("alice"),
            "{n}"
        );
    }
}
