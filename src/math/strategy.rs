//! A basic strategy derived for a variant's own rules, for `croupier simulate`.
//!
//! Method: **infinite deck**. Every card value is drawn with its full-deck probability
//! (1/13 each for ace to nine, 4/13 for a ten-value), independent of the cards already out.
//! For each dealer up card the dealer's final position (natural, bust, 0–21) is computed
//! exactly under the variant's dealer rules (S17/H17, ace 1 or 11, the dealer's card limit,
//! the variant's natural); where the dealer peeks on that up card the player decides on the
//! distribution *given no natural*. Then every player hand is valued by exact expectimax
//! over its next cards: stand, hit, double (and, where `double.stand_after_card` is off,
//! play on after it), surrender, each where the variant's settings allow it, with
//! Charlie, the hand's card limit, split aces, ties, the natural's pay and what a dealer
//! natural found after play takes. A pair's split is valued as two hands each dealt one
//! more card, with no further resplit (an approximation: resplits are rare and the engine
//! still offers them, the strategy then compares the same two figures again).
//!
//! The strategy is a lookup: the simulator asks it for a hand in play, gets the actions in
//! order of expected value and takes the first one the engine allows (a card is a hit).
//! It never insures and never takes even money. It is a *player's* choice, not a rule: the
//! rules are the engine's, which the simulator drives, so a strategy mistake can only cost
//! return, never change what a hand pays.

use crate::cards::{Card, Rank};
use crate::engine::variant::{
    AceValue, DoubleOn, NaturalTakes, Soft17, SplitPairs, SurrenderWhen, Ties, UpCard, Variant,
};
use crate::engine::{Action, HandInPlay};
use std::collections::HashMap;

/// Infinite-deck probability of a card value (1 = ace, 10 = any ten-value).
fn p(v: u8) -> f64 {
    if v == 10 {
        4.0 / 13.0
    } else {
        1.0 / 13.0
    }
}

/// The dealer's final position, as probabilities.
#[derive(Debug, Clone, Copy, Default)]
struct DealerDist {
    natural: f64,
    bust: f64,
    /// Non-natural final totals 0..=21.
    total: [f64; 22],
}

/// A player hand as the strategy sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct State {
    /// Every ace counted as 1.
    hard: u8,
    ace: bool,
    cards: u8,
    doubles: u8,
    split: bool,
    split_aces: bool,
    /// No split, no double, only aces (at most one) and ten-values so far: a natural is
    /// still possible (or complete).
    nat: bool,
}

/// The derived strategy and the figure it gives on an infinite deck.
#[derive(Debug, Clone)]
pub struct Strategy {
    /// Ordered preferences per hand (see `index`), packed 3 bits an action.
    table: Vec<u16>,
    /// Whether splitting beats playing the pair on: [up][a][b][from_split].
    split: Vec<bool>,
    /// A two-card hand's whole answer, by `two_key` (the ranks of the up card and the
    /// hand's two cards, from a split; no doubles yet): `SPLIT` first where splitting is
    /// preferred, then the hand's packed preferences (the hit-below-17 fallback where the
    /// derivation never reached it). Most decisions are on two cards: this skips the
    /// hand's sums, the big table's index and even the ranks' point values.
    two: Box<[u16; TWO_KEYS]>,
    /// The expected return per unit of initial bet under this strategy on an infinite
    /// deck (1.0 = 100 %), never insuring.
    pub infinite_deck_rtp: f64,
}

const UPS: usize = 10;
const HARDS: usize = 32;
const CARDS: usize = 16;
const DOUBLES: usize = 4;

fn index(up: u8, s: &State) -> usize {
    let mut i = usize::from(up - 1);
    i = i * HARDS + usize::from(s.hard).min(HARDS - 1);
    i = i * 2 + usize::from(s.ace);
    i = i * CARDS + usize::from(s.cards).min(CARDS - 1);
    i = i * DOUBLES + usize::from(s.doubles).min(DOUBLES - 1);
    i = i * 2 + usize::from(s.split);
    i * 2 + usize::from(s.nat)
}

/// Keys of `Strategy::two`: rank numbers (1–13) fit 4 bits each.
const TWO_KEYS: usize = 1 << 13;

