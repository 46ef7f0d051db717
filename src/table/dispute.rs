//! Disputes: what halts a round for a supervisor, the resolutions a supervisor may choose,
//! and the correction of the round's input log that a resolution makes.
//!
//! A correction is pure: from the engine as it was before the round opened, the round's
//! accepted inputs and the shoe items held during the halt, it builds the corrected input
//! list and replays it through the same engine code as live play. The table previews it,
//! records it (the log keeps the original inputs *and* the corrected list) and recovery
//! replays the recorded list — so a resolution survives a crash exactly like a card does.

use crate::cards::{Card, Rank, Suit};
use crate::engine::{Engine, Event, Input, Place, Rejection};
use serde::{Deserialize, Serialize};

// The log records who raised a dispute and what resolved it, so the vocabulary lives in
// the store, below the table.
pub use crate::store::dispute::{Origin, Resolution};

/// Whether the audit actor `actor` counts as a person under the two-person rule: every
/// actor the web side gives but the local token — a supervisor's own account is
/// `user:<badge>`, authenticated by badge and secret. The local token (`local`) is not: it says nothing about who holds it, so it can be neither the
/// proposer nor the confirmer of a resolution that needs two people.
pub fn is_person(actor: &str) -> bool {
    actor != crate::auth::local_token::LOCAL_ACTOR
}

/// The person behind an audit actor, for the two-person rule: a badge is one person's
/// staff number across the studio, so `user:201` (logged in at the table) and `floor:201`
/// (logged in on the pit page) are the same person. The namespaces only say *where* the
/// person acted; the rule compares people. An actor without a known namespace is itself.
pub fn person(actor: &str) -> &str {
    ["user:", "floor:"]
        .iter()
        .find_map(|ns| actor.strip_prefix(ns))
        .unwrap_or(actor)
}

/// Whether two audit actors are one person under the two-person rule ([`person`]).
pub fn same_person(a: &str, b: &str) -> bool {
    person(a) == person(b)
}

/// Why a resolution cannot be applied (nothing changes).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CorrectionError {
    /// The named card is not the round's card at that position.
    #[error("the round's card {index} is {found}, not {named}: the screen is out of date")]
    WrongCard {
        /// The position.
        index: usize,
        /// The card there (or `none`).
        found: String,
        /// The card the request named.
        named: Card,
    },
    /// The round has no decision to undo.
    #[error("the round has no decision to undo")]
    NoDecision,
    /// After the correction, an input of the round no longer fits the rules.
    #[error(
        "after this correction the round's input {index} ({input}) no longer fits: {rejection}"
    )]
    DoesNotReplay {
        /// Its position in the corrected list.
        index: usize,
        /// The input, for people.
        input: String,
        /// The engine's reason.
        rejection: Rejection,
    },
    /// No point of the round sends the card to the named place.
    #[error("no order of the round's cards sends {card} to {to}")]
    CannotMove {
        /// The card.
        card: Card,
        /// Where it should have gone.
        to: Place,
    },
}

impl CorrectionError {
    /// The stable machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            CorrectionError::WrongCard { .. } => "wrong_card",
            CorrectionError::NoDecision => "no_decision",
            CorrectionError::DoesNotReplay { .. } => "correction_does_not_replay",
            CorrectionError::CannotMove { .. } => "cannot_move",
        }
    }
}

/// A corrected round, ready to record.
#[derive(Debug, Clone)]
pub struct Correction {
    /// The round's inputs after the correction, held cards included where they fit (a held
    /// card that no longer fits is voided: burned, or dropped when the shoe cannot hold it).
    pub inputs: Vec<Input>,
    /// Held items that were taken out of play.
    pub voided: Vec<String>,
    /// What the engine said replaying `inputs`.
    pub events: Vec<Event>,
    /// The engine after `inputs`.
    pub engine: Engine,
}

/// One entry of the list a correction works on.
#[derive(Debug, Clone)]
struct Step {
    input: Input,
    /// A shoe item held during the halt: if it no longer fits, it is voided instead of
    /// refusing the correction.
    held: bool,
}

/// A held shoe item (`"7H"`, `"CUT"`) as an input; `None` for something unreadable.
fn held_input(item: &str) -> Option<Input> {
    if item.eq_ignore_ascii_case("cut") {
        return Some(Input::CutCard);
    }
    item.parse::<Card>().ok().map(Input::Card)
}

