//! The sealed face-down cards a viewer saw on a public stream (`trust::seal`), and the
//! attack of issue #58 on them: every commitment shown while a card lay face down tried
//! with every nonce revealed before, over the 52 cards. A nonce that opens a commitment
//! it was not made for names the face-down card before the reveal.
#![allow(dead_code)]

use serde_json::Value;

/// What a viewer saw of the sealed cards, in the order it saw them.
#[derive(Debug, Default, Clone)]
pub struct Seals {
    /// (round, nonce): every nonce revealed.
    pub nonces: Vec<(u64, String)>,
    /// (round, commitment): every commitment shown while its card lay face down (with
    /// [`seen_with_reveals`], at the reveal too).
    pub commitments: Vec<(u64, String)>,
}

/// The seals in public messages (views of the table's feed, a relay's or the broker's
/// public stream: the same text), each kept once: commitments only as shown while their
/// card lay face down (a stream that begins with a restored table's state repeats the old
/// timeline's revealed seals, which are not the new timeline's).
pub fn seen<'a>(messages: impl IntoIterator<Item = &'a Value>) -> Seals {
    collect(messages, false)
}

/// [`seen`], with the commitment each reveal repeats counted too: for a stream that holds
/// only its own log's rounds (a new log begun with `run --init`, or a cut log played on,
/// followed live), where a viewer resynced past a face-down view (a slow one, under load)
/// still has the commitment from the reveal.
pub fn seen_with_reveals<'a>(messages: impl IntoIterator<Item = &'a Value>) -> Seals {
    collect(messages, true)
}

fn collect<'a>(messages: impl IntoIterator<Item = &'a Value>, reveals: bool) -> Seals {
    let mut out = Seals::default();
    for m in messages {
        if m["type"] != "view" {
            continue;
        }
        let round = &m["view"]["round"];
        let (Some(number), seal) = (round["number"].as_u64(), &round["seal"]) else {
            continue;
        };
        let revealed = seal["nonce"].as_str();
        if let Some(nonce) = revealed {
            let nonce = (number, nonce.to_string());
            if !out.nonces.contains(&nonce) {
                out.nonces.push(nonce);
            }
        }
        if revealed.is_some() && !reveals {
            continue;
        }
        if let Some(c) = seal["commitment"].as_str() {
            let c = (number, c.to_string());
            if !out.commitments.contains(&c) {
                out.commitments.push(c);
            }
        }
    }
    out
}

/// Messages as JSON (a line that is not JSON is left out).
pub fn parsed(lines: &[String]) -> Vec<Value> {
    lines
        .iter()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// The 52 cards.
pub fn deck() -> Vec<croupier::cards::Card> {
    "A23456789TJQK"
        .chars()
        .flat_map(|r| "CDHS".chars().map(move |s| format!("{r}{s}")))
        .map(|c| c.parse().expect("card"))
        .collect()
}

/// Every face-down card of `table` a viewer who saved `nonces` could name from
/// `commitments`: (round, card, the round whose nonce named it). Each commitment is
/// tried with every nonce, over the 52 cards.
pub fn named(
    table: &str,
    commitments: &[(u64, String)],
    nonces: &[(u64, String)],
) -> Vec<(u64, croupier::cards::Card, u64)> {
    let deck = deck();
    let mut out = Vec::new();
    for (round, commitment) in commitments {
        for (from, nonce) in nonces {
            for card in &deck {
                if croupier::trust::seal::commitment(table, *round, "dealer.1", *card, nonce)
                    == *commitment
                {
                    out.push((*round, *card, *from));
                }
            }
        }
    }
    out
}
