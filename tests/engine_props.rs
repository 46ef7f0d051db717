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
use croupier::engine::variant::NaturalTakes;
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
type Ledger = BTreeMap<(u8, String), Amount>;

struct Session {
    engine: Engine,
    log: Vec<Input>,
    events: Vec<Event>,
    settled: Vec<RoundResult>,
    /// Cards dealt into the current round, from the events.
    round_cards: Vec<Card>,
    staked: Ledger,
    /// Each seat's main bet this round.
    main_of: BTreeMap<u8, Amount>,
    accepted_cards: usize,
    placed_cards: usize,
}

impl Session {
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
                for b in bets {
                    self.main_of.insert(b.seat, b.main);
                    self.staked.insert((b.seat, "main".into()), b.main);
                    for (name, amount) in &b.side {
                        self.staked.insert((b.seat, name.clone()), *amount);
                    }
                }
            }
            _ => {}
        }
        for e in &events {
            match e {
                Event::Decided { seat, action, .. } => {
                    let main = self.main_of[seat];
                    match action {
                        Action::Double | Action::Split => {
                            *self.staked.entry((*seat, "main".into())).or_default() += main;
                        }
                        Action::Insurance => {
                            let cost = self.engine.variant().insurance.cost.fraction_of(main);
                            self.staked.insert((*seat, "insurance".into()), cost);
                        }
                        _ => {}
                    }
                }
                Event::CardDealt { card, to } => {
                    assert_ne!(*to, Place::Burn);
                    self.placed_cards += 1;
                    self.round_cards.push(*card);
                }
                Event::Burned { .. } => self.placed_cards += 1,
                Event::RoundSettled(r) => {
                    let mut held: Vec<Card> = r.dealer_cards.clone();
                    for h in &r.hands {
                        held.extend(&h.cards);
                    }
                    let mut dealt = std::mem::take(&mut self.round_cards);
                    held.sort();
                    dealt.sort();
                    assert_eq!(
                        held, dealt,
                        "round {} holds other cards than were dealt",
                        r.round
                    );
                    check_money(
                        self.engine.variant(),
                        r,
                        &std::mem::take(&mut self.staked),
                        &self.main_of,
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

fn check_money(v: &Variant, r: &RoundResult, ledger: &Ledger, main_of: &BTreeMap<u8, Amount>) {
    let mut from_result: Ledger = BTreeMap::new();
    for b in &r.bets {
        *from_result
            .entry((b.seat, b.kind.name().to_string()))
            .or_default() += b.staked;
        assert!(b.returned >= 0);
    }
    assert_eq!(
        &from_result, ledger,
        "staked per bet differs from what was put on the table"
    );
    for b in r.bets.iter().filter(|b| b.kind == BetKind::Main) {
        let hands: Vec<_> = r.hands.iter().filter(|h| h.seat == b.seat).collect();
        assert_eq!(hands.iter().map(|h| h.staked).sum::<Amount>(), b.staked);
        assert_eq!(hands.iter().map(|h| h.returned).sum::<Amount>(), b.returned);
    }
    for h in &r.hands {
        let main = main_of[&h.seat];
        let want = match h.outcome {
            Outcome::Bust => 0,
            Outcome::Lose => match v.settlement.dealer_natural_takes {
                NaturalTakes::AllBets => 0,
                NaturalTakes::OriginalBetsOnly if r.dealer_natural && h.hand == 0 => {
                    h.staked - main
                }
                NaturalTakes::OriginalBetsOnly if r.dealer_natural => h.staked,
                NaturalTakes::OriginalBetsOnly => 0,
            },
            Outcome::Push => h.staked,
            Outcome::Win | Outcome::Charlie | Outcome::EvenMoney => 2 * h.staked,
            Outcome::Blackjack | Outcome::Caribbean21 => v.hand.natural_pays.returns(h.staked),
            Outcome::Surrender => main / 2,
        };
        assert_eq!(h.returned, want, "hand {h:?}");
    }
}

/// Plays `rounds` rounds choosing only what the engine expects, at random.
fn play(variant_index: usize, seed: u64, rounds: usize) -> Session {
    let v = variant(variant_index);
    let mut sim = TableSim::new(Arc::clone(&v), seed, Style::Random);
    let mut s = Session {
        engine: Engine::new(v),
        log: Vec::new(),
        events: Vec::new(),
        settled: Vec::new(),
        round_cards: Vec::new(),
        staked: BTreeMap::new(),
        main_of: BTreeMap::new(),
        accepted_cards: 0,
        placed_cards: 0,
    };
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
    fn legal_sessions_conserve_cards_and_money(variant in 0usize..4, seed in any::<u64>(), rounds in 1usize..8) {
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
    fn arbitrary_inputs_never_panic_and_rejections_change_nothing(
        variant in 0usize..4,
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
    ]
}

#[test]
fn rounding_is_towards_the_house() {
    assert_eq!(Pay::Odds { win: 3, per: 2 }.returns(15), 37);
}