fn two_key(up: Rank, a: Rank, b: Rank, from_split: bool) -> usize {
    usize::from(up.number()) << 9
        | usize::from(a.number()) << 5
        | usize::from(b.number()) << 1
        | usize::from(from_split)
}

fn split_index(up: u8, a: u8, b: u8, from_split: bool) -> usize {
    ((usize::from(up - 1) * 10 + usize::from(a - 1)) * 10 + usize::from(b - 1)) * 2
        + usize::from(from_split)
}

/// An action code in the packed preferences (0 ends the list).
const STAND: u16 = 1;
const HIT: u16 = 2;
const DOUBLE: u16 = 3;
const SURRENDER: u16 = 4;
/// Only in `Strategy::two`: split the pair (before any other preference).
const SPLIT: u16 = 5;

/// Reads the variant's rules for the derivation.
struct Rules<'a> {
    v: &'a Variant,
}

impl Rules<'_> {
    fn best(&self, hard: u8, ace: bool) -> (u8, bool) {
        let soft = self.v.hand.ace == AceValue::OneOrEleven && ace && hard + 10 <= 21;
        if soft {
            (hard + 10, true)
        } else {
            (hard, false)
        }
    }

    fn natural_len(&self) -> u8 {
        // At most 3 (the variant's natural).
        self.v.hand.natural.cards() as u8
    }

    fn is_natural(&self, s: &State) -> bool {
        s.nat && s.ace && s.cards == self.natural_len()
    }

    /// What `v` does to a hand (the engine's `rules::after_card`): bust, stood, or live.
    fn add(&self, s: &State, c: u8, doubling: bool) -> State {
        State {
            hard: s.hard.saturating_add(c),
            ace: s.ace || c == 1,
            cards: s.cards + 1,
            doubles: s.doubles + u8::from(doubling),
            split: s.split,
            split_aces: s.split_aces,
            nat: s.nat && !doubling && (c == 10 || (c == 1 && !s.ace)),
        }
    }

    fn stands_after(&self, s: &State, doubled: bool) -> bool {
        let (best, _) = self.best(s.hard, s.ace);
        let h = &self.v.hand;
        best == 21
            || (h.charlie != 0 && s.cards >= h.charlie)
            || (h.max_cards != 0 && s.cards >= h.max_cards)
            || (s.split_aces && s.cards >= 2)
            || (doubled && self.v.double.stand_after_card)
    }

    fn may_double(&self, s: &State) -> bool {
        let d = &self.v.double;
        let (best, _) = self.best(s.hard, s.ace);
        let two = s.cards == 2;
        let shape = match d.on {
            _ if s.split && d.after_split_any_total => two,
            DoubleOn::Never => false,
            DoubleOn::AnyTwo => two,
            DoubleOn::NineToEleven => two && (9..=11).contains(&best),
            DoubleOn::TenOrEleven => two && (10..=11).contains(&best),
            DoubleOn::AnyCards => true,
        };
        let count_ok = d.max_per_hand == 0 || s.doubles < d.max_per_hand;
        shape && count_ok && (!s.split || d.after_split) && !s.split_aces
    }

    fn may_surrender(&self, s: &State, up: u8) -> bool {
        let when = match self.v.surrender.when {
            SurrenderWhen::Never => false,
            SurrenderWhen::FirstTwoCards => s.cards == 2 && !s.split && s.doubles == 0,
            SurrenderWhen::AnyTime => true,
        };
        let against = self.v.surrender.not_against.iter().any(|u| match u {
            UpCard::Ace => up == 1,
            UpCard::Ten => up == 10,
        });
        when && !against
    }

    fn may_split(&self, a: u8, b: u8) -> bool {
        let pair = match self.v.split.pairs {
            // Ten-values of different ranks are read as a pair here (rare and never split).
            SplitPairs::SameValue | SplitPairs::SameRank => a == b,
            SplitPairs::AnyTwo => true,
        };
        pair && self.v.split.max_hands >= 2
    }

    fn peeks(&self, up: u8) -> bool {
        self.v.deal.dealer_cards == 2
            && self.v.deal.peek_on.iter().any(|u| match u {
                UpCard::Ace => up == 1,
                UpCard::Ten => up == 10,
            })
    }

    /// The dealer's final position from `up` (the engine's `rules::dealer_rules_draw`).
    fn dealer(&self, up: u8) -> DealerDist {
        let mut d = DealerDist::default();
        let s = State {
            hard: up,
            ace: up == 1,
            cards: 1,
            doubles: 0,
            split: false,
            split_aces: false,
            nat: up == 1 || up == 10,
        };
        self.dealer_from(&s, 1.0, &mut d);
        d
    }

    fn dealer_from(&self, s: &State, prob: f64, d: &mut DealerDist) {
        let (best, soft) = self.best(s.hard, s.ace);
        let max = self.v.dealer.max_cards;
        let draws = !(max != 0 && s.cards >= max)
            && (best < 17 || (best == 17 && soft && self.v.dealer.soft_17 == Soft17::Hit));
        // A natural is decided by its first cards, even if the rules would draw on.
        if self.is_natural(s) {
            d.natural += prob;
            return;
        }
        if !draws {
            if best > 21 {
                d.bust += prob;
            } else {
                d.total[usize::from(best)] += prob;
            }
            return;
        }
        for c in 1..=10 {
            self.dealer_from(&self.add(s, c, false), prob * p(c), d);
        }
    }

    /// The net result of a win on the natural (3:2 → 1.5).
    fn natural_net(&self) -> f64 {
        self.v.hand.natural_pays.return_per_unit() - 1.0
    }

    /// Standing on `s` with `m` units staked.
    fn stand(&self, s: &State, d: &DealerDist) -> f64 {
        let m = 1.0 + f64::from(s.doubles);
        if self.is_natural(s) {
            return (1.0 - d.natural) * self.natural_net();
        }
        let (t, _) = self.best(s.hard, s.ace);
        let h = &self.v.hand;
        let charlie = h.charlie != 0 && s.cards >= h.charlie;
        let lose_to_natural = match self.v.settlement.dealer_natural_takes {
            NaturalTakes::AllBets => -m,
            // Only the original bet: half the split pair's hands carry it.
            NaturalTakes::OriginalBetsOnly if s.split => -0.5,
            NaturalTakes::OriginalBetsOnly => -1.0,
        };
        let mut ev = d.natural
            * if charlie && h.charlie_beats_dealer_natural {
                m
            } else {
                lose_to_natural
            };
        let rest = 1.0 - d.natural;
        if charlie {
            return ev + rest * m;
        }
        ev += d.bust * m;
        let tie = match self.v.settlement.ties {
            Ties::Push => 0.0,
            Ties::Lose => -m,
        };
        for (dt, &pr) in d.total.iter().enumerate() {
            let dt = dt as u8;
            ev += pr
                * match t.cmp(&dt) {
                    std::cmp::Ordering::Greater => m,
                    std::cmp::Ordering::Less => -m,
                    std::cmp::Ordering::Equal => tie,
                };
        }
        ev
    }
}

