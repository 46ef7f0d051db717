//! Property tests of the rules engine over random shoes and random decisions.
//!
//! - A driver that only sends what the engine says it expects is never refused.
//! - No card is lost or assigned twice: every accepted card lands in exactly one place, and
//!   each settled round holds exactly the cards dealt into it.
//! - The money identity: what the driver put on the table equals what settlement says was
//!   staked, and every return matches its outcome.
//! - Replaying an accepted input log gives the identical state and events.
//! - Arbitrary input sequences never panic, and a rejected input changes nothing.

use croupier::cards::Card;
use croupier::engine::variant::{DealMode, NaturalTakes};
use croupier::engine::BehindBet;
use croupier::engine::{
    variant::BUILT_IN, Action, BetKind, Engine, Event, Input, Outcome, Place, RoundResult,
    SeatBets, Variant,
};
use croupier::money::{Amount, Pay};
use croupier::sim::{Style, TableSim};
use proptest::prelude::*;
use std::collections::BTreeMap;
use std::sync::Arc;

fn variant(i: usize) -> Arc<Variant> {
    let (stem, _) = BUILT_IN[i % BUILT_IN.len()];
    Arc::new(Variant::built_in(stem).expect("shipped").expect("valid"))
}

/// What the driver itself put on the table, per seat and bet kind.
type Ledger = BTreeMap<(Option<String>, u8, String), Amount>;

struct Session {
    engine: Engine,
    log: Vec<Input>,
    events: Vec<Event>,
    settled: Vec<RoundResult>,
    /// Cards dealt into the current round, from the events.
    round_cards: Vec<(Place, Card)>,
    /// Common draw: cards that went to every hand that asked, in order.
    round_drawn: Vec<Card>,
    /// Common draw: cards burned this round.
    round_burned: Vec<Card>,
    staked: Ledger,
    /// Each seat's (or player box's, or bet behind's) main bet this round.
    main_of: BTreeMap<(Option<String>, u8), Amount>,
    /// Bets behind each seat this round.
    behind_of: BTreeMap<u8, Vec<BehindBet>>,
    accepted_cards: usize,
    placed_cards: usize,
}

impl Session {
    fn record_bets(&mut self, player: Option<String>, bets: &[SeatBets]) {
        for b in bets {
            self.main_of.insert((player.clone(), b.seat), b.main);
            if b.main > 0 {
                self.staked
                    .insert((player.clone(), b.seat, "main".into()), b.main);
            }
            for (name, amount) in &b.side {
                let name = self.engine.variant().side_bets
                    [self.engine.variant().side_bet_index(name).expect("known")]
                .name
                .clone();
                self.staked.insert((player.clone(), b.seat, name), *amount);
            }
        }
    }

    fn record_decision(&mut self, player: Option<String>, seat: u8, action: Action) {
        let main = self.main_of[&(player.clone(), seat)];
        match action {
            Action::Double | Action::Split => {
                *self
                    .staked
                    .entry((player, seat, "main".into()))
                    .or_default() += main;
            }
            Action::Insurance => {
                let cost = self.engine.variant().insurance.cost.fraction_of(main);
                self.staked.insert((player, seat, "insurance".into()), cost);
            }
            _ => {}
        }
    }

    /// Bets behind a seat follow its doubles and splits when they chose to.
    fn record_followers(&mut self, seat: u8, hand: u8, action: Action) {
        for bb in self.behind_of.get(&seat).cloned().unwrap_or_default() {
            let follows = match action {
                Action::Double => bb.follow_double && (hand == 0 || bb.follow_split),
                Action::Split => bb.follow_split,
                _ => false,
            };
            if follows {
                *self
                    .staked
                    .entry((Some(bb.player.clone()), seat, "main".into()))
                    .or_default() += bb.main;
            }
        }
    }