/// The round's cards in order, held ones last: (position in `steps`, card).
fn cards_of(steps: &[Step]) -> Vec<(usize, Card)> {
    steps
        .iter()
        .enumerate()
        .filter_map(|(i, s)| match s.input {
            Input::Card(c) => Some((i, c)),
            _ => None,
        })
        .collect()
}

/// The position in `steps` of the round's card `index`, checked against `named`.
fn locate(steps: &[Step], index: usize, named: Card) -> Result<usize, CorrectionError> {
    match cards_of(steps).get(index) {
        Some(&(at, c)) if c == named => Ok(at),
        found => Err(CorrectionError::WrongCard {
            index,
            found: found.map_or("none".into(), |(_, c)| c.to_string()),
            named,
        }),
    }
}

/// Replays `steps` on `base`: a round input that no longer fits refuses the correction; a
/// held card that does not fit is voided (burned; dropped if the shoe cannot hold it).
/// `watch` names a step whose events are returned separately (for `Move`).
fn replay(
    base: &Engine,
    steps: &[Step],
    watch: Option<usize>,
) -> Result<(Correction, Vec<Event>), CorrectionError> {
    let mut engine = base.clone();
    let mut inputs = Vec::with_capacity(steps.len());
    let mut voided = Vec::new();
    let mut events = Vec::new();
    let mut watched = Vec::new();
    for (i, step) in steps.iter().enumerate() {
        let mark = events.len();
        match engine.apply(&step.input, &mut events) {
            Ok(()) => inputs.push(step.input.clone()),
            Err(rejection) if !step.held => {
                return Err(CorrectionError::DoesNotReplay {
                    index: i,
                    input: describe(&step.input),
                    rejection,
                })
            }
            Err(_) => {
                let burned = match step.input {
                    Input::Card(c) => engine
                        .apply(&Input::Void(c), &mut events)
                        .is_ok()
                        .then_some(Input::Void(c)),
                    _ => None,
                };
                let name = match &step.input {
                    Input::Card(c) => c.to_string(),
                    _ => "CUT".to_string(),
                };
                if let Some(input) = burned {
                    inputs.push(input);
                }
                voided.push(name);
            }
        }
        if watch == Some(i) {
            watched = events[mark..].to_vec();
        }
    }
    Ok((
        Correction {
            inputs,
            voided,
            events,
            engine,
        },
        watched,
    ))
}

/// An input for people (`card 7H`, `seat 2: stand`).
pub fn describe(input: &Input) -> String {
    match input {
        Input::Card(c) => format!("card {c}"),
        Input::Void(c) => format!("void {c}"),
        Input::CutCard => "cut card".into(),
        Input::Decision { seat, action } => format!("seat {seat}: {}", action.name()),
        Input::DoubleShort { seat, short } => {
            format!(
                "seat {seat}: double ({} cannot follow: a hit)",
                short.join(", ")
            )
        }
        Input::SplitShort { seat, short } => {
            format!(
                "seat {seat}: split ({} cannot follow: the first hand only)",
                short.join(", ")
            )
        }
        Input::PlayerDecision {
            player,
            seat,
            action,
        } => format!("{player} on box {seat}: {}", action.name()),
        other => serde_json::to_string(other).unwrap_or_else(|_| format!("{other:?}")),
    }
}

/// Applies `resolution` to the round (`round`: its accepted inputs since its bets, on
/// `base`: the engine before them; `held`: shoe items held during the halt) and replays it.
pub fn correct(
    base: &Engine,
    round: &[Input],
    held: &[String],
    resolution: &Resolution,
) -> Result<Correction, CorrectionError> {
    let mut steps: Vec<Step> = round
        .iter()
        .map(|input| Step {
            input: input.clone(),
            held: false,
        })
        .collect();
    let mut unreadable = Vec::new();
    for item in held {
        match held_input(item) {
            Some(input) => steps.push(Step { input, held: true }),
            None => unreadable.push(item.clone()),
        }
    }
    let held_from = round.len();
    let result = match resolution {
        Resolution::Reject => replay(base, &steps, None)?.0,
        Resolution::Void { index, card } => {
            let at = locate(&steps, *index, *card)?;
            steps[at] = Step {
                input: Input::Void(*card),
                held: false,
            };
            replay(base, &steps, None)?.0
        }
        Resolution::Correct { index, card, to } => {
            let at = locate(&steps, *index, *card)?;
            steps[at] = Step {
                input: Input::Card(*to),
                held: false,
            };
            replay(base, &steps, None)?.0
        }
        Resolution::UndoDecision => {
            let at = steps[..held_from]
                .iter()
                .rposition(|s| {
                    matches!(
                        s.input,
                        Input::Decision { .. }
                            | Input::DoubleShort { .. }
                            | Input::SplitShort { .. }
                            | Input::PlayerDecision { .. }
                    )
                })
                .ok_or(CorrectionError::NoDecision)?;
            steps.remove(at);
            replay(base, &steps, None)?.0
        }
        Resolution::Cancel => {
            steps.insert(
                held_from,
                Step {
                    input: Input::CancelRound,
                    held: false,
                },
            );
            replay(base, &steps, None)?.0
        }
        Resolution::Move { index, card, to } => move_card(base, steps, *index, *card, *to)?,
    };
    let mut result = result;
    result.voided.extend(unreadable);
    Ok(result)
}

