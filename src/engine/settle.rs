//! Settlement: every hand's outcome against the dealer and every bet's return, in integer
//! minor units (fractions rounded down, see `money`).

use super::hand::{is_natural_cards, total};
use super::io::{BetKind, BetResult, HandResult, Outcome, PlayerId, RoundResult};
use super::rules::player_natural;
use super::sidebets::{self, SideBetCards};
use super::state::{BehindPlay, Bonus, Engine, Hand, HandState, Insurance, SeatPlay};
use super::variant::Variant;
use super::variant::{NaturalTakes, SideBetKind, Ties};
use crate::cards::Card;
use crate::money::{Amount, Pay};
use std::cmp::Ordering;

/// The dealer's final position as settlement reads it.
pub(crate) struct Dealer {
    pub total: u8,
    pub bust: bool,
    pub natural: bool,
}

impl Dealer {
    /// Reads the dealer's final cards.
    pub fn read(v: &Variant, cards: &[crate::cards::Card]) -> Dealer {
        let t = total(cards, v.hand.ace);
        Dealer {
            total: t.best,
            bust: t.is_bust(),
            natural: is_natural_cards(cards, v.hand.natural),
        }
    }
}

/// Settles the engine's round. Call only when every card is out and every bonus drawn.
pub(crate) fn settle(engine: &Engine) -> RoundResult {
    let v = &*engine.variant;
    let round = &engine.round;
    let dealer = Dealer::read(v, &round.dealer);
    let mut out = RoundResult {
        round: round.number,
        shoe: engine.shoe.number(),
        dealer_cards: round.dealer.to_vec(),
        dealer_total: dealer.total,
        dealer_natural: dealer.natural,
        hands: Vec::with_capacity(round.seats.len()),
        bets: Vec::with_capacity(round.seats.len()),
        burned: engine.common.burned.to_vec(),
        cancelled: false,
    };
    for sp in &round.seats {
        settle_seat(v, sp, None, &round.dealer, &dealer, &mut out);
    }
    for player in &engine.common.players {
        for sp in &player.boxes {
            settle_seat(v, sp, Some(&player.id), &round.dealer, &dealer, &mut out);
        }
    }
    out
}

/// Settles one seat (or one player's box): its hands, main bet, insurance and side bets.
fn settle_seat(
    v: &Variant,
    sp: &SeatPlay,
    player: Option<&PlayerId>,
    dealer_cards: &[Card],
    dealer: &Dealer,
    out: &mut RoundResult,
) {
    let mut main_staked = 0;
    let mut main_returned = 0;
    for (hi, h) in sp.hands.iter().enumerate() {
        if h.state == HandState::NoBet {
            continue;
        }
        let (outcome, returned) = hand_outcome(v, h, hi == 0, sp.main, dealer);
        main_staked += h.stake;
        main_returned += returned;
        out.hands.push(HandResult {
            player: player.cloned(),
            seat: sp.seat,
            // At most 4 hands a seat (validated variant).
            hand: hi as u8,
            cards: h.cards.to_vec(),
            total: total(&h.cards, v.hand.ace).best,
            doubled: h.doubles > 0,
            outcome,
            staked: h.stake,
            returned,
        });
    }
    let mut bet = |kind: BetKind, staked: Amount, returned: Amount| {
        out.bets.push(BetResult {
            player: player.cloned(),
            seat: sp.seat,
            kind,
            staked,
            returned,
        })
    };
    if sp.main > 0 {
        bet(BetKind::Main, main_staked, main_returned);
    }
    if let Insurance::Bought(stake) = sp.insurance {
        let returned = if dealer.natural {
            v.insurance.won(stake)
        } else {
            0
        };
        bet(BetKind::Insurance, stake, returned);
    }
    for (kind, staked, returned) in side_bet_returns(v, sp, &sp.side, dealer_cards, dealer) {
        bet(kind, staked, returned);
    }
    for bb in &sp.behind {
        settle_behind(v, sp, bb, dealer_cards, dealer, out);
    }
}