    fn send(&mut self, input: Input) {
        let mut events = Vec::new();
        let before = self.engine.clone();
        if let Err(r) = self.engine.apply(&input, &mut events) {
            panic!(
                "legal input {input:?} refused: {r}\nexpected: {}\nlog: {:?}",
                before.expectation(),
                self.log
            );
        }
        match &input {
            Input::Card(_) => self.accepted_cards += 1,
            Input::Bets(bets) => {
                self.main_of.clear();
                self.behind_of.clear();
                self.record_bets(None, bets);
                for b in bets {
                    for bb in &b.behind {
                        let as_seat = SeatBets {
                            seat: b.seat,
                            main: bb.main,
                            side: bb.side.clone(),
                            ..SeatBets::default()
                        };
                        self.record_bets(Some(bb.player.clone()), &[as_seat]);
                    }
                    self.behind_of.insert(b.seat, b.behind.clone());
                }
            }
            Input::PlayerBets(players) => {
                self.main_of.clear();
                for p in players {
                    self.record_bets(Some(p.player.clone()), &p.boxes);
                }
            }
            _ => {}
        }
        for e in &events {
            match e {
                Event::Decided { seat, hand, action } => {
                    self.record_decision(None, *seat, *action);
                    self.record_followers(*seat, *hand, *action);
                }
                Event::PlayerDecided {
                    player,
                    seat,
                    action,
                    ..
                } => self.record_decision(Some(player.to_string()), *seat, *action),
                Event::CardDrawn { card, hands } => {
                    assert!(*hands > 0);
                    self.placed_cards += 1;
                    self.round_drawn.push(*card);
                }
                Event::CardDealt { card, to } => {
                    assert_ne!(*to, Place::Burn);
                    self.placed_cards += 1;
                    self.round_cards.push((*to, *card));
                }
                Event::Burned { card } => {
                    self.placed_cards += 1;
                    if self.engine.variant().deal.mode == DealMode::CommonDraw {
                        self.round_burned.push(*card);
                    }
                }
                Event::RoundSettled(r) => {
                    let dealt = std::mem::take(&mut self.round_cards);
                    let drawn = std::mem::take(&mut self.round_drawn);
                    let burned = std::mem::take(&mut self.round_burned);
                    if self.engine.variant().deal.mode == DealMode::Seats {
                        // Every card dealt into the round is held by exactly one hand.
                        let mut held: Vec<Card> = r.dealer_cards.clone();
                        for h in &r.hands {
                            held.extend(&h.cards);
                        }
                        let mut dealt: Vec<Card> = dealt.iter().map(|(_, c)| *c).collect();
                        held.sort();
                        dealt.sort();
                        assert_eq!(
                            held, dealt,
                            "round {} holds other cards than were dealt",
                            r.round
                        );
                    } else {
                        // Every hand starts with its box's two cards, then takes drawn cards in
                        // the order they came; burned cards are in no hand.
                        assert_eq!(burned, r.burned);
                        let dealer: Vec<Card> = dealt
                            .iter()
                            .filter(|(p, _)| *p == Place::Dealer)
                            .map(|(_, c)| *c)
                            .collect();
                        assert!(r.dealer_cards.starts_with(&dealer));
                        for h in &r.hands {
                            let box_cards: Vec<Card> = dealt
                                .iter()
                                .filter(|(p, _)| matches!(p, Place::Hand { seat, .. } if *seat == h.seat))
                                .map(|(_, c)| *c)
                                .collect();
                            let (first, rest) = h.cards.split_at(h.cards.len().min(2));
                            if h.hand == 0 {
                                assert_eq!(first[0], box_cards[0], "{h:?}");
                            }
                            assert!(box_cards.contains(&first[0]) || drawn.contains(&first[0]));
                            let mut it = drawn.iter();
                            for c in rest {
                                assert!(it.any(|d| d == c), "{h:?} took a card out of order");
                            }
                        }
                    }
                    check_money(
                        self.engine.variant(),
                        r,
                        &std::mem::take(&mut self.staked),
                        &self.main_of,
                        &self.behind_of,
                    );
                    self.settled.push((**r).clone());
                }
                _ => {}
            }
        }
        assert_eq!(
            self.accepted_cards, self.placed_cards,
            "a card was lost or placed twice"
        );
        self.events.extend(events);
        self.log.push(input);
    }
}

