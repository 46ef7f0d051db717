//! The engine step by step: what it expects after every input (what the dealer panel will
//! show), and the lifecycle of the shoe.

use crate::common;

use common::{bets, seat_bets};
use croupier::engine::{variant::Variant, Action, Code, Engine, Event, Expectation, Input, Place};
use std::sync::Arc;

fn engine(stem: &str) -> Engine {
    Engine::new(Arc::new(
        Variant::built_in(stem).expect("shipped").expect("valid"),
    ))
}

fn card(code: &str) -> Input {
    Input::Card(code.parse().expect("card"))
}

fn decide(seat: u8, action: Action) -> Input {
    Input::Decision { seat, action }
}

fn apply(e: &mut Engine, input: Input) -> Vec<Event> {
    let mut events = Vec::new();
    e.apply(&input, &mut events)
        .unwrap_or_else(|r| panic!("{input:?} refused: {r}"));
    events
}

fn expect_text(e: &Engine) -> String {
    e.expectation().to_string()
}

#[test]
fn deluxe_round_expectations_follow_the_deal_order() {
    let mut e = engine("deluxe");
    assert_eq!(e.expectation(), Expectation::Bets);
    apply(&mut e, bets(&[(2, 200), (5, 100)]));
    let order = [
        ("9H", Place::Hand { seat: 2, hand: 0 }),
        ("QS", Place::Hand { seat: 5, hand: 0 }),
        ("AC", Place::Dealer),
        ("2D", Place::Hand { seat: 2, hand: 0 }),
        ("QD", Place::Hand { seat: 5, hand: 0 }),
        ("6S", Place::Dealer),
    ];
    for (code, place) in order {
        assert_eq!(
            e.expectation(),
            Expectation::DealCard(place),
            "before {code}"
        );
        apply(&mut e, card(code));
    }
    assert_eq!(
        e.expectation(),
        Expectation::InsuranceAnswers {
            seats: vec![2, 5],
            behind: vec![]
        }
    );
    assert_eq!(expect_text(&e), "insurance answers from seat(s) 2, 5");
    apply(&mut e, decide(2, Action::NoInsurance));
    let events = apply(&mut e, decide(5, Action::NoInsurance));
    assert!(events.contains(&Event::InsuranceClosed));
    assert!(events.contains(&Event::DealerPeeked { natural: false }));
    assert_eq!(
        e.expectation(),
        Expectation::Decision {
            seat: 2,
            hand: 0,
            allowed: vec![Action::Stand, Action::AutoPlay, Action::Double]
        },
        "no surrender against an ace, no split of 9-2"
    );
    apply(&mut e, decide(2, Action::Double));
    assert_eq!(expect_text(&e), "card for seat 2, hand 1");
    apply(&mut e, card("9C"));
    assert_eq!(
        e.expectation(),
        Expectation::Decision {
            seat: 5,
            hand: 0,
            allowed: vec![
                Action::Stand,
                Action::AutoPlay,
                Action::Double,
                Action::Split
            ]
        }
    );
    let events = apply(&mut e, decide(5, Action::Stand));
    assert!(
        matches!(events.last(), Some(Event::RoundSettled(_))),
        "dealer stands on soft 17: no draw"
    );
    assert_eq!(e.expectation(), Expectation::Bets);
}