/// The expectimax over one up card's hands.
struct Solver<'a> {
    rules: &'a Rules<'a>,
    up: u8,
    dist: DealerDist,
    memo: HashMap<State, (f64, u16)>,
}

impl Solver<'_> {
    /// The value after a card: bust, stood, or the best play of the live hand.
    fn after(&mut self, s: &State, doubled: bool) -> f64 {
        let (best, _) = self.rules.best(s.hard, s.ace);
        if best > 21 {
            return -(1.0 + f64::from(s.doubles));
        }
        if self.rules.stands_after(s, doubled) {
            return self.rules.stand(s, &self.dist);
        }
        self.play(s).0
    }

    /// The best value of a live hand and its actions in order of value.
    fn play(&mut self, s: &State) -> (f64, u16) {
        if let Some(&hit) = self.memo.get(s) {
            return hit;
        }
        let mut options: Vec<(f64, u16)> = Vec::with_capacity(4);
        options.push((self.rules.stand(s, &self.dist), STAND));
        let mut hit = 0.0;
        for c in 1..=10 {
            let next = self.rules.add(s, c, false);
            hit += p(c) * self.after(&next, false);
        }
        options.push((hit, HIT));
        if self.rules.may_double(s) {
            let mut dbl = 0.0;
            for c in 1..=10 {
                let next = self.rules.add(s, c, true);
                dbl += p(c) * self.after(&next, true);
            }
            options.push((dbl, DOUBLE));
        }
        if self.rules.may_surrender(s, self.up) {
            options.push((0.5 - (1.0 + f64::from(s.doubles)), SURRENDER));
        }
        options.sort_by(|a, b| b.0.total_cmp(&a.0));
        let packed = options
            .iter()
            .enumerate()
            .fold(0u16, |acc, (i, (_, code))| acc | (code << (3 * i)));
        let out = (options[0].0, packed);
        self.memo.insert(*s, out);
        out
    }

    /// A two-card hand's value (a natural and an automatic 21 stand).
    fn initial(&mut self, s: &State) -> f64 {
        if self.rules.is_natural(s) || self.rules.stands_after(s, false) {
            self.rules.stand(s, &self.dist)
        } else {
            self.play(s).0
        }
    }

    /// One hand of a split pair, led by `c`, dealt one more card.
    fn split_hand(&mut self, c: u8, aces: bool) -> f64 {
        let lead = State {
            hard: c,
            ace: c == 1,
            cards: 1,
            doubles: 0,
            split: true,
            split_aces: aces,
            nat: false,
        };
        let mut ev = 0.0;
        for v in 1..=10 {
            let s = self.rules.add(&lead, v, false);
            ev += p(v) * self.after(&s, false);
        }
        ev
    }
}