/// Every side bet in `side`, on `sp`'s cards: (kind, staked, returned).
fn side_bet_returns(
    v: &Variant,
    sp: &SeatPlay,
    side: &[(u8, Amount)],
    dealer_cards: &[Card],
    dealer: &Dealer,
) -> Vec<(BetKind, Amount, Amount)> {
    let cards = match (dealer_cards.first(), sp.first_two()) {
        (Some(&dealer_up), Some(player)) => Some(SideBetCards {
            player,
            dealer_up,
            dealer_second: dealer_cards.get(1).copied(),
            dealer_natural: dealer.natural,
        }),
        _ => None,
    };
    side.iter()
        .map(|&(index, stake)| {
            let rules = &v.side_bets[usize::from(index)];
            let returned = match (cards, sp.bonus) {
                (_, Bonus::Drawn(m)) if rules.kind == SideBetKind::InForSix => {
                    Pay::Times(m).returns(stake)
                }
                (Some(cards), _) => {
                    sidebets::best_pay(rules, &cards).map_or(0, |(_, pay)| pay.returns(stake))
                }
                (None, _) => 0,
            };
            (BetKind::Side(rules.name.clone()), stake, returned)
        })
        .collect()
}

/// A bet behind a seat: the seated hands' results at the behind player's stakes. A double
/// is followed only with `follow_double` (otherwise the double's card is just a hit for the
/// bet behind); a split's second hand only with `follow_split`.
fn settle_behind(
    v: &Variant,
    sp: &SeatPlay,
    bb: &BehindPlay,
    dealer_cards: &[Card],
    dealer: &Dealer,
    out: &mut RoundResult,
) {
    let mut staked = 0;
    let mut returned = 0;
    for (hi, h) in sp.hands.iter().enumerate() {
        if h.state == HandState::NoBet || (hi > 0 && !bb.follow_split) {
            continue;
        }
        let doubles = if bb.follow_double { h.doubles } else { 0 };
        let followed = Hand {
            stake: bb.main * (1 + Amount::from(doubles)),
            ..h.clone()
        };
        let (_, r) = hand_outcome(v, &followed, hi == 0, bb.main, dealer);
        staked += followed.stake;
        returned += r;
    }
    let mut bet = |kind: BetKind, staked: Amount, returned: Amount| {
        out.bets.push(BetResult {
            player: Some(PlayerId::clone(&bb.player)),
            seat: sp.seat,
            kind,
            staked,
            returned,
        })
    };
    bet(BetKind::Main, staked, returned);
    if let Insurance::Bought(stake) = bb.insurance {
        let r = if dealer.natural {
            v.insurance.won(stake)
        } else {
            0
        };
        bet(BetKind::Insurance, stake, r);
    }
    for (kind, staked, r) in side_bet_returns(v, sp, &bb.side, dealer_cards, dealer) {
        bet(kind, staked, r);
    }
}

/// One hand's outcome and everything paid back on it. `original` is the seat's first hand,
/// the one carrying the original bet (for "original bets only").
pub(crate) fn hand_outcome(
    v: &Variant,
    h: &Hand,
    original: bool,
    main: Amount,
    dealer: &Dealer,
) -> (Outcome, Amount) {
    match h.state {
        HandState::Surrendered => {
            return (
                Outcome::Surrender,
                Pay::Odds { win: 1, per: 2 }.fraction_of(main),
            )
        }
        HandState::EvenMoney => return (Outcome::EvenMoney, 2 * h.stake),
        HandState::Bust => return (Outcome::Bust, 0),
        _ => {}
    }
    let natural_outcome = match v.hand.natural {
        super::variant::Natural::Blackjack => Outcome::Blackjack,
        super::variant::Natural::Caribbean21 => Outcome::Caribbean21,
    };
    let ht = total(&h.cards, v.hand.ace);
    let charlie = v.hand.charlie != 0 && h.cards.len() >= usize::from(v.hand.charlie);
    if player_natural(v, h) {
        return if dealer.natural {
            (Outcome::Push, h.stake)
        } else {
            (natural_outcome, v.hand.natural_pays.returns(h.stake))
        };
    }
    if dealer.natural {
        if charlie && v.hand.charlie_beats_dealer_natural {
            return (Outcome::Charlie, 2 * h.stake);
        }
        // Only what a peek could not have protected: with "original bets only" the
        // doubles and split hands come back.
        let kept = match v.settlement.dealer_natural_takes {
            NaturalTakes::AllBets => 0,
            NaturalTakes::OriginalBetsOnly if original => h.stake - main,
            NaturalTakes::OriginalBetsOnly => h.stake,
        };
        return (Outcome::Lose, kept);
    }
    if charlie {
        return (Outcome::Charlie, 2 * h.stake);
    }
    if dealer.bust {
        return (Outcome::Win, 2 * h.stake);
    }
    match ht.best.cmp(&dealer.total) {
        Ordering::Greater => (Outcome::Win, 2 * h.stake),
        Ordering::Less => (Outcome::Lose, 0),
        Ordering::Equal => match v.settlement.ties {
            Ties::Push => (Outcome::Push, h.stake),
            Ties::Lose => (Outcome::Lose, 0),
        },
    }
}