#[test]
fn deluxe_shoe_lifecycle_burn_cut_and_finish() {
    let mut e = engine("deluxe");
    apply(&mut e, Input::Shuffle);
    assert_eq!(e.expectation(), Expectation::RevealCard);
    let mut events = Vec::new();
    let r = e
        .apply(&bets(&[(1, 100)]), &mut events)
        .expect_err("burn first");
    assert_eq!(r.code, Code::BurnIncomplete);
    apply(&mut e, card("3H")); // revealed 3: burn three more
    assert_eq!(e.expectation(), Expectation::BurnCards(3));
    apply(&mut e, card("KS"));
    apply(&mut e, card("KD"));
    let events = apply(&mut e, card("KC"));
    assert_eq!(events.last(), Some(&Event::ShoeReady));
    assert_eq!(e.shoe().burned(), 4);
    apply(&mut e, bets(&[(1, 100)]));
    apply(&mut e, card("TS"));
    apply(&mut e, Input::CutCard); // mid-round: this round is the last
    apply(&mut e, card("TH"));
    apply(&mut e, card("9S"));
    apply(&mut e, card("7C")); // dealer 17 after the peek: stands
    let events = apply(&mut e, decide(1, Action::Stand));
    assert!(events.contains(&Event::ShoeFinished), "{events:?}");
    assert_eq!(e.expectation(), Expectation::Shuffle);
    let r = e
        .apply(&bets(&[(1, 100)]), &mut Vec::new())
        .expect_err("shoe finished");
    assert_eq!(r.code, Code::ShoeFinished);
    let r = e
        .apply(&card("2C"), &mut Vec::new())
        .expect_err("shoe finished");
    assert_eq!(r.code, Code::ShoeFinished);
}

#[test]
fn split_hands_get_their_second_card_in_turn() {
    let mut e = engine("infor6");
    apply(&mut e, bets(&[(1, 100)]));
    for c in ["8S", "5D", "8H", "9C"] {
        apply(&mut e, card(c));
    }
    apply(&mut e, decide(1, Action::Split));
    assert_eq!(expect_text(&e), "card for seat 1, hand 1");
    let r = e
        .apply(&decide(1, Action::Stand), &mut Vec::new())
        .expect_err("card first");
    assert_eq!(r.code, Code::ActionNotAllowed);
    apply(&mut e, card("3C"));
    assert!(matches!(
        e.expectation(),
        Expectation::Decision {
            seat: 1,
            hand: 0,
            ..
        }
    ));
    apply(&mut e, decide(1, Action::Stand));
    assert_eq!(expect_text(&e), "card for seat 1, hand 2");
    apply(&mut e, card("8D"));
    // 8-8 again: a re-split is allowed up to four hands.
    let Expectation::Decision { allowed, .. } = e.expectation() else {
        panic!("decision expected, got {}", e.expectation());
    };
    assert!(allowed.contains(&Action::Split));
}

#[test]
fn no_peek_game_closes_insurance_with_the_first_decision() {
    let mut e = engine("ultimate");
    apply(&mut e, bets(&[(1, 100), (2, 100)]));
    for c in ["TS", "9D", "AC", "7H", "8D", "KC"] {
        apply(&mut e, card(c));
    }
    assert_eq!(
        e.expectation(),
        Expectation::InsuranceAnswers {
            seats: vec![1, 2],
            behind: vec![]
        }
    );
    let r = e
        .apply(&decide(2, Action::Stand), &mut Vec::new())
        .expect_err("seat 1 first");
    assert_eq!(r.code, Code::NotYourTurn);
    let events = apply(&mut e, decide(1, Action::Stand));
    assert_eq!(events.first(), Some(&Event::InsuranceClosed));
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::DealerPeeked { .. })),
        "no peek in Ultimate"
    );
}

#[test]
fn peek_game_refuses_to_close_insurance_on_a_dealer_natural() {
    let mut e = engine("infor6");
    apply(&mut e, bets(&[(1, 100), (2, 100)]));
    for c in ["TS", "9D", "AC", "7H", "8D", "KC"] {
        apply(&mut e, card(c));
    }
    let before = e.clone();
    let r = e
        .apply(&card("5S"), &mut Vec::new())
        .expect_err("dealer has blackjack");
    assert_eq!(r.code, Code::CardNotExpected);
    assert!(e == before);
    apply(&mut e, decide(1, Action::Insurance));
    let events = apply(&mut e, decide(2, Action::NoInsurance));
    assert!(events.contains(&Event::DealerPeeked { natural: true }));
    let Some(Event::RoundSettled(result)) = events.last() else {
        panic!("the peek ends the round: {events:?}");
    };
    let insurance = result
        .bets
        .iter()
        .find(|b| b.seat == 1 && b.kind.name() == "insurance")
        .expect("insurance bet");
    assert_eq!((insurance.staked, insurance.returned), (50, 150));
}

