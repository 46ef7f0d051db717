//! Side bets: one module per family. A family reports every winning combination the cards
//! make (a suited three of a kind is also a three of a kind and a flush); the bet pays the
//! best-paying of those its pay table lists. So one family serves several bets that differ
//! only in their pay tables (21+3, Top 21+3, Poker 3 and Poker 3 Bonus are all
//! `three_card_poker`).

mod blackjack_bonus;
mod c3;
mod in_for_six;
mod lucky_aces;
mod match_up;
mod pair;
mod pair_suits;
mod rank_twenty;
mod sevens;
mod spread;
mod suits;
mod three_card_poker;
mod three_card_total;
mod twenty;

pub use in_for_six::{hard_six_table, HardSix};

use super::variant::{SideBetKind, SideBetRules};
use crate::cards::{Card, Rank};
use crate::money::Pay;
use smallvec::SmallVec;

/// The cards side bets look at.
#[derive(Debug, Clone, Copy)]
pub struct SideBetCards {
    /// The seat's first two cards (before any split).
    pub player: [Card; 2],
    /// The dealer's first (up) card.
    pub dealer_up: Card,
    /// The dealer's second card, once dealt.
    pub dealer_second: Option<Card>,
    /// Whether the dealer's final hand is a natural (known at settlement).
    pub dealer_natural: bool,
}

impl SideBetCards {
    /// Player's two cards and the dealer's up card.
    fn three(&self) -> [Card; 3] {
        [self.player[0], self.player[1], self.dealer_up]
    }
}

/// The winning combinations a hand makes, by their pay-table names.
pub type Combinations = SmallVec<[&'static str; 4]>;

/// Every winning combination of `kind` these cards make. `rank` is the family's rank
/// parameter where it has one (KK/QQ/JJ). IN FOR 6's hard six plays a bonus game reported by
/// [`hard_six_table`], not here.
pub fn combinations(kind: SideBetKind, cards: &SideBetCards, rank: Option<Rank>) -> Combinations {
    let mut out = Combinations::new();
    match kind {
        SideBetKind::TwentyOnePlusThree => three_card_poker::combinations(cards, &mut out),
        SideBetKind::Pair => pair::combinations(cards, &mut out),
        SideBetKind::InForSix => in_for_six::combinations(cards, &mut out),
        SideBetKind::ThreeCardTotal => three_card_total::combinations(cards, &mut out),
        SideBetKind::C3 => c3::combinations(cards, &mut out),
        SideBetKind::Twenty => twenty::combinations(cards, &mut out),
        SideBetKind::LuckyAces => lucky_aces::combinations(cards, &mut out),
        SideBetKind::RankTwenty => {
            if let Some(rank) = rank {
                rank_twenty::combinations(cards, rank, &mut out);
            }
        }
        SideBetKind::PairSuits => pair_suits::combinations(cards, &mut out),
        SideBetKind::Match => match_up::combinations(cards, &mut out),
        SideBetKind::Suits => suits::combinations(cards, &mut out),
        SideBetKind::BlackjackBonus => blackjack_bonus::combinations(cards, &mut out),
        SideBetKind::Spread => spread::combinations(cards, &mut out),
        SideBetKind::Sevens => sevens::combinations(cards, &mut out),
    }
    out
}

/// The combination a bet pays on these cards and its pay: the best-paying of the
/// combinations the cards make that the bet's pay table lists (by return per unit staked;
/// rounding down is monotonic, so it is also the largest return for any stake). `None`: the
/// bet loses. The table settles with this, and `croupier paytables` enumerates with it.
pub fn best_pay(rules: &SideBetRules, cards: &SideBetCards) -> Option<(&'static str, Pay)> {
    combinations(rules.kind, cards, rules.rank_value())
        .into_iter()
        .filter_map(|combo| rules.pays.get(combo).map(|pay| (combo, *pay)))
        .reduce(|best, next| {
            let (bn, bd) = best.1.return_ratio();
            let (nn, nd) = next.1.return_ratio();
            if u128::from(nn) * u128::from(bd) > u128::from(bn) * u128::from(nd) {
                next
            } else {
                best
            }
        })
}

/// Test helper: the combinations for card codes (player, player, dealer up[, dealer 2nd]).
#[cfg(test)]
pub(crate) fn eval(
    kind: SideBetKind,
    codes: &[&str],
    rank: Option<Rank>,
    natural: bool,
) -> Vec<&'static str> {
    let c = |s: &str| s.parse::<Card>().expect("card");
    let cards = SideBetCards {
        player: [c(codes[0]), c(codes[1])],
        dealer_up: c(codes[2]),
        dealer_second: codes.get(3).map(|s| c(s)),
        dealer_natural: natural,
    };
    combinations(kind, &cards, rank).to_vec()
}