fn check_money(
    v: &Variant,
    r: &RoundResult,
    ledger: &Ledger,
    main_of: &BTreeMap<(Option<String>, u8), Amount>,
    behind_of: &BTreeMap<u8, Vec<BehindBet>>,
) {
    let mut from_result: Ledger = BTreeMap::new();
    for b in &r.bets {
        *from_result
            .entry((
                b.player.as_deref().map(str::to_string),
                b.seat,
                b.kind.name().to_string(),
            ))
            .or_default() += b.staked;
        assert!(b.returned >= 0);
    }
    assert_eq!(
        &from_result, ledger,
        "staked per bet differs from what was put on the table"
    );
    for b in r.bets.iter().filter(|b| b.kind == BetKind::Main) {
        let hands: Vec<_> = r
            .hands
            .iter()
            .filter(|h| h.seat == b.seat && h.player == b.player)
            .collect();
        if hands.is_empty() && b.player.is_some() && v.deal.mode == DealMode::Seats {
            // A bet behind a seat: the seated hands' outcomes at its own stakes.
            let player = b.player.as_deref().unwrap_or_default();
            let bb = behind_of[&b.seat]
                .iter()
                .find(|x| x.player == player)
                .expect("placed");
            let mut staked = 0;
            let mut returned = 0;
            for h in r
                .hands
                .iter()
                .filter(|h| h.seat == b.seat && h.player.is_none())
            {
                if h.hand > 0 && !bb.follow_split {
                    continue;
                }
                let stake = bb.main * if h.doubled && bb.follow_double { 2 } else { 1 };
                staked += stake;
                returned += expected_return(v, r, h.outcome, stake, bb.main, h.hand);
            }
            assert_eq!((b.staked, b.returned), (staked, returned), "{b:?}");
            continue;
        }
        assert_eq!(hands.iter().map(|h| h.staked).sum::<Amount>(), b.staked);
        assert_eq!(hands.iter().map(|h| h.returned).sum::<Amount>(), b.returned);
    }
    for h in &r.hands {
        let main = main_of[&(h.player.as_deref().map(str::to_string), h.seat)];
        let want = expected_return(v, r, h.outcome, h.staked, main, h.hand);
        assert_eq!(h.returned, want, "hand {h:?}");
    }
}

/// What a hand with this outcome returns on `stake`, `main` being its seat's original bet.
fn expected_return(
    v: &Variant,
    r: &RoundResult,
    outcome: Outcome,
    stake: Amount,
    main: Amount,
    hand: u8,
) -> Amount {
    match outcome {
        Outcome::Bust => 0,
        Outcome::Lose => match v.settlement.dealer_natural_takes {
            NaturalTakes::AllBets => 0,
            NaturalTakes::OriginalBetsOnly if r.dealer_natural && hand == 0 => stake - main,
            NaturalTakes::OriginalBetsOnly if r.dealer_natural => stake,
            NaturalTakes::OriginalBetsOnly => 0,
        },
        Outcome::Push => stake,
        Outcome::Win | Outcome::Charlie | Outcome::EvenMoney => 2 * stake,
        Outcome::Blackjack | Outcome::Caribbean21 => v.hand.natural_pays.returns(stake),
        Outcome::Surrender => main / 2,
        Outcome::Cancelled => stake,
    }
}

/// A session on a fresh engine.
fn session(v: Arc<Variant>) -> Session {
    Session {
        engine: Engine::new(v),
        log: Vec::new(),
        events: Vec::new(),
        settled: Vec::new(),
        round_cards: Vec::new(),
        round_drawn: Vec::new(),
        round_burned: Vec::new(),
        staked: BTreeMap::new(),
        main_of: BTreeMap::new(),
        behind_of: BTreeMap::new(),
        accepted_cards: 0,
        placed_cards: 0,
    }
}

