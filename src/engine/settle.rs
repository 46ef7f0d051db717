//! Settlement: every hand's outcome against the dealer and every bet's return, in integer
//! minor units (fractions rounded down, see `money`).

use super::hand::{total, Cards};
use super::io::{behind_follows, BetKind, BetResult, HandResult, Outcome, PlayerId, RoundResult};
use super::rules::player_natural;
use super::sidebets::{self, SideBetCards};
use super::state::{BehindPlay, Bonus, Engine, Hand, HandState, Insurance, SeatPlay};
use super::variant::Variant;
use super::variant::{NaturalTakes, SideBetKind, Ties};
use crate::cards::Card;
use crate::money::{Amount, Pay};

/// The dealer's final position as settlement reads it.
pub(crate) struct Dealer {
    pub total: u8,
    pub bust: bool,
    pub natural: bool,
}

impl Dealer {
    /// Reads the dealer's final cards.
    #[inline]
    pub fn read(v: &Variant, cards: &Cards) -> Dealer {
        let t = cards.total(v.hand.ace);
        Dealer {
            total: t.best,
            bust: t.is_bust(),
            natural: cards.is_natural(v.hand.natural),
        }
    }
}

/// Settles the engine's round. Call only when every card is out and every bonus drawn.
pub(crate) fn settle(engine: &Engine) -> RoundResult {
    let mut out = RoundResult::default();
    settle_into(engine, &mut out, &mut Vec::new());
    out
}

/// Settles the engine's round into `out`, reusing its buffers (a record the caller handed
/// back through `Engine::recycle`): the simulator's rounds allocate nothing here.
/// Hand records a shorter round left over wait in `extra` for a longer one.
pub(crate) fn settle_into(engine: &Engine, out: &mut RoundResult, extra: &mut Vec<HandResult>) {
    let v = &*engine.variant;
    let round = &engine.round;
    let dealer = Dealer::read(v, &round.dealer);
    out.round = round.number;
    out.shoe = engine.shoe.number();
    out.dealer_cards.clear();
    out.dealer_cards.extend_from_slice(&round.dealer);
    out.dealer_total = dealer.total;
    out.dealer_natural = dealer.natural;
    out.burned.clear();
    out.burned.extend_from_slice(&engine.common.burned);
    out.cancelled = false;
    let mut w = Writer {
        out,
        extra,
        ace: v.hand.ace,
        hands: 0,
        bets: 0,
    };
    settle_each(engine, &dealer, &mut w);
    let (hands, bets) = (w.hands, w.bets);
    if w.out.hands.len() > hands {
        w.extra.extend(w.out.hands.drain(hands..));
    }
    w.out.bets.truncate(bets);
}

/// What every bet of a round is judged against: the rules and the dealer's final hand.
/// One value for the settling functions, which all need the three. Three thin pointers:
/// the cards as a slice (a pointer and a length read from the hand) cost the simulator 4
/// instructions a round (callgrind: `settle_with` 212 → 208), and only side bets read them.
#[derive(Clone, Copy)]
struct Against<'a> {
    v: &'a Variant,
    dealer_cards: &'a Cards,
    dealer: &'a Dealer,
}

impl<'a> Against<'a> {
    fn round(engine: &'a Engine, dealer: &'a Dealer) -> Against<'a> {
        Against {
            v: &engine.variant,
            dealer_cards: &engine.round.dealer,
            dealer,
        }
    }
}

/// Walks the engine's round (every seat, then every common-draw box) into `sink`.
fn settle_each(engine: &Engine, dealer: &Dealer, sink: &mut impl SettlementSink) {
    let at = Against::round(engine, dealer);
    for sp in &engine.round.seats {
        settle_seat(at, sp, None, sink);
    }
    if !engine.common.players.is_empty() {
        settle_common(engine, dealer, sink);
    }
}

/// The common draw's boxes, player by player (out of the seat-by-seat rounds' way).
#[inline(never)]
fn settle_common(engine: &Engine, dealer: &Dealer, sink: &mut impl SettlementSink) {
    let at = Against::round(engine, dealer);
    for player in &engine.common.players {
        for sp in &player.boxes {
            settle_seat(at, sp, Some(&player.id), sink);
        }
    }
}

