//! The hand rules both kinds of round share: when a hand may double, split or surrender,
//! what a card does to a hand, when the dealer draws, naturals and Charlies. Pure functions
//! of the variant and the cards.

use super::hand::{Cards, Total};
use super::io::{Place, SeatId};
use super::state::{Hand, HandState, Hands, Insurance, SeatPlay};
use super::variant::{DoubleOn, Soft17, SplitPairs, SurrenderWhen, Variant};
use crate::cards::{Card, Rank};
use crate::money::Amount;

/// Doubles a hand: another initial stake, and its one card is due.
pub(crate) fn double_hand(h: &mut Hand, main: Amount) {
    h.stake += main;
    h.doubles += 1;
    h.state = HandState::AwaitingDoubleCard;
}

/// Splits `hands[hi]` (two cards): the second card leads a new hand right after it, staked
/// like the original; both wait for their second card (split aces take only that one).
pub(crate) fn split_hand(hands: &mut Hands, hi: usize, main: Amount) {
    // `may_split` allows a split only below `split.max_hands`, at most 4: never full here.
    debug_assert!(!hands.is_full(), "a split beyond four hands");
    if hands.is_full() {
        return;
    }
    let h = &mut hands[hi];
    let aces = h.cards[0].rank == Rank::Ace && h.cards[1].rank == Rank::Ace;
    let second = h.cards.pop().unwrap_or(h.cards[0]);
    h.from_split = true;
    h.split_aces = aces;
    let mut cards = Cards::default();
    cards.push(second);
    let new = Hand {
        cards,
        stake: main,
        doubles: 0,
        from_split: true,
        split_aces: aces,
        state: HandState::Live,
        hit_requested: false,
        strikes: 0,
        in_step: false,
    };
    hands.insert(hi + 1, new);
}

/// Where the initial deal's `step` goes, with `n` seats (or boxes) in dealing order: each
/// seat, the dealer's up card, each seat again, then the dealer's face-down card if the
/// variant deals `dealer_cards = 2`.
pub(crate) fn initial_deal_target(
    n: usize,
    step: u8,
    dealer_cards: u8,
    seat_at: impl Fn(usize) -> SeatId,
) -> Option<Place> {
    let step = usize::from(step);
    let hand = |i: usize| Place::Hand {
        seat: seat_at(i),
        hand: 0,
    };
    if step < n {
        Some(hand(step))
    } else if step == n {
        Some(Place::Dealer)
    } else if step <= 2 * n {
        Some(hand(step - n - 1))
    } else if step == 2 * n + 1 && dealer_cards == 2 {
        Some(Place::Dealer)
    } else {
        None
    }
}

/// How many cards the initial deal takes with `n` seats (or boxes): `initial_deal_target`
/// has a place for every step below it.
pub(crate) fn initial_deal_len(n: usize, dealer_cards: u8) -> usize {
    2 * n + 1 + usize::from(dealer_cards == 2)
}

/// A player natural: the variant's natural, not after a split or a double.
pub(crate) fn player_natural(v: &Variant, h: &Hand) -> bool {
    !h.from_split && h.doubles == 0 && h.cards.is_natural(v.hand.natural)
}

/// A Charlie: the variant's Charlie count of cards, not over 21.
pub(crate) fn charlie(v: &Variant, h: &Hand) -> bool {
    let c = usize::from(v.hand.charlie);
    c != 0 && h.cards.len() >= c && !h.cards.total(v.hand.ace).is_bust()
}

/// Whether the hand's result still depends on cards the dealer has yet to draw.
pub(crate) fn hand_depends_on_dealer(v: &Variant, h: &Hand, natural_open: bool) -> bool {
    match h.state {
        HandState::Bust | HandState::Surrendered | HandState::EvenMoney | HandState::NoBet => false,
        _ if player_natural(v, h) => natural_open,
        _ if charlie(v, h) => !v.hand.charlie_beats_dealer_natural && natural_open,
        _ => true,
    }
}