#[test]
fn caribbean_dealer_draws_after_the_players() {
    let mut e = engine("caribbean21");
    apply(&mut e, bets(&[(1, 100)]));
    apply(&mut e, card("9S"));
    apply(&mut e, card("5D"));
    assert_eq!(
        e.expectation(),
        Expectation::DealCard(Place::Hand { seat: 1, hand: 0 })
    );
    apply(&mut e, card("9H"));
    assert!(matches!(
        e.expectation(),
        Expectation::Decision { seat: 1, .. }
    ));
    apply(&mut e, decide(1, Action::Stand));
    assert_eq!(e.expectation(), Expectation::DealerCard);
}

#[test]
fn inputs_and_events_survive_json_for_the_event_log() {
    use croupier::sim::{Style, TableSim};
    for (stem, _) in croupier::engine::variant::BUILT_IN {
        let v = Arc::new(Variant::built_in(stem).expect("shipped").expect("valid"));
        let mut live = Engine::new(Arc::clone(&v));
        let mut sim = TableSim::new(Arc::clone(&v), 99, Style::Random);
        let mut log = Vec::new();
        let mut events = Vec::new();
        for _ in 0..300 {
            let input = sim.next_input(&live);
            live.apply(&input, &mut events).expect("legal");
            log.push(serde_json::to_string(&input).expect("serialise input"));
        }
        let text = serde_json::to_string(&events).expect("serialise events");
        let back: Vec<Event> = serde_json::from_str(&text).expect("events read back");
        assert_eq!(back, events);
        let mut recovered = Engine::new(v);
        for line in &log {
            let input: Input = serde_json::from_str(line).expect("input reads back");
            recovered.apply(&input, &mut Vec::new()).expect("replays");
        }
        assert!(recovered == live, "{stem}: recovery by replay differs");
    }
}

#[test]
fn a_common_draws_specials_stay_staked_per_player_box_through_the_round() {
    let mut e = engine("multihand");
    let mut mia = seat_bets(&[(1, 100), (3, 300)]);
    mia[0].side = vec![("21+3".into(), 20), ("lucky_ladies".into(), 10)];
    apply(
        &mut e,
        Input::PlayerBets(vec![
            croupier::engine::PlayerBets {
                player: "mia".into(),
                boxes: mia,
            },
            croupier::engine::PlayerBets {
                player: "max".into(),
                boxes: seat_bets(&[(1, 50)]),
            },
        ]),
    );
    let expected = vec![("mia".to_string(), 1u8, 30i64)];
    assert_eq!(e.player_specials(), expected, "staked once the round opens");
    // Boxes 1, 2, 3, the dealer's one card, then boxes 1, 2, 3 again: the 21+3 has its
    // three cards (box 1's two and the dealer's) and is decided.
    for c in ["TS", "2C", "5H", "9D", "6S", "3C", "6D"] {
        apply(&mut e, card(c));
    }
    assert_eq!(e.player_specials(), expected, "still staked once decided");
}