/// Settles the engine's round into `sink`, hand by hand and bet by bet, in the order of
/// the `RoundSettled` record (`RoundResult::hands`, `RoundResult::bets`), from the same
/// code: what a caller that needs no record (the simulator) reads instead of one.
///
/// Kept out of line: the simulator's round loop calls it once a round, and inlined there it
/// only crowds that loop's registers.
#[inline(never)]
pub(crate) fn settle_with(engine: &Engine, sink: &mut impl SettlementSink) {
    let dealer = Dealer::read(&engine.variant, &engine.round.dealer);
    settle_each(engine, &dealer, sink);
}

/// Where a settlement goes, in order: each hand, then the bets of its seat or box.
pub trait SettlementSink {
    /// One hand's outcome (a `HandResult`, its total left to the sink).
    fn hand(&mut self, hand: &SettledHand<'_>);
    /// One bet's result (a `BetResult`).
    fn bet(&mut self, bet: &SettledBet<'_>);
}

/// A settled hand, borrowed from the round (`HandResult`'s fields).
#[derive(Debug, Clone, Copy)]
pub struct SettledHand<'a> {
    /// The common draw's player, else none.
    pub player: Option<&'a PlayerId>,
    /// The seat (or box).
    pub seat: u8,
    /// The hand within it.
    pub hand: u8,
    /// Its cards.
    pub cards: &'a [Card],
    /// Whether it was doubled.
    pub doubled: bool,
    /// Its outcome.
    pub outcome: Outcome,
    /// Everything staked on it.
    pub staked: Amount,
    /// Everything paid back on it.
    pub returned: Amount,
}

/// A settled bet, borrowed from the round (`BetResult`'s fields).
#[derive(Debug, Clone, Copy)]
pub struct SettledBet<'a> {
    /// The player behind the seat or the common draw's player, else none.
    pub player: Option<&'a PlayerId>,
    /// The seat (or box).
    pub seat: u8,
    /// Which bet.
    pub kind: SettledKind<'a>,
    /// Staked.
    pub staked: Amount,
    /// Paid back.
    pub returned: Amount,
}

/// A settled bet's kind (`BetKind`, borrowed; a side bet also by its index among the
/// variant's side bets).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SettledKind<'a> {
    /// The main bet.
    Main,
    /// Insurance.
    Insurance,
    /// A side bet.
    Side {
        /// Its index in `Variant::side_bets`.
        index: u8,
        /// Its name.
        name: &'a str,
    },
}

/// Writes hands and bets over a reused record, in order.
struct Writer<'a> {
    out: &'a mut RoundResult,
    extra: &'a mut Vec<HandResult>,
    ace: super::variant::AceValue,
    hands: usize,
    bets: usize,
}

impl SettlementSink for Writer<'_> {
    fn hand(&mut self, sh: &SettledHand<'_>) {
        let total = total(sh.cards, self.ace).best;
        if self.hands >= self.out.hands.len() {
            if let Some(spare) = self.extra.pop() {
                self.out.hands.push(spare);
            }
        }
        match self.out.hands.get_mut(self.hands) {
            Some(h) => sh.write_over(h, total),
            None => self.out.hands.push(sh.owned(total)),
        }
        self.hands += 1;
    }

    fn bet(&mut self, sb: &SettledBet<'_>) {
        match self.out.bets.get_mut(self.bets) {
            Some(b) => sb.write_over(b),
            None => self.out.bets.push(sb.owned()),
        }
        self.bets += 1;
    }
}

impl SettledHand<'_> {
    /// Overwrites a recycled record, keeping its buffers (the simulator allocates nothing).
    fn write_over(&self, h: &mut HandResult, total: u8) {
        h.player = self.player.cloned();
        h.seat = self.seat;
        h.hand = self.hand;
        h.cards.clear();
        h.cards.extend_from_slice(self.cards);
        h.total = total;
        h.doubled = self.doubled;
        h.outcome = self.outcome;
        h.staked = self.staked;
        h.returned = self.returned;
    }

    /// A new record, where there is none to recycle.
    fn owned(&self, total: u8) -> HandResult {
        HandResult {
            player: self.player.cloned(),
            seat: self.seat,
            hand: self.hand,
            cards: self.cards.to_vec(),
            total,
            doubled: self.doubled,
            outcome: self.outcome,
            staked: self.staked,
            returned: self.returned,
        }
    }
}