/// Re-deals card `index` at the position nearest its own (later first on a tie) where the
/// rules send it to `to`; every other input keeps its order.
fn move_card(
    base: &Engine,
    steps: Vec<Step>,
    index: usize,
    card: Card,
    to: Place,
) -> Result<Correction, CorrectionError> {
    let from = locate(&steps, index, card)?;
    let mut rest = steps;
    let moved = rest.remove(from);
    let mut positions: Vec<usize> = (0..=rest.len()).filter(|&p| p != from).collect();
    positions.sort_by_key(|&p| (p.abs_diff(from), p < from));
    for p in positions {
        let mut trial = rest.clone();
        trial.insert(
            p,
            Step {
                input: moved.input.clone(),
                held: false,
            },
        );
        let Ok((correction, watched)) = replay(base, &trial, Some(p)) else {
            continue;
        };
        let landed = watched.iter().any(|e| match e {
            Event::CardDealt { card: c, to: place } => *c == card && *place == to,
            _ => false,
        });
        if landed {
            return Ok(correction);
        }
    }
    Err(CorrectionError::CannotMove { card, to })
}

/// Where each of the round's cards went, in order, for the supervisor's screen:
/// (position among the round's cards, card, place; `None` while held).
pub fn card_places(base: &Engine, round: &[Input], held: &[String]) -> Vec<CardPlace> {
    let mut engine = base.clone();
    let mut out = Vec::new();
    let mut events = Vec::new();
    for input in round {
        events.clear();
        if engine.apply(input, &mut events).is_err() {
            break;
        }
        if let Input::Card(card) = input {
            let place = events.iter().find_map(|e| match e {
                Event::CardDealt { card: c, to } if c == card => Some(to.to_string()),
                Event::Burned { card: c } if c == card => Some(Place::Burn.to_string()),
                Event::CardDrawn { card: c, hands } if c == card => {
                    Some(format!("drawn by {hands} hand(s)"))
                }
                _ => None,
            });
            out.push(CardPlace {
                index: out.len(),
                card: *card,
                place,
                held: false,
            });
        }
    }
    for item in held {
        if let Some(Input::Card(card)) = held_input(item) {
            out.push(CardPlace {
                index: out.len(),
                card,
                place: None,
                held: true,
            });
        }
    }
    out
}

/// A resolution as the supervisor's screen offers it: whether it replays for the round as
/// it stands, tried through [`correct`] exactly as a proposal would be, so the panel never
/// offers what Preview would refuse and never repeats the rules itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Offer {
    /// The operation's wire name (`Resolution::name`).
    pub op: String,
    /// Whether it can be chosen (a card operation: for at least one of `cards`).
    pub possible: bool,
    /// Why not, when it cannot: the correction's stable code (`no_decision`,
    /// `correction_does_not_replay`, ...; `no_card` for a card operation no card allows).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// A card operation's cards it applies to (positions among the round's cards); `None`
    /// for an operation that names no card, and for `move`, which is tried at Preview (its
    /// search over every hand and position is too dear to run for every card here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cards: Option<Vec<usize>>,
}