fn two_cards(a: u8, b: u8, split: bool) -> State {
    State {
        hard: a + b,
        ace: a == 1 || b == 1,
        cards: 2,
        doubles: 0,
        split,
        split_aces: false,
        nat: !split && matches!((a, b), (1, 10) | (10, 1) | (10, 10)),
    }
}

impl Strategy {
    /// Derives the strategy for `v` (a few milliseconds).
    pub fn derive(v: &Variant) -> Strategy {
        let rules = Rules { v };
        let mut table = vec![0u16; UPS * HARDS * 2 * CARDS * DOUBLES * 2 * 2];
        let mut split = vec![false; 10 * 10 * 10 * 2];
        let mut rtp = 0.0;
        for up in 1..=10u8 {
            let all = rules.dealer(up);
            let peek = rules.peeks(up);
            let dist = if peek && all.natural > 0.0 {
                let rest = 1.0 - all.natural;
                let mut d = all;
                d.natural = 0.0;
                d.bust /= rest;
                d.total.iter_mut().for_each(|t| *t /= rest);
                d
            } else {
                all
            };
            let mut solver = Solver {
                rules: &rules,
                up,
                dist,
                memo: HashMap::new(),
            };
            let mut ev_up = 0.0;
            for a in 1..=10u8 {
                for b in 1..=10u8 {
                    let s = two_cards(a, b, false);
                    let mut ev = solver.initial(&s);
                    for from_split in [false, true] {
                        if rules.may_split(a, b) {
                            let aces = a == 1 && b == 1;
                            let sp = solver.split_hand(a, aces) + solver.split_hand(b, aces);
                            let play = solver.initial(&two_cards(a, b, from_split));
                            split[split_index(up, a, b, from_split)] = sp > play;
                            if !from_split {
                                ev = ev.max(sp);
                            }
                        }
                    }
                    if peek {
                        let natural = rules.is_natural(&s);
                        ev = all.natural * if natural { 0.0 } else { -1.0 }
                            + (1.0 - all.natural) * ev;
                    }
                    ev_up += p(a) * p(b) * ev;
                }
            }
            rtp += p(up) * ev_up;
            for (s, (_, packed)) in &solver.memo {
                if usize::from(s.cards) < CARDS && usize::from(s.doubles) < DOUBLES {
                    table[index(up, s)] = *packed;
                }
            }
        }
        // Every two-card hand's answer, read from the two tables above exactly as the
        // general lookup (`preferences`) reads them.
        let mut two = Box::new([0u16; TWO_KEYS]);
        for up in Rank::ALL {
            for a in Rank::ALL {
                for b in Rank::ALL {
                    for from_split in [false, true] {
                        let (u, x, y) = (up.points(), a.points(), b.points());
                        let s = two_cards(x, y, from_split);
                        let packed = or_fallback(table[index(u, &s)], s.hard);
                        two[two_key(up, a, b, from_split)] =
                            if split[split_index(u, x, y, from_split)] {
                                SPLIT | (packed << 3)
                            } else {
                                packed
                            };
                    }
                }
            }
        }
        Strategy {
            table,
            split,
            two,
            infinite_deck_rtp: 1.0 + rtp,
        }
    }