/// Plays `rounds` rounds choosing only what the engine expects, at random.
fn play(variant_index: usize, seed: u64, rounds: usize) -> Session {
    let v = variant(variant_index);
    let mut sim = TableSim::new(Arc::clone(&v), seed, Style::Random);
    let mut s = session(v);
    for _ in 0..rounds * 60 {
        if s.settled.len() >= rounds {
            break;
        }
        let input = sim.next_input(&s.engine);
        s.send(input);
    }
    assert!(
        s.settled.len() >= rounds,
        "session stalled at {}",
        s.engine.expectation()
    );
    s
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn legal_sessions_conserve_cards_and_money(variant in 0usize..5, seed in any::<u64>(), rounds in 1usize..8) {
        let s = play(variant, seed, rounds);
        // Determinism: the same log replays to the same state and events.
        let mut again = Engine::new(variant_arc(&s));
        let mut events = Vec::new();
        for input in &s.log {
            again.apply(input, &mut events).expect("replayed input accepted");
        }
        prop_assert!(again == s.engine);
        prop_assert_eq!(events, s.events);
    }

    #[test]
    fn cancelling_refunds_every_stake_exactly_once(variant in 0usize..5, seed in any::<u64>(), cut in 1usize..90) {
        let v = self::variant(variant);
        let mut sim = TableSim::new(Arc::clone(&v), seed, Style::Random);
        let mut s = session(v);
        for _ in 0..cut {
            let input = sim.next_input(&s.engine);
            s.send(input);
        }
        let opened = s.log.iter().any(|i| matches!(i, Input::Bets(_) | Input::PlayerBets(_)));
        let in_play = !s.staked.is_empty();
        let mut events = Vec::new();
        let before = s.engine.clone();
        let cancelled = s.engine.apply(&Input::CancelRound, &mut events);
        prop_assert_eq!(cancelled.is_ok(), opened, "{:?}", cancelled);
        if !opened {
            return Ok(());
        }
        let r = events.iter().find_map(|e| match e {
            Event::RoundSettled(r) => Some(r.clone()),
            _ => None,
        }).expect("a cancellation settles");
        prop_assert!(r.cancelled);
        prop_assert!(r.hands.iter().all(|h| h.outcome == Outcome::Cancelled && h.returned == h.staked));
        prop_assert!(r.bets.iter().all(|b| b.returned == b.staked));
        // What comes back is exactly what was on the table: the driver's own ledger while the
        // round is in play, the settlement's stakes once it had settled.
        let mut staked: Ledger = BTreeMap::new();
        for b in &r.bets {
            *staked.entry((b.player.as_deref().map(str::to_string), b.seat, b.kind.name().to_string())).or_default() += b.staked;
        }
        let want: Ledger = if in_play {
            s.staked.clone()
        } else {
            let last = s.settled.last().expect("a settled round");
            prop_assert_eq!(last.round, r.round);
            let mut l = BTreeMap::new();
            for b in &last.bets {
                *l.entry((b.player.as_deref().map(str::to_string), b.seat, b.kind.name().to_string())).or_default() += b.staked;
            }
            l
        };
        prop_assert_eq!(staked, want);
        // Once only.
        let after = s.engine.clone();
        prop_assert!(s.engine.apply(&Input::CancelRound, &mut Vec::new()).is_err());
        prop_assert!(s.engine == after);
        prop_assert!(before != after);
        // The table plays on: the next rounds are legal and settle.
        for _ in 0..200 {
            let input = sim.next_input(&s.engine);
            let mut ev = Vec::new();
            s.engine.apply(&input, &mut ev).expect("legal input after a cancellation");
            if ev.iter().any(|e| matches!(e, Event::RoundSettled(_))) {
                break;
            }
        }
    }

    #[test]
    fn arbitrary_inputs_never_panic_and_rejections_change_nothing(
        variant in 0usize..5,
        inputs in proptest::collection::vec(arbitrary_input(), 0..120),
    ) {
        let mut engine = Engine::new(self::variant(variant));
        let mut events = Vec::new();
        for input in &inputs {
            let before = engine.clone();
            let mark = events.len();
            if engine.apply(input, &mut events).is_err() {
                prop_assert!(engine == before, "rejected {input:?} changed the state");
                prop_assert_eq!(events.len(), mark);
            }
            let _ = engine.expectation().to_string();
        }
    }
}

fn variant_arc(s: &Session) -> Arc<Variant> {
    Arc::new(s.engine.variant().clone())
}

fn arbitrary_input() -> impl Strategy<Value = Input> {
    let card = (0usize..52).prop_map(|i| Input::Card(Card::from_index(i).expect("index")));
    let action = proptest::sample::select(Action::ALL.to_vec());
    let decision = (0u8..9, action).prop_map(|(seat, action)| Input::Decision { seat, action });
    let side = proptest::sample::select(vec!["21+3", "pair", "in_for_6", "bogus"]);
    let bet = (
        0u8..9,
        -5i64..2_000,
        proptest::option::of((side, 0i64..300)),
    )
        .prop_map(|(seat, main, side)| SeatBets {
            seat,
            main,
            side: side.map(|(n, a)| (n.to_string(), a)).into_iter().collect(),
            ..SeatBets::default()
        });
    let bets = proptest::collection::vec(bet, 0..4).prop_map(Input::Bets);
    let bonus = (
        0u8..4,
        proptest::sample::select(vec![0u32, 30, 60, 80, 100, 150, 300, 500, 7]),
    )
        .prop_map(|(seat, multiplier)| Input::Bonus { seat, multiplier });
    prop_oneof![
        8 => card,
        4 => decision,
        2 => bets,
        1 => Just(Input::CutCard),
        1 => Just(Input::Shuffle),
        1 => bonus,
        1 => (0usize..52).prop_map(|i| Input::Void(Card::from_index(i).expect("index"))),
        1 => Just(Input::CancelRound),
    ]
}

#[test]
fn rounding_is_towards_the_house() {
    assert_eq!(Pay::Odds { win: 3, per: 2 }.returns(15), 37);
}