/// Whether a side bet among `side` looks at the dealer's second card.
pub(crate) fn side_bets_need_second_card(v: &Variant, side: &[(u8, Amount)]) -> bool {
    side.iter()
        .any(|(i, _)| v.side_bets[usize::from(*i)].kind.needs_dealer_second_card())
}

/// Whether the dealer's rules let the dealer draw to these cards.
pub(crate) fn dealer_rules_draw(v: &Variant, dealer: &Cards) -> bool {
    if v.dealer.max_cards != 0 && dealer.len() >= usize::from(v.dealer.max_cards) {
        return false;
    }
    let t: Total = dealer.total(v.hand.ace);
    t.best < 17 || (t.best == 17 && t.soft && v.dealer.soft_17 == Soft17::Hit)
}

/// Whether the hand may double now.
pub(crate) fn may_double(v: &Variant, h: &Hand) -> bool {
    // The total only where the rule reads it: this runs for every decision offered.
    let best = || h.cards.total(v.hand.ace).best;
    let two = h.cards.len() == 2;
    let shape = match v.double.on {
        _ if h.from_split && v.double.after_split_any_total => two,
        DoubleOn::Never => false,
        DoubleOn::AnyTwo => two,
        DoubleOn::NineToEleven => two && (9..=11).contains(&best()),
        DoubleOn::TenOrEleven => two && (10..=11).contains(&best()),
        DoubleOn::AnyCards => true,
    };
    let count_ok = v.double.max_per_hand == 0 || h.doubles < v.double.max_per_hand;
    shape && count_ok && (!h.from_split || v.double.after_split) && !h.split_aces
}

/// Whether the hand may split, its seat (or box) holding `hands` hands.
pub(crate) fn may_split(v: &Variant, h: &Hand, hands: usize, insured: bool) -> bool {
    if h.cards.len() != 2 {
        return false;
    }
    let (a, b) = (h.cards[0], h.cards[1]);
    let pair = match v.split.pairs {
        SplitPairs::SameValue => a.rank.points() == b.rank.points(),
        SplitPairs::SameRank => a.rank == b.rank,
        SplitPairs::AnyTwo => true,
    };
    pair && hands < usize::from(v.split.max_hands) && !(insured && v.split.not_after_insurance)
}

/// Whether the hand may surrender against `up`, its seat (or box) holding `hands` hands.
pub(crate) fn may_surrender(v: &Variant, h: &Hand, hands: usize, up: Card) -> bool {
    let when = match v.surrender.when {
        SurrenderWhen::Never => false,
        SurrenderWhen::FirstTwoCards => h.cards.len() == 2 && hands == 1 && h.doubles == 0,
        SurrenderWhen::AnyTime => true,
    };
    when && !v.surrender.not_against.iter().any(|u| u.matches(up))
}

/// A seat's (or box's) initial deal is in: its first hand stands at once on 21, and with
/// `offer` (a dealer ace, insurance offered) its insurance question opens. `false`, and
/// nothing changed, for a hand without a bet.
pub(crate) fn after_initial_deal(v: &Variant, sp: &mut SeatPlay, offer: bool) -> bool {
    let h = &mut sp.hands[0];
    if h.state == HandState::NoBet {
        return false;
    }
    if h.cards.total(v.hand.ace).best == 21 {
        h.state = HandState::Stood;
    }
    if offer {
        sp.insurance = Insurance::Pending;
    }
    true
}

/// The state a hand is in after taking a card (`was` is its state before).
pub(crate) fn after_card(v: &Variant, h: &Hand, was: HandState) -> HandState {
    let t = h.cards.total(v.hand.ace);
    let n = h.cards.len();
    if t.is_bust() {
        HandState::Bust
    } else if t.best == 21
        || (v.hand.charlie != 0 && n >= usize::from(v.hand.charlie))
        || (v.hand.max_cards != 0 && n >= usize::from(v.hand.max_cards))
        || (h.split_aces && n >= 2)
        || (was == HandState::AwaitingDoubleCard && v.double.stand_after_card)
    {
        HandState::Stood
    } else {
        HandState::Live
    }
}