impl SettledBet<'_> {
    /// Overwrites a recycled record, keeping its side bet's name buffer.
    fn write_over(&self, b: &mut BetResult) {
        b.player = self.player.cloned();
        b.seat = self.seat;
        match (&mut b.kind, self.kind) {
            (BetKind::Side(old), SettledKind::Side { name, .. }) => {
                old.clear();
                old.push_str(name);
            }
            (k, kind) => *k = kind.owned(),
        }
        b.staked = self.staked;
        b.returned = self.returned;
    }

    /// A new record, where there is none to recycle.
    fn owned(&self) -> BetResult {
        BetResult {
            player: self.player.cloned(),
            seat: self.seat,
            kind: self.kind.owned(),
            staked: self.staked,
            returned: self.returned,
        }
    }
}

impl SettledKind<'_> {
    /// The record's kind.
    pub fn owned(self) -> BetKind {
        match self {
            SettledKind::Main => BetKind::Main,
            SettledKind::Insurance => BetKind::Insurance,
            SettledKind::Side { name, .. } => BetKind::Side(name.to_string()),
        }
    }
}

/// Settles one seat (or one player's box): its hands, main bet, insurance and side bets.
/// Inlined into the seat loop (always: left to itself the compiler keeps it out of line):
/// a seat with a main bet alone (the simulator's every round) then costs its hands and
/// one test for everything else.
#[inline(always)]
fn settle_seat(at: Against, sp: &SeatPlay, player: Option<&PlayerId>, w: &mut impl SettlementSink) {
    let mut main_staked = 0;
    let mut main_returned = 0;
    for (hi, h) in sp.hands.iter().enumerate() {
        if h.state == HandState::NoBet {
            continue;
        }
        let (outcome, returned) = hand_outcome(at.v, h, hi == 0, sp.main, at.dealer);
        main_staked += h.stake;
        main_returned += returned;
        w.hand(&SettledHand {
            player,
            seat: sp.seat,
            // At most 4 hands a seat (validated variant).
            hand: hi as u8,
            cards: &h.cards,
            doubled: h.doubles > 0,
            outcome,
            staked: h.stake,
            returned,
        });
    }
    if sp.main > 0 {
        w.bet(&SettledBet {
            player,
            seat: sp.seat,
            kind: SettledKind::Main,
            staked: main_staked,
            returned: main_returned,
        });
    }
    if matches!(sp.insurance, Insurance::Bought(_)) || !sp.side.is_empty() || !sp.behind.is_empty()
    {
        settle_extras(at, sp, player, w);
    }
}

/// A seat's (or box's) bets besides the main bet, in the record's order: insurance, side
/// bets, then the bets behind it.
#[inline(never)]
fn settle_extras(
    at: Against,
    sp: &SeatPlay,
    player: Option<&PlayerId>,
    w: &mut impl SettlementSink,
) {
    let own = (sp.insurance, &sp.side[..]);
    settle_insurance_and_sides(at, sp, player, own, w);
    for bb in &sp.behind {
        settle_behind(at, sp, bb, w);
    }
}

/// One side bet (index into the variant's, with its stake) on `sp`'s cards: its name and
/// what it returns.
fn side_bet_return<'v>(
    at: Against<'v>,
    sp: &SeatPlay,
    index: u8,
    stake: Amount,
) -> (&'v str, Amount) {
    let cards = match (at.dealer_cards.first(), sp.first_two()) {
        (Some(&dealer_up), Some(player)) => Some(SideBetCards {
            player,
            dealer_up,
            dealer_second: at.dealer_cards.get(1).copied(),
            dealer_natural: at.dealer.natural,
        }),
        _ => None,
    };
    let rules = &at.v.side_bets[usize::from(index)];
    let returned = match (cards, sp.bonus) {
        (_, Bonus::Drawn(m)) if rules.kind == SideBetKind::InForSix => Pay::Times(m).returns(stake),
        (Some(cards), _) => {
            sidebets::best_pay(rules, &cards).map_or(0, |(_, pay)| pay.returns(stake))
        }
        (None, _) => 0,
    };
    (rules.name.as_str(), returned)
}