/// What a supervisor may choose for the round whose cards are `places`
/// ([`card_places`]), in the screen's order: `reject`, `void`, `correct`, `move`,
/// `undo_decision`, `cancel`. `tried` is the check a proposal's preview makes (the table's
/// `Table::correction`: [`correct`] and the table's own rules, such as which rounds may be
/// cancelled), answering a refusal's code, so nothing is offered that Preview would refuse.
/// A card may be voided when its void passes; corrected when some other card in its place
/// does.
pub fn offers(
    places: &[CardPlace],
    tried: &dyn Fn(&Resolution) -> Result<(), &'static str>,
) -> Vec<Offer> {
    let whole = |resolution: Resolution| {
        let tried = tried(&resolution);
        Offer {
            op: resolution.name().to_string(),
            possible: tried.is_ok(),
            why: tried.err().map(str::to_string),
            cards: None,
        }
    };
    let by_card = |op: &str, fits: &dyn Fn(&CardPlace) -> bool| {
        let cards: Vec<usize> = places.iter().filter(|p| fits(p)).map(|p| p.index).collect();
        Offer {
            op: op.to_string(),
            possible: !cards.is_empty(),
            why: cards.is_empty().then(|| "no_card".to_string()),
            cards: Some(cards),
        }
    };
    let void = by_card("void", &|p| {
        let r = Resolution::Void {
            index: p.index,
            card: p.card,
        };
        tried(&r).is_ok()
    });
    let fix = by_card("correct", &|p| {
        Rank::ALL.iter().any(|&rank| {
            Suit::ALL.iter().any(|&suit| {
                let to = Card::new(rank, suit);
                let r = Resolution::Correct {
                    index: p.index,
                    card: p.card,
                    to,
                };
                to != p.card && tried(&r).is_ok()
            })
        })
    });
    let moved = Offer {
        op: "move".to_string(),
        possible: !places.is_empty(),
        why: places.is_empty().then(|| "no_card".to_string()),
        cards: None,
    };
    vec![
        whole(Resolution::Reject),
        void,
        fix,
        moved,
        whole(Resolution::UndoDecision),
        whole(Resolution::Cancel),
    ]
}