    /// The decision for a live hand: `None` is a hit (a card), otherwise the first action
    /// in order of value that `allowed` (the engine's list) contains. `up` is the dealer's
    /// up card, `cards` the hand's, `from_split` and `doubles` its history.
    pub fn decide(
        &self,
        up: Card,
        cards: &[Card],
        from_split: bool,
        doubles: u8,
        allowed: &[Action],
    ) -> Option<Action> {
        self.decide_with(up, cards, from_split, doubles, |a| allowed.contains(&a))
    }

    /// `decide`, asking `may` whether the engine allows each action it considers (the
    /// simulator asks the engine one decision at a time instead of building the list).
    pub fn decide_with(
        &self,
        up: Card,
        cards: &[Card],
        from_split: bool,
        doubles: u8,
        may: impl Fn(Action) -> bool,
    ) -> Option<Action> {
        walk(self.preferences(up, cards, from_split, doubles), may, true)
    }

    /// `decide_with` for the hand the engine says owes a decision now (`Step::Decision`,
    /// `Engine::hand_in_play`): such a hand may always stand, so `may` is asked only about
    /// the actions a rule can refuse (double, split, surrender); a longer hand is read
    /// from the counts the engine keeps rather than from its cards. The simulator's hot
    /// path.
    #[inline]
    pub fn decide_in_play(
        &self,
        h: &HandInPlay<'_>,
        may: impl Fn(Action) -> bool,
    ) -> Option<Action> {
        let packed = match (h.cards, h.doubles) {
            ([a, b], 0) => self.two[two_key(h.up.rank, a.rank, b.rank, h.from_split)],
            _ => {
                let counts = Counts {
                    hard: u8::try_from(h.hard).unwrap_or(u8::MAX),
                    aces: h.aces,
                    natural_shape: h.natural_shape(),
                };
                self.longer_preferences(h.up, h.cards, counts, h.from_split, h.doubles)
            }
        };
        walk(packed, may, false)
    }

    /// The hand's packed preferences, `SPLIT` first where splitting the pair is preferred:
    /// a two-card hand's from its table, inline; any other's out of line.
    #[inline]
    fn preferences(&self, up: Card, cards: &[Card], from_split: bool, doubles: u8) -> u16 {
        match (cards, doubles) {
            ([a, b], 0) => self.two[two_key(up.rank, a.rank, b.rank, from_split)],
            _ => self.longer_preferences(up, cards, Counts::of(cards), from_split, doubles),
        }
    }

    /// `preferences` for a hand of three cards or more, or after a double, with its
    /// counts.
    #[inline(never)]
    fn longer_preferences(
        &self,
        up: Card,
        cards: &[Card],
        counts: Counts,
        from_split: bool,
        doubles: u8,
    ) -> u16 {
        let up = up.rank.points();
        let s = State {
            hard: counts.hard,
            ace: counts.aces > 0,
            cards: u8::try_from(cards.len()).unwrap_or(u8::MAX),
            doubles,
            split: from_split,
            split_aces: false,
            nat: !from_split && doubles == 0 && counts.natural_shape,
        };
        let packed = or_fallback(self.table[index(up, &s)], counts.hard);
        match cards {
            // A pair after a double (rules that double on any cards): still a pair.
            [a, b] if self.split[split_index(up, a.rank.points(), b.rank.points(), from_split)] => {
                SPLIT | (packed << 3)
            }
            _ => packed,
        }
    }
}

/// What `longer_preferences` reads of a hand besides its length.
struct Counts {
    /// Points with every ace as 1, at most 255.
    hard: u8,
    aces: u8,
    /// Only ten-values and at most one ace.
    natural_shape: bool,
}

impl Counts {
    /// Counted from the cards.
    fn of(cards: &[Card]) -> Counts {
        let mut hard = 0u8;
        let mut aces = 0u8;
        let mut tens_or_aces = true;
        for c in cards {
            let v = c.rank.points();
            hard = hard.saturating_add(v);
            aces += u8::from(c.rank == Rank::Ace);
            tens_or_aces &= c.rank == Rank::Ace || v == 10;
        }
        Counts {
            hard,
            aces,
            natural_shape: tens_or_aces && aces <= 1,
        }
    }
}