#[test]
fn a_common_draws_player_hands_hold_the_box_cards_then_what_each_drew() {
    let mut e = engine("multihand");
    let boxes = |player: &str, on: &[(u8, i64)]| croupier::engine::PlayerBets {
        player: player.into(),
        boxes: seat_bets(on),
    };
    apply(
        &mut e,
        Input::PlayerBets(vec![
            boxes("mia", &[(1, 100), (3, 300)]),
            boxes("max", &[(1, 50)]),
        ]),
    );
    // Boxes 1, 2, 3, the dealer's one card, then boxes 1, 2, 3 again.
    for c in ["TS", "2C", "5H", "9D", "6S", "3C", "6D"] {
        apply(&mut e, card(c));
    }
    let hands = e.player_hands();
    let of = |p: &str, seat: u8| {
        hands
            .iter()
            .find(|h| h.player == p && h.seat == seat)
            .map(|h| {
                (
                    h.cards.iter().map(|c| c.to_string()).collect::<Vec<_>>(),
                    h.total,
                    h.stake,
                )
            })
    };
    assert_eq!(
        of("mia", 1),
        Some((vec!["TS".into(), "6S".into()], 16, 100))
    );
    assert_eq!(
        of("mia", 3),
        Some((vec!["5H".into(), "6D".into()], 11, 300))
    );
    assert_eq!(of("max", 1), Some((vec!["TS".into(), "6S".into()], 16, 50)));
    assert_eq!(of("mia", 2), None, "no bet on box 2");
    // Mia hits box 1, everyone else stands: the next card goes to Mia's box 1 only.
    apply(
        &mut e,
        Input::PlayerDecision {
            player: "mia".into(),
            seat: 1,
            action: Action::Hit,
        },
    );
    apply(
        &mut e,
        Input::PlayerDecision {
            player: "mia".into(),
            seat: 3,
            action: Action::Stand,
        },
    );
    apply(
        &mut e,
        Input::PlayerDecision {
            player: "max".into(),
            seat: 1,
            action: Action::Stand,
        },
    );
    apply(&mut e, card("4C"));
    let hands = e.player_hands();
    let mia1 = hands
        .iter()
        .find(|h| h.player == "mia" && h.seat == 1)
        .expect("mia 1");
    assert_eq!(mia1.total, 20);
    let max1 = hands
        .iter()
        .find(|h| h.player == "max" && h.seat == 1)
        .expect("max 1");
    assert_eq!((max1.cards.len(), max1.live), (2, false));
}

/// `Engine::repeat_bets_to` is `Bets` with the bets the last round opened with: at every
/// point of a session — between rounds of every shape, mid-round, at a finished shoe — it
/// gives the same result, code, events and state as sending those bets; before any round
/// has been bet it is refused, changing nothing; a common draw refuses it.
#[test]
fn repeated_bets_are_the_last_rounds_bets_sent_again() {
    use croupier::sim::{Style, TableSim};
    for stem in ["ultimate", "deluxe", "caribbean21", "infor6"] {
        let v = Arc::new(Variant::built_in(stem).expect("shipped").expect("valid"));
        let mut live = Engine::new(Arc::clone(&v));
        let fresh = live.clone();
        let mut first = live.clone();
        let refused = first
            .repeat_bets_to(&mut Vec::new())
            .expect_err("nothing to repeat yet");
        assert_eq!(refused.code, Code::InvalidBet, "{stem}");
        assert!(
            first == fresh,
            "{stem}: a refused repeat changed the engine"
        );
        let mut sim = TableSim::new(Arc::clone(&v), 17, Style::Random);
        let mut last = None;
        let (mut repeated, mut refusals) = (0, 0);
        while repeated < 150 {
            if let Some(bets) = &last {
                let (mut sent, mut repeat) = (live.clone(), live.clone());
                let (mut a, mut b) = (Vec::new(), Vec::new());
                let by_bets = sent.apply(&Input::Bets(Vec::clone(bets)), &mut a);
                let by_repeat = repeat.repeat_bets_to(&mut b);
                assert_eq!(
                    by_bets.as_ref().map_err(|r| r.code),
                    by_repeat.as_ref().map_err(|r| r.code),
                    "{stem}"
                );
                assert_eq!(a, b, "{stem}");
                assert!(sent == repeat, "{stem}: a repeat left another state");
                match by_repeat {
                    Ok(()) => repeated += 1,
                    Err(_) => {
                        refusals += 1;
                        assert!(
                            repeat == live,
                            "{stem}: a refused repeat changed the engine"
                        );
                    }
                }
            }
            let input = sim.next_input(&live);
            if let Input::Bets(bets) = &input {
                last = Some(bets.clone());
            }
            live.apply(&input, &mut Vec::new())
                .unwrap_or_else(|r| panic!("{stem}: {input:?} refused: {r}"));
        }
        assert!(refusals > repeated, "{stem}: mid-round repeats were tried");
    }
    let mut common = engine("multihand");
    let refused = common
        .repeat_bets_to(&mut Vec::new())
        .expect_err("a common draw's bets come from players");
    assert_eq!(refused.code, Code::ActionNotAllowed);
}