/// One of the round's cards on the supervisor's screen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CardPlace {
    /// Its position among the round's cards (what a resolution names).
    pub index: usize,
    /// The card.
    pub card: Card,
    /// Where it went (`seat 2, hand 1`, `the dealer`, `the burn pile`); `None` while held.
    pub place: Option<String>,
    /// Held during the halt, not yet in play.
    pub held: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{SeatBets, Variant};
    use std::sync::Arc;

    fn engine() -> Engine {
        Engine::new(Arc::new(
            Variant::built_in("deluxe").expect("known").expect("valid"),
        ))
    }

    fn c(s: &str) -> Card {
        s.parse().expect("card")
    }

    fn bets() -> Input {
        Input::Bets(vec![
            SeatBets {
                seat: 1,
                main: 100,
                ..SeatBets::default()
            },
            SeatBets {
                seat: 2,
                main: 100,
                ..SeatBets::default()
            },
        ])
    }

    fn round(cards: &[&str]) -> Vec<Input> {
        let mut v = vec![bets()];
        v.extend(cards.iter().map(|s| Input::Card(c(s))));
        v
    }

    fn hands(e: &Engine) -> String {
        e.expectation().to_string()
    }

    #[test]
    fn voiding_an_exposed_card_lets_the_next_one_take_its_place() {
        let base = engine();
        let r = round(&["9H", "5S", "2D"]);
        let fixed = correct(
            &base,
            &r,
            &["7C".into()],
            &Resolution::Void {
                index: 2,
                card: c("2D"),
            },
        )
        .expect("applies");
        assert_eq!(fixed.inputs[3], Input::Void(c("2D")));
        assert!(fixed.events.contains(&Event::CardDealt {
            card: c("7C"),
            to: Place::Dealer
        }));
        assert_eq!(hands(&fixed.engine), "card for seat 1, hand 1");
    }

    #[test]
    fn offers_are_what_a_proposal_would_take() {
        let base = engine();
        // Mid-deal: no decision yet; every card can be voided or corrected.
        let r = round(&["9H", "5S", "2D"]);
        let held: [String; 1] = ["7C".into()];
        let o = offers(&card_places(&base, &r, &held), &|res| {
            correct(&base, &r, &held, res)
                .map(|_| ())
                .map_err(|e| e.code())
        });
        let ops: Vec<&str> = o.iter().map(|x| x.op.as_str()).collect();
        assert_eq!(
            ops,
            [
                "reject",
                "void",
                "correct",
                "move",
                "undo_decision",
                "cancel"
            ]
        );
        let get = |op: &str| o.iter().find(|x| x.op == op).expect("offered").clone();
        assert!(get("reject").possible && get("cancel").possible);
        let undo = get("undo_decision");
        assert!(!undo.possible);
        assert_eq!(undo.why.as_deref(), Some("no_decision"));
        assert_eq!(get("void").cards, Some(vec![0, 1, 2, 3]));
        // Each card listed for a void is one `correct` takes, each left out one it refuses.
        for p in card_places(&base, &r, &["7C".into()]) {
            let v = Resolution::Void {
                index: p.index,
                card: p.card,
            };
            assert_eq!(
                correct(&base, &r, &["7C".into()], &v).is_ok(),
                get("void").cards.expect("cards").contains(&p.index)
            );
        }
        // Later in the round, after decisions: the cards offered for a void are still
        // exactly those whose void replays.
        let mut settled = round(&["TH", "9S", "7C", "9D", "5S", "TC"]);
        for seat in [1, 2] {
            settled.push(Input::Decision {
                seat,
                action: crate::engine::Action::Stand,
            });
        }
        let o = offers(&card_places(&base, &settled, &[]), &|res| {
            correct(&base, &settled, &[], res)
                .map(|_| ())
                .map_err(|e| e.code())
        });
        let void = o.iter().find(|x| x.op == "void").expect("void");
        for p in card_places(&base, &settled, &[]) {
            let v = Resolution::Void {
                index: p.index,
                card: p.card,
            };
            assert_eq!(
                correct(&base, &settled, &[], &v).is_ok(),
                void.cards.as_ref().expect("cards").contains(&p.index),
                "card {}",
                p.index
            );
        }
    }

    #[test]
    fn a_stale_screen_is_refused() {
        let base = engine();
        let err = correct(
            &base,
            &round(&["9H", "5S"]),
            &[],
            &Resolution::Void {
                index: 1,
                card: c("9H"),
            },
        )
        .expect_err("wrong card");
        assert_eq!(err.code(), "wrong_card");
    }

    #[test]
    fn moving_a_card_dealt_out_of_order_redeals_it_where_it_went() {
        // Seat 1, seat 2, dealer: the dealer gave 9H to seat 2 and 5S to seat 1.
        let base = engine();
        let fixed = correct(
            &base,
            &round(&["9H", "5S", "7C"]),
            &[],
            &Resolution::Move {
                index: 0,
                card: c("9H"),
                to: Place::Hand { seat: 2, hand: 0 },
            },
        )
        .expect("applies");
        assert!(fixed.events.contains(&Event::CardDealt {
            card: c("9H"),
            to: Place::Hand { seat: 2, hand: 0 }
        }));
        assert!(fixed.events.contains(&Event::CardDealt {
            card: c("5S"),
            to: Place::Hand { seat: 1, hand: 0 }
        }));
        let err = correct(
            &base,
            &round(&["9H"]),
            &[],
            &Resolution::Move {
                index: 0,
                card: c("9H"),
                to: Place::Hand { seat: 7, hand: 0 },
            },
        )
        .expect_err("no such seat");
        assert_eq!(err.code(), "cannot_move");
    }

    #[test]
    fn held_cards_that_no_longer_fit_are_burned() {
        let base = engine();
        // Seat 1 stands on 19 after the deal; a held card then fits as seat 2's hit, the
        // cancellation makes every held card a burn card.
        let mut r = round(&["TH", "9S", "7C", "9D", "5S", "8C"]);
        r.push(Input::Decision {
            seat: 1,
            action: crate::engine::Action::Stand,
        });
        let fixed =
            correct(&base, &r, &["3H".into(), "XX".into()], &Resolution::Cancel).expect("applies");
        assert_eq!(fixed.inputs.last(), Some(&Input::Void(c("3H"))));
        // Both held items are out of play: 3H on the burn pile, XX unreadable.
        assert_eq!(fixed.voided, vec!["3H".to_string(), "XX".to_string()]);
        let undone =
            correct(&base, &r, &[], &Resolution::UndoDecision).expect("a decision to undo");
        assert_eq!(
            hands(&undone.engine),
            hands(&{
                let mut e = base.clone();
                for i in &r[..r.len() - 1] {
                    e.apply(i, &mut Vec::new()).expect("legal");
                }
                e
            })
        );
    }
}