/// A bet behind a seat: the seated hands' results at the behind player's stakes. A double
/// is followed only with `follow_double` (otherwise the double's card is just a hit for the
/// bet behind); a split's second hand only with `follow_split`.
fn settle_behind(at: Against, sp: &SeatPlay, bb: &BehindPlay, w: &mut impl SettlementSink) {
    let mut staked = 0;
    let mut returned = 0;
    for (hi, h) in sp.hands.iter().enumerate() {
        let hi = u8::try_from(hi).unwrap_or(u8::MAX);
        let plays = behind_follows(bb.follow_double, bb.follow_split, hi, false);
        if h.state == HandState::NoBet || !plays {
            continue;
        }
        let unfollowed = bb.unfollowed.contains(&hi);
        let doubles = if behind_follows(bb.follow_double, bb.follow_split, hi, true) && !unfollowed
        {
            h.doubles
        } else {
            0
        };
        let followed = Hand {
            stake: bb.main * (1 + Amount::from(doubles)),
            ..h.clone()
        };
        let (_, r) = hand_outcome(at.v, &followed, hi == 0, bb.main, at.dealer);
        staked += followed.stake;
        returned += r;
    }
    let player = Some(&bb.player);
    w.bet(&SettledBet {
        player,
        seat: sp.seat,
        kind: SettledKind::Main,
        staked,
        returned,
    });
    let behind = (bb.insurance, &bb.side[..]);
    settle_insurance_and_sides(at, sp, player, behind, w);
}

/// One player's insurance, then side bets, at `sp` (the seated player's, or those of a
/// player behind the seat): whoever staked them, they are judged on the seat's cards.
fn settle_insurance_and_sides(
    at: Against,
    sp: &SeatPlay,
    player: Option<&PlayerId>,
    (insurance, side): (Insurance, &[(u8, Amount)]),
    w: &mut impl SettlementSink,
) {
    let bet = |kind, staked, returned| SettledBet {
        player,
        seat: sp.seat,
        kind,
        staked,
        returned,
    };
    if let Insurance::Bought(stake) = insurance {
        let returned = if at.dealer.natural {
            at.v.insurance.won(stake)
        } else {
            0
        };
        w.bet(&bet(SettledKind::Insurance, stake, returned));
    }
    for &(index, stake) in side {
        let (name, returned) = side_bet_return(at, sp, index, stake);
        w.bet(&bet(SettledKind::Side { index, name }, stake, returned));
    }
}

/// One hand's outcome and everything paid back on it. `original` is the seat's first hand,
/// the one carrying the original bet (for "original bets only"). Inlined into the seat's
/// hand loop: a hand only its total and the dealer's decide (no natural on either side, no
/// Charlie in the variant: nearly every hand) reads no more than that; the rest of the
/// rules wait out of line in `natural_or_charlie`.
#[inline(always)]
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
        _ => {}
    }
    // A bust, a win, a push or a loss is as random as the cards: from here on the common
    // case selects its answer rather than branching on it (a branch would be mispredicted
    // on a good share of the simulator's millions of hands a second). Hence `&` and `|`,
    // which evaluate both sides, where `&&` and `||` would branch.
    let bust = h.state == HandState::Bust;
    let best = h.cards.total(v.hand.ace).best;
    let special = !bust & (dealer.natural | (v.hand.charlie != 0) | player_natural(v, h));
    if special {
        return natural_or_charlie(v, h, best, original, main, dealer);
    }
    by_totals(v, h, bust, best, dealer)
}

/// `hand_outcome` where a natural (the hand's or the dealer's) or a Charlie may decide;
/// `best` is the hand's total.
#[inline(never)]
fn natural_or_charlie(
    v: &Variant,
    h: &Hand,
    best: u8,
    original: bool,
    main: Amount,
    dealer: &Dealer,
) -> (Outcome, Amount) {
    let natural_outcome = match v.hand.natural {
        super::variant::Natural::Blackjack => Outcome::Blackjack,
        super::variant::Natural::Caribbean21 => Outcome::Caribbean21,
    };
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
    by_totals(v, h, false, best, dealer)
}

/// A hand of total `best` (or `bust`) against a dealer without a natural, no Charlie
/// counting: the totals decide. Selected without a branch (see `hand_outcome`).
#[inline(always)]
fn by_totals(v: &Variant, h: &Hand, bust: bool, best: u8, dealer: &Dealer) -> (Outcome, Amount) {
    const OUTCOMES: [Outcome; 4] = [Outcome::Lose, Outcome::Push, Outcome::Win, Outcome::Bust];
    let win = !bust & (dealer.bust | (best > dealer.total));
    let push = !bust & !win & (best == dealer.total) & (v.settlement.ties == Ties::Push);
    // Stakes returned: 2 on a win, 1 on a push, none otherwise.
    let pays = 2 * usize::from(win) + usize::from(push);
    (
        OUTCOMES[pays | (3 * usize::from(bust))],
        pays as Amount * h.stake,
    )
}