/// A scripted shoe for `Engine::deal_from`: what it hands out, in order, and how much of it
/// was taken.
struct Scripted {
    items: Vec<croupier::engine::Dealt>,
    taken: usize,
}

impl croupier::engine::CardSource for Scripted {
    fn next_dealt(&mut self) -> Option<croupier::engine::Dealt> {
        let item = self.items.get(self.taken).copied();
        self.taken += usize::from(item.is_some());
        item
    }
}

/// `Engine::deal_from` is `apply` of each card (and the cut card) for as long as `step()`
/// says a card is due: at every point of random sessions in five variants (burns, every
/// shape of round, a cut card, cards the shoe no longer holds) it takes the same items out
/// of the shoe, stops at the same step, refuses the same input with the same rejection, and
/// leaves the same state and events; with the shoe empty it stops at `Step::Card`. And
/// `Engine::hit_from` is `apply` of the shoe's next item, in any phase.
#[test]
fn dealing_from_a_shoe_is_applying_each_card_while_one_is_due() {
    use croupier::engine::{Dealt, Step};
    use croupier::sim::{Rng, Style, TableSim};
    let (mut stops, mut refused, mut dry, mut hits_refused) = (0, 0, 0, 0);
    for stem in ["ultimate", "deluxe", "caribbean21", "infor6", "multihand"] {
        let v = Arc::new(Variant::built_in(stem).expect("shipped").expect("valid"));
        let mut live = Engine::new(Arc::clone(&v));
        let mut sim = TableSim::new(Arc::clone(&v), 29, Style::Random);
        let mut rng = Rng::new(41);
        for _ in 0..400 {
            // Any of the 52 cards (some no longer in the shoe), now and then the cut card,
            // and sometimes too few for what is due.
            let len = rng.below(9);
            let items: Vec<Dealt> = (0..len)
                .map(|_| match rng.below(40) {
                    0 => Dealt::CutCard,
                    _ => {
                        Dealt::Card(croupier::cards::Card::from_index(rng.below(52)).expect("card"))
                    }
                })
                .collect();
            let (mut by_deal, mut by_apply) = (live.clone(), live.clone());
            let mut source = Scripted {
                items: items.clone(),
                taken: 0,
            };
            let (mut a, mut b) = (Vec::new(), Vec::new());
            let dealt = by_deal.deal_from(&mut source, &mut a);
            // The same by hand: apply while a card is due.
            let mut taken = 0;
            let expected = loop {
                let step = by_apply.step();
                if step != Step::Card {
                    break Ok(step);
                }
                let Some(item) = items.get(taken).copied() else {
                    break Ok(Step::Card);
                };
                taken += 1;
                if let Err(rejection) = by_apply.apply(&item.input(), &mut b) {
                    break Err((item.input(), rejection));
                }
            };
            match (&dealt, &expected) {
                (Ok(step), Ok(want)) => {
                    assert_eq!(step, want, "{stem}");
                    stops += 1;
                    dry += usize::from(*step == Step::Card);
                }
                (Err(got), Err((input, rejection))) => {
                    assert_eq!(&got.input, input, "{stem}");
                    assert_eq!(&got.rejection, rejection, "{stem}");
                    refused += 1;
                }
                _ => panic!("{stem}: deal_from gave {dealt:?}, applying gave {expected:?}"),
            }
            assert_eq!(source.taken, taken, "{stem}: items taken");
            assert_eq!(a, b, "{stem}: events");
            assert!(by_deal == by_apply, "{stem}: deal_from left another state");
            // A hit is `apply` of the first item, whatever the phase.
            let (mut by_hit, mut by_card) = (live.clone(), live.clone());
            let mut source = Scripted {
                items: items.clone(),
                taken: 0,
            };
            let (mut a, mut b) = (Vec::new(), Vec::new());
            let hit = by_hit.hit_from(&mut source, &mut a);
            match items.first() {
                None => assert_eq!(hit, Ok(false), "{stem}: nothing to hit from"),
                Some(item) => match by_card.apply(&item.input(), &mut b) {
                    Ok(()) => assert_eq!(hit, Ok(true), "{stem}"),
                    Err(rejection) => {
                        let got = hit.expect_err("refused by apply");
                        assert_eq!((&got.input, &got.rejection), (&item.input(), &rejection));
                        hits_refused += 1;
                    }
                },
            }
            assert_eq!(source.taken, items.len().min(1), "{stem}: items taken");
            assert_eq!(a, b, "{stem}: events");
            assert!(by_hit == by_card, "{stem}: hit_from left another state");
            // Move the session on.
            let input = sim.next_input(&live);
            live.apply(&input, &mut Vec::new())
                .unwrap_or_else(|r| panic!("{stem}: {input:?} refused: {r}"));
        }
    }
    assert!(
        stops > 0 && refused > 0 && dry > 0 && hits_refused > 0,
        "{stops} {refused} {dry} {hits_refused}"
    );
}