/// `packed`, or for a hand the derivation never reached (more cards than it indexes):
/// hit below 17.
fn or_fallback(packed: u16, hard: u8) -> u16 {
    match packed {
        0 if hard < 17 => HIT,
        0 => STAND,
        _ => packed,
    }
}

/// The first of the packed preferences that is a hit (`None`) or that `may` allows
/// (`ask_stand` false: standing is allowed without asking); a stand if none is.
#[inline]
fn walk(mut packed: u16, may: impl Fn(Action) -> bool, ask_stand: bool) -> Option<Action> {
    while packed != 0 {
        let action = match packed & 7 {
            HIT => return None,
            STAND if !ask_stand => return Some(Action::Stand),
            STAND => Action::Stand,
            DOUBLE => Action::Double,
            SPLIT => Action::Split,
            _ => Action::Surrender,
        };
        if may(action) {
            return Some(action);
        }
        packed >>= 3;
    }
    Some(Action::Stand)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cards::Suit;

    fn card(r: Rank) -> Card {
        Card::new(r, Suit::Spades)
    }

    fn variant(stem: &str) -> Variant {
        Variant::built_in(stem).expect("shipped").expect("valid")
    }

    const ALL: [Action; 4] = [
        Action::Stand,
        Action::Double,
        Action::Split,
        Action::Surrender,
    ];

    fn decide(s: &Strategy, up: Rank, a: Rank, b: Rank) -> Option<Action> {
        s.decide(card(up), &[card(a), card(b)], false, 0, &ALL)
    }

    /// The textbook multi-deck S17 DAS decisions come out of the derivation (Deluxe: 8
    /// decks, S17, DAS, peek, late surrender but not against an ace or a ten).
    #[test]
    fn deluxe_matches_the_textbook_basic_strategy() {
        use Rank::*;
        let s = Strategy::derive(&variant("deluxe"));
        let hit = None;
        let stand = Some(Action::Stand);
        let double = Some(Action::Double);
        let split = Some(Action::Split);
        let surrender = Some(Action::Surrender);
        assert_eq!(decide(&s, Two, Ten, Two), hit, "12 v 2");
        assert_eq!(decide(&s, Four, Ten, Two), stand, "12 v 4");
        assert_eq!(decide(&s, Six, Ten, Six), stand, "16 v 6");
        assert_eq!(decide(&s, Seven, Ten, Six), hit, "16 v 7");
        assert_eq!(decide(&s, Nine, Ten, Six), surrender, "16 v 9");
        assert_eq!(
            decide(&s, Ten, Ten, Six),
            hit,
            "16 v 10: no surrender against a ten"
        );
        assert_eq!(decide(&s, Ten, Seven, Four), double, "11 v 10");
        assert_eq!(decide(&s, Ace, Seven, Four), hit, "11 v A (S17, 8 decks)");
        assert_eq!(decide(&s, Ten, Six, Four), hit, "10 v 10");
        assert_eq!(decide(&s, Three, Six, Three), double, "9 v 3");
        assert_eq!(decide(&s, Two, Ace, Seven), stand, "A7 v 2");
        assert_eq!(decide(&s, Three, Ace, Seven), double, "A7 v 3");
        assert_eq!(decide(&s, Nine, Ace, Seven), hit, "A7 v 9");
        assert_eq!(decide(&s, Ten, Eight, Eight), split, "88 v 10");
        assert_eq!(decide(&s, Six, Ten, King), stand, "TT v 6");
        assert_eq!(decide(&s, Seven, Nine, Nine), stand, "99 v 7");
        assert_eq!(decide(&s, Eight, Nine, Nine), split, "99 v 8");
        assert_eq!(decide(&s, Two, Two, Two), split, "22 v 2 (DAS)");
        assert_eq!(decide(&s, Five, Five, Five), double, "55 v 5");
        assert_eq!(decide(&s, Six, Ace, Ace), split, "AA v 6");
        assert_eq!(decide(&s, Three, Ten, Two), hit, "12 v 3");
    }

    /// The derivation follows the rules: without a peek a dealer natural takes doubles
    /// too, so Ultimate (no peek, all bets) does not double 11 against a ten as Deluxe does;
    /// with a 6-card Charlie a five-card 14 hits against a 6 (7 cards in 13 make the
    /// Charlie) where Deluxe stands.
    #[test]
    fn rules_move_the_decisions() {
        use Rank::*;
        let ultimate = Strategy::derive(&variant("ultimate"));
        assert_eq!(
            decide(&ultimate, Ten, Seven, Four),
            None,
            "11 v 10 without a peek"
        );
        let five_cards = [card(Two), card(Three), card(Two), card(Three), card(Four)];
        let charlie = ultimate.decide(card(Six), &five_cards, false, 0, &ALL);
        assert_eq!(charlie, None, "five-card 14 v 6 hits for the Charlie");
        let deluxe = Strategy::derive(&variant("deluxe"));
        let stands = deluxe.decide(card(Six), &five_cards, false, 0, &ALL);
        assert_eq!(stands, Some(Action::Stand), "no Charlie: stand");
        // Only actions the engine allows are ever returned.
        let only_stand = deluxe.decide(
            card(Ten),
            &[card(Ten), card(Six)],
            false,
            0,
            &[Action::Stand],
        );
        assert_eq!(
            only_stand, None,
            "16 v 10 hits when surrender is not allowed"
        );
    }

    /// The hot path's answer (`decide_in_play`: the two-card table, standing without
    /// asking) is `decide_with`'s whenever standing is allowed, as it is for every hand
    /// that owes a decision: every up card and two-card hand, three- and four-card hands,
    /// after a split or a double, whatever else the engine allows.
    #[test]
    fn decide_in_play_agrees_with_decide_with() {
        use std::cell::Cell;
        use Rank::{Ace, Three, Two};
        let refusable = [Action::Double, Action::Split, Action::Surrender];
        for stem in ["ultimate", "deluxe", "infor6", "caribbean21"] {
            let s = Strategy::derive(&variant(stem));
            for up in Rank::ALL {
                for a in Rank::ALL {
                    for b in Rank::ALL {
                        for extra in [&[][..], &[card(Two)], &[card(Ace), card(Three)]] {
                            let mut cards = vec![card(a), card(b)];
                            cards.extend_from_slice(extra);
                            for (from_split, doubles) in [(false, 0), (true, 0), (false, 1)] {
                                for mask in 0..8u8 {
                                    let may = |x: Action| {
                                        x == Action::Stand
                                            || refusable
                                                .iter()
                                                .enumerate()
                                                .any(|(i, r)| *r == x && mask & (1 << i) != 0)
                                    };
                                    let asked_stand = Cell::new(false);
                                    let aces = cards.iter().filter(|c| c.rank == Ace).count();
                                    let tens =
                                        cards.iter().filter(|c| c.rank.is_ten_value()).count();
                                    let hand = HandInPlay {
                                        seat: 1,
                                        cards: &cards,
                                        from_split,
                                        doubles,
                                        up: card(up),
                                        hard: cards
                                            .iter()
                                            .map(|c| u16::from(c.rank.points()))
                                            .sum(),
                                        aces: u8::try_from(aces).expect("few"),
                                        tens: u8::try_from(tens).expect("few"),
                                    };
                                    let fast = s.decide_in_play(&hand, |x| {
                                        asked_stand.set(asked_stand.get() || x == Action::Stand);
                                        may(x)
                                    });
                                    let slow =
                                        s.decide_with(card(up), &cards, from_split, doubles, may);
                                    assert_eq!(
                                        fast, slow,
                                        "{stem} {up:?} {cards:?} {from_split} {doubles} {mask}"
                                    );
                                    assert!(!asked_stand.get(), "standing is not asked");
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// Infinite-deck figures land where the game's rules put them: a standard game near
    /// 99.5 %, Caribbean 21 (ties lose, ace one) well below.
    #[test]
    fn infinite_deck_figures_are_plausible() {
        for stem in ["ultimate", "deluxe", "infor6"] {
            let r = Strategy::derive(&variant(stem)).infinite_deck_rtp;
            assert!((0.99..1.0).contains(&r), "{stem}: {r}");
        }
        let c21 = Strategy::derive(&variant("caribbean21")).infinite_deck_rtp;
        assert!(c21 < 0.99, "caribbean21: {c21}");
    }
}
