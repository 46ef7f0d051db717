//! `[[side_bets]]`: one side bet each — its family, limits, pay table and bonus tables —
//! and every family's winning combinations. Apart from the main game's settings because a
//! variant lists any number of them, each with its own pay table, checked against its
//! family's combinations (`load.rs`) and evaluated in `engine::sidebets`.

use super::Limits;
use crate::money::Pay;
use serde::{Deserialize, Serialize};

/// `[[side_bets]]`: one side bet.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SideBetRules {
    /// The name players bet it under (`"21+3"`, `"pair"`, `"in_for_6"`).
    pub name: String,
    /// Which family of side bet it is; the family decides the winning combinations.
    pub kind: SideBetKind,
    /// Its limits.
    pub limits: Limits,
    /// Other names the bet is accepted under (e.g. `"19+"` for `"19_plus"`).
    #[serde(default)]
    pub aliases: Vec<String>,
    /// Another side bet that must be placed on the same seat first (Top 21+3 needs 21+3).
    #[serde(default)]
    pub requires_bet: Option<String>,
    /// The family's rank parameter (KK/QQ/JJ: `"K"`, `"Q"`, `"J"`).
    #[serde(default)]
    pub rank: Option<String>,
    /// The pay table: winning combination → pay. Its keys are some of the family's
    /// combinations; when the cards make several, the best-paying one listed pays.
    pub pays: std::collections::BTreeMap<String, Pay>,
    /// For a family with a bonus game: combination → the multipliers (stake included) the
    /// bonus game can draw.
    #[serde(default)]
    pub bonus: std::collections::BTreeMap<String, Vec<u32>>,
    /// The return to player the operator's par sheet states for this pay table, in percent
    /// (e.g. `92.86`). `croupier check-variant` warns when the exact computation
    /// (`croupier paytables`) differs by more than 0.005 points.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rtp: Option<f64>,
}

impl SideBetRules {
    /// The family's rank parameter as a rank.
    pub fn rank_value(&self) -> Option<crate::cards::Rank> {
        let code = self.rank.as_deref()?;
        format!("{code}S")
            .parse::<crate::cards::Card>()
            .ok()
            .map(|c| c.rank)
    }
}

/// A family of side bets; each is evaluated by its own module in `engine::sidebets`.
/// Several bets can share a family and differ in their pay tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SideBetKind {
    /// Three-card poker on the player's first two cards and the dealer's up card (21+3,
    /// Top 21+3, Poker 3, Poker 3 Bonus).
    TwentyOnePlusThree,
    /// Deluxe's Pair: a pair in the first two cards, suited trips with the dealer's first card.
    Pair,
    /// IN FOR 6: the first two cards total 6 (ace 1); a pair of 3s plays a bonus game.
    #[serde(rename = "in_for_6")]
    InForSix,
    /// Lucky Lucky and 19+: the three cards' total, 7-7-7 and 6-7-8.
    ThreeCardTotal,
    /// C3: red carpet, triplets, jacks in black, highest hearts.
    C3,
    /// Lucky Ladies (and QQ as Lucky Ladies): the first two cards total 20.
    Twenty,
    /// Lucky Aces: aces in the player's and the dealer's first two cards.
    LuckyAces,
    /// KK, QQ, JJ: a card of `rank`, or a total of 20.
    RankTwenty,
    /// Multi-hand's Pair: suited or non-suited pair.
    PairSuits,
    /// Match: the first two cards match the dealer's up card.
    Match,
    /// Suits: the first two cards share a suit.
    Suits,
    /// Blackjack Bonus: a suited or same-colour blackjack.
    BlackjackBonus,
    /// the dealer's up card between the player's two cards.
    Spread,
    /// 7's: sevens in sequence.
    Sevens,
}

impl SideBetKind {
    /// Every winning combination the family can report; a pay table names some of them.
    pub fn combinations(self) -> &'static [&'static str] {
        match self {
            SideBetKind::TwentyOnePlusThree => &[
                "suited_three_of_a_kind",
                "straight_flush",
                "three_of_a_kind",
                "straight",
                "flush",
            ],
            SideBetKind::Pair => &["suited_trips", "perfect_pair", "colored_pair", "mixed_pair"],
            SideBetKind::InForSix => &["easy_six"],
            SideBetKind::ThreeCardTotal => &[
                "suited_777",
                "suited_678",
                "777",
                "678",
                "suited_21",
                "21",
                "any_20",
                "any_19",
            ],
            SideBetKind::C3 => &["highest_hearts", "jacks_in_black", "triplets", "red_carpet"],
            SideBetKind::Twenty => &[
                "queen_of_hearts_pair_with_dealer_blackjack",
                "queen_of_hearts_pair",
                "matched_20",
                "suited_20",
                "any_20",
            ],
            SideBetKind::LuckyAces => &[
                "four_aces",
                "three_suited_aces",
                "three_aces",
                "two_suited_aces",
                "two_aces",
                "ace_of_diamonds",
                "one_ace",
            ],
            SideBetKind::RankTwenty => &["diamond_pair", "matched_20", "any_20", "one_of_rank"],
            SideBetKind::PairSuits => &["suited_pair", "non_suited_pair"],
            SideBetKind::Match => &[
                "two_suited_matches",
                "suited_and_non_suited_match",
                "one_suited_match",
                "two_non_suited_matches",
                "one_non_suited_match",
            ],
            SideBetKind::Suits => &["suited_king_queen", "two_suited"],
            SideBetKind::BlackjackBonus => &["suited_blackjack", "same_colour_blackjack"],
            SideBetKind::Spread => &[
                "three_of_a_kind",
                "one_card_spread",
                "two_card_spread",
                "other_spread",
            ],
            SideBetKind::Sevens => &["suited_777", "777", "suited_77", "77", "first_card_7"],
        }
    }

    /// The bonus-game tables the family needs, if any.
    pub fn bonus_tables(self) -> &'static [&'static str] {
        match self {
            SideBetKind::InForSix => &["exacta", "coloured", "mixed"],
            _ => &[],
        }
    }

    /// Whether the family looks at the dealer's second card (or whether the dealer ends with
    /// a natural), so the dealer must receive it before the bet settles.
    pub fn needs_dealer_second_card(self) -> bool {
        matches!(self, SideBetKind::LuckyAces | SideBetKind::Twenty)
    }
}