/// `SplitShort`: a follower who cannot pay the seated player's split plays the first hand
/// only; naming a player who does not follow splits refuses the split whole and changes
/// nothing.
#[test]
fn a_follower_short_at_the_split_plays_the_first_hand_only() {
    use croupier::engine::{BehindBet, BetKind, SeatBets};
    let mut e = engine("deluxe");
    let follower = |player: &str, follow_split| BehindBet {
        player: player.into(),
        main: 40,
        follow_split,
        ..BehindBet::default()
    };
    apply(
        &mut e,
        Input::Bets(vec![SeatBets {
            seat: 3,
            main: 100,
            behind: vec![follower("alice", true), follower("carl", false)],
            ..SeatBets::default()
        }]),
    );
    for c in ["8H", "TC", "8D", "7S"] {
        apply(&mut e, card(c));
    }
    let before = e.clone();
    let short = |who: &str| Input::SplitShort {
        seat: 3,
        short: vec![who.to_string()],
    };
    let refused = e
        .apply(&short("carl"), &mut Vec::new())
        .expect_err("carl does not follow splits");
    assert_eq!(refused.code, Code::ActionNotAllowed);
    assert!(e == before, "a refused split changes nothing");
    apply(&mut e, short("alice"));
    for input in [card("2C"), card("9H"), decide(3, Action::Stand), card("7C")] {
        apply(&mut e, input);
    }
    let events = apply(&mut e, decide(3, Action::Stand));
    let settled = events
        .iter()
        .find_map(|ev| match ev {
            Event::RoundSettled(r) => Some(r),
            _ => None,
        })
        .expect("settled");
    let alice: Vec<_> = settled
        .bets
        .iter()
        .filter(|b| b.player.as_deref() == Some("alice") && b.kind == BetKind::Main)
        .map(|b| (b.staked, b.returned))
        .collect();
    // The first hand (19) beats the dealer's 17: 40 staked, 80 back; the second (15) is
    // not hers.
    assert_eq!(alice, vec![(40, 80)]);
}
