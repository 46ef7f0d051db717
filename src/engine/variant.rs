//! A game variant's rules as data, read from `config/variants/*.toml`.
//!
//! Every rule of the rule sheets is a named setting here; the engine has no per-game
//! code paths. Each section of the file maps to one struct below, and the doc comment of
//! each field says which rule it is. Where a sheet is ambiguous the choice is a setting,
//! and `config/variants/README.md` records what the shipped files chose and why.

use crate::cards::Card;
use crate::money::{Amount, Pay, MAX_BET};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// One game's complete rule set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Variant {
    /// Human-readable name of the game.
    pub name: String,
    /// Shoe composition and lifecycle.
    pub shoe: ShoeRules,
    /// Seats and the order of the initial deal.
    pub deal: DealRules,
    /// How the dealer completes the hand.
    pub dealer: DealerRules,
    /// Card values, naturals, Charlie and hand limits.
    pub hand: HandRules,
    /// Doubling down.
    pub double: DoubleRules,
    /// Splitting.
    pub split: SplitRules,
    /// Surrender.
    pub surrender: SurrenderRules,
    /// Insurance and even money.
    pub insurance: InsuranceRules,
    /// Comparing hands and paying.
    pub settlement: SettlementRules,
    /// Main bet limits.
    pub limits: Limits,
    /// The side bets this game offers, by the name players bet them under.
    #[serde(default)]
    pub side_bets: Vec<SideBetRules>,
    /// The decision timer (required with `deal.mode = "common_draw"`).
    #[serde(default)]
    pub timers: Option<TimerRules>,
    /// Bet rules beyond limits.
    #[serde(default)]
    pub betting: BettingRules,
}

/// `[shoe]`: what is in the shoe and how a shoe starts and ends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShoeRules {
    /// Number of 52-card decks.
    pub decks: u8,
    /// A fresh, shuffled shoe for every round (no cut card, no burn).
    pub new_shoe_every_round: bool,
    /// A cut card marks the last round of the shoe.
    pub cut_card: bool,
    /// What is burned after a shuffle.
    pub burn: Burn,
    /// With `burn = "fixed"`: how many cards.
    #[serde(default)]
    pub burn_count: u8,
    /// With `burn = "reveal_value"`: how many cards a revealed ace orders burned (1 or 11).
    #[serde(default = "one")]
    pub burn_ace_value: u8,
}

fn one() -> u8 {
    1
}

/// The burn procedure after a shuffle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Burn {
    /// Nothing is burned.
    None,
    /// `burn_count` cards are burned face down.
    Fixed,
    /// The first card is revealed and burned, then as many cards as its value
    /// (faces 10, ace `burn_ace_value`).
    RevealValue,
}

/// `[deal]`: seats and the initial deal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DealRules {
    /// `"seats"`: each seat is dealt its own cards and plays in turn. `"common_draw"`: the
    /// seats are boxes whose cards every player betting on the box shares; players decide in
    /// parallel under a decision timer and each card goes to every hand that asked for one.
    #[serde(default)]
    pub mode: DealMode,
    /// Number of seats (boxes, spots), numbered from 1.
    pub seats: u8,
    /// The order seats are dealt and played in.
    pub seat_order: SeatOrder,
    /// Cards the dealer receives in the initial deal: 1 (up card only; the second comes
    /// after the players) or 2 (up card after the first pass, a face-down card after the
    /// second).
    pub dealer_cards: u8,
    /// Dealer up cards on which the dealer checks the face-down card for a natural before
    /// play: `"ace"` (after insurance) and/or `"ten"`. Empty: never.
    pub peek_on: Vec<UpCard>,
}

/// How seats and players relate to the cards.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DealMode {
    /// One hand per seat, played in turn.
    #[default]
    Seats,
    /// Any number of players share each box's cards (Multi-hand Blackjack).
    CommonDraw,
}

/// `[timers]`: the decision timer of a common draw. Time reaches the engine only as tick
/// inputs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TimerRules {
    /// How long players have for each decision (at most 25 000 ms).
    pub decision_ms: u64,
    /// On a timeout's automatic action: hit a hand below hard 12 or soft 17 (else stand);
    /// when false, always stand.
    pub hit_on_timeout: bool,
}

/// `[betting]`: what a bet may be.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BettingRules {
    /// Side bets without a main bet on the same seat/box: `"never"`, `"allowed"`, or
    /// `"up_to_main"` (each side bet at most the main bet, so a main bet is needed).
    pub side_bets_without_main: SideWithoutMain,
    /// Players may bet behind a seated player (Deluxe's play-behind).
    #[serde(default)]
    pub play_behind: bool,
    /// Common draw: "Let it play" — a box that won last round may bet everything it returned
    /// (stake and win, special bets excluded) as its main bet, up to this amount. 0: off.
    #[serde(default)]
    pub let_it_play_max: Amount,
}

impl Default for BettingRules {
    fn default() -> BettingRules {
        BettingRules {
            side_bets_without_main: SideWithoutMain::Never,
            play_behind: false,
            let_it_play_max: 0,
        }
    }
}

/// The Multi-hand sheet's "special bet allowed even if base bet is zero" (0 / 1 / 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SideWithoutMain {
    /// 0: only with a main bet.
    Never,
    /// 1: with or without a main bet.
    Allowed,
    /// 2: with a main bet at least as large.
    UpToMain,
}

/// Seat order for dealing and play.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SeatOrder {
    /// Seat 1 first.
    Ascending,
    /// The highest seat first.
    Descending,
}

/// A class of dealer up card that some rules depend on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UpCard {
    /// An ace.
    Ace,
    /// A ten-value card (10, J, Q, K).
    Ten,
}

impl UpCard {
    /// Whether `card` is of this class.
    pub fn matches(self, card: Card) -> bool {
        match self {
            UpCard::Ace => card.rank == crate::cards::Rank::Ace,
            UpCard::Ten => card.rank.is_ten_value(),
        }
    }
}

/// `[dealer]`: how the dealer completes the hand.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DealerRules {
    /// On soft 17: `"stand"` (S17) or `"hit"` (H17).
    pub soft_17: Soft17,
    /// The dealer stands after this many cards whatever the total (0: no limit).
    #[serde(default)]
    pub max_cards: u8,
    /// The dealer completes the hand by the rules even when no hand is left to play against
    /// ("dealer always draws his card to the end").
    #[serde(default)]
    pub always_draws: bool,
}

/// The dealer's play on soft 17.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Soft17 {
    /// Stand on all 17s.
    Stand,
    /// Hit soft 17.
    Hit,
}

/// `[hand]`: card values and special hands.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HandRules {
    /// `"one_or_eleven"`, or `"one"` where an ace always counts 1 (Caribbean 21).
    pub ace: AceValue,
    /// The natural: a two-card `"blackjack"`, or `"caribbean21"` (ace and two ten-value
    /// cards, three cards, not after a split or a double).
    pub natural: Natural,
    /// What a player's natural pays against a dealer without one.
    pub natural_pays: Pay,
    /// A hand of this many cards not over 21 wins as a Charlie (0: no Charlie).
    #[serde(default)]
    pub charlie: u8,
    /// Whether a Charlie also beats the dealer's natural.
    #[serde(default)]
    pub charlie_beats_dealer_natural: bool,
    /// A hand stands automatically at this many cards (0: no limit).
    #[serde(default)]
    pub max_cards: u8,
}

/// The value of an ace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AceValue {
    /// 1 or 11, whichever is better.
    OneOrEleven,
    /// Always 1.
    One,
}

/// What counts as a natural.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Natural {
    /// Ace and a ten-value card as the first two cards, not after a split.
    Blackjack,
    /// Ace and two ten-value cards as the first three cards, not after a split or double.
    Caribbean21,
}

impl Natural {
    /// How many cards make the natural.
    pub fn cards(self) -> usize {
        match self {
            Natural::Blackjack => 2,
            Natural::Caribbean21 => 3,
        }
    }
}

/// `[double]`: doubling down.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DoubleRules {
    /// Which hands may double.
    pub on: DoubleOn,
    /// Doubling is allowed on hands made by a split.
    pub after_split: bool,
    /// A hand made by a split may double on any two cards whatever `on` says ("only on 10 or
    /// 11, unless the hand is split").
    #[serde(default)]
    pub after_split_any_total: bool,
    /// How many times one hand may double (0: any number of times).
    pub max_per_hand: u8,
    /// After the double's card the hand stands automatically (otherwise play goes on).
    pub stand_after_card: bool,
}

/// Which hands may double.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DoubleOn {
    /// Never.
    Never,
    /// Any two-card hand.
    AnyTwo,
    /// Two-card hands totalling 9, 10 or 11.
    NineToEleven,
    /// Two-card hands totalling 10 or 11.
    TenOrEleven,
    /// Any hand of two or more cards.
    AnyCards,
}

/// `[split]`: splitting.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SplitRules {
    /// The most hands one seat can hold (1: no split; 2: split once; 4: split up to three
    /// times).
    pub max_hands: u8,
    /// Which two-card hands may split.
    pub pairs: SplitPairs,
    /// A seat that bought insurance may not split (NSAI).
    pub not_after_insurance: bool,
}

/// Which two-card hands may split.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SplitPairs {
    /// Two cards of the same value (K and 10 may split).
    SameValue,
    /// Two cards of the same rank.
    SameRank,
    /// Any two cards.
    AnyTwo,
}

/// `[surrender]`: giving up half the bet.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SurrenderRules {
    /// When a hand may surrender. In a variant that peeks it comes after the peek (late
    /// surrender); without a peek it is early by nature.
    pub when: SurrenderWhen,
    /// Dealer up cards against which surrender is not offered.
    #[serde(default)]
    pub not_against: Vec<UpCard>,
}

/// When a hand may surrender.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SurrenderWhen {
    /// Never.
    Never,
    /// Only the original two-card hand, before any other decision.
    FirstTwoCards,
    /// At any point of the hand's play, after splits and doubles too. Half of the hand's
    /// initial stake comes back; double stakes are lost.
    AnyTime,
}

/// `[insurance]`: insurance and even money, offered on a dealer ace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InsuranceRules {
    /// Insurance is offered when the dealer's up card is an ace.
    pub offered: bool,
    /// Its cost as a part of the main bet, rounded down (`"1:2"`: half).
    pub cost: Pay,
    /// What it pays when the dealer has a natural.
    pub pays: Pay,
    /// A seat holding a natural may take even money (1:1 at once) instead.
    pub even_money: bool,
}

/// `[settlement]`: comparing and paying.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SettlementRules {
    /// Equal totals: `"push"` (stake returned) or `"lose"`. Naturals against naturals
    /// always push.
    pub ties: Ties,
    /// When the dealer's natural is found only at the end (no peek): `"all_bets"` are lost,
    /// or `"original_bets_only"` (doubles and splits come back).
    pub dealer_natural_takes: NaturalTakes,
}

/// The result of equal totals.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Ties {
    /// The stake comes back.
    Push,
    /// The stake is lost.
    Lose,
}

/// What a dealer's natural found after play takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NaturalTakes {
    /// Every stake on the hand, doubles and splits included.
    AllBets,
    /// Only the original bet; double and split stakes come back.
    OriginalBetsOnly,
}

/// A bet's limits, in minor units, inclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// The smallest bet.
    pub min: Amount,
    /// The largest bet.
    pub max: Amount,
}

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

/// Why a variant file was refused: the file, the key, the reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VariantError {
    /// The file could not be read.
    #[error("{file}: cannot read: {reason}")]
    Io {
        /// The file.
        file: String,
        /// The OS error.
        reason: String,
    },
    /// The file is not valid TOML for a variant (syntax, unknown or missing key, wrong type).
    #[error("{file}: {reason}")]
    Parse {
        /// The file.
        file: String,
        /// TOML's message, with line, column and key.
        reason: String,
    },
    /// The file parses but its settings contradict each other or are out of range.
    #[error("{file}: {key}: {reason}")]
    Invalid {
        /// The file.
        file: String,
        /// The dotted key.
        key: String,
        /// What is wrong.
        reason: String,
    },
}

/// The variants shipped in `config/variants/`, embedded so `croupier replay` works from
/// any directory: (file stem, TOML text).
pub const BUILT_IN: &[(&str, &str)] = &[
    (
        "ultimate",
        include_str!("../../config/variants/ultimate.toml"),
    ),
    ("deluxe", include_str!("../../config/variants/deluxe.toml")),
    (
        "caribbean21",
        include_str!("../../config/variants/caribbean21.toml"),
    ),
    ("infor6", include_str!("../../config/variants/infor6.toml")),
    (
        "multihand",
        include_str!("../../config/variants/multihand.toml"),
    ),
];

impl Variant {
    /// Parses and validates a variant's TOML text; `file` names it in errors.
    pub fn from_toml(file: &str, text: &str) -> Result<Variant, VariantError> {
        let variant: Variant = toml::from_str(text).map_err(|e| VariantError::Parse {
            file: file.to_string(),
            reason: e.to_string().trim_end().replace('\n', " "),
        })?;
        variant
            .validate()
            .map_err(|(key, reason)| VariantError::Invalid {
                file: file.to_string(),
                key,
                reason,
            })?;
        Ok(variant)
    }

    /// Reads and validates a variant file.
    pub fn load(path: &Path) -> Result<Variant, VariantError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| VariantError::Io {
            file: file.clone(),
            reason: e.to_string(),
        })?;
        Variant::from_toml(&file, &text)
    }

    /// A shipped variant by file stem.
    pub fn built_in(stem: &str) -> Option<Result<Variant, VariantError>> {
        BUILT_IN
            .iter()
            .find(|(name, _)| *name == stem)
            .map(|(name, text)| Variant::from_toml(&format!("config/variants/{name}.toml"), text))
    }

    /// The index of the side bet players bet under `name` (or one of its aliases).
    pub fn side_bet_index(&self, name: &str) -> Option<usize> {
        self.side_bets
            .iter()
            .position(|s| s.name == name || s.aliases.iter().any(|a| a == name))
    }

    /// Checks the settings against each other; `Err((key, reason))`.
    fn validate(&self) -> Result<(), (String, String)> {
        let bad = |key: &str, reason: &str| Err((key.to_string(), reason.to_string()));
        let shoe = &self.shoe;
        if !(1..=16).contains(&shoe.decks) {
            return bad("shoe.decks", "must be between 1 and 16");
        }
        if shoe.new_shoe_every_round && shoe.cut_card {
            return bad(
                "shoe.cut_card",
                "a shoe that is new every round has no cut card",
            );
        }
        if shoe.new_shoe_every_round && shoe.burn != Burn::None {
            return bad(
                "shoe.burn",
                "a shoe that is new every round is not burned (set burn = \"none\")",
            );
        }
        match shoe.burn {
            Burn::Fixed if shoe.burn_count == 0 => {
                return bad("shoe.burn_count", "burn = \"fixed\" needs burn_count >= 1")
            }
            Burn::None | Burn::RevealValue if shoe.burn_count != 0 => {
                return bad(
                    "shoe.burn_count",
                    "only burn = \"fixed\" takes a burn_count",
                )
            }
            _ => {}
        }
        if shoe.burn_ace_value != 1 && shoe.burn_ace_value != 11 {
            return bad("shoe.burn_ace_value", "must be 1 or 11");
        }
        let deal = &self.deal;
        if !(1..=16).contains(&deal.seats) {
            return bad("deal.seats", "must be between 1 and 16");
        }
        if !(1..=2).contains(&deal.dealer_cards) {
            return bad("deal.dealer_cards", "must be 1 (no hole card) or 2");
        }
        if deal.dealer_cards == 1 && !deal.peek_on.is_empty() {
            return bad(
                "deal.peek_on",
                "the dealer has no face-down card to peek at (dealer_cards = 1)",
            );
        }
        if self.hand.natural == Natural::Caribbean21 && !deal.peek_on.is_empty() {
            return bad(
                "deal.peek_on",
                "a three-card natural cannot be peeked at after the initial deal",
            );
        }
        if self.hand.natural == Natural::Caribbean21 && self.hand.ace != AceValue::One {
            return bad(
                "hand.natural",
                "caribbean21 (ace + two tens = 21) needs hand.ace = \"one\"",
            );
        }
        if self.hand.natural == Natural::Blackjack && self.hand.ace != AceValue::OneOrEleven {
            return bad(
                "hand.natural",
                "a two-card blackjack needs hand.ace = \"one_or_eleven\"",
            );
        }
        if self.hand.charlie == 1 || self.hand.charlie == 2 {
            return bad("hand.charlie", "must be 0 (none) or at least 3 cards");
        }
        if self.hand.max_cards != 0 && self.hand.max_cards < 3 {
            return bad("hand.max_cards", "must be 0 (no limit) or at least 3");
        }
        if self.hand.charlie != 0
            && self.hand.max_cards != 0
            && self.hand.max_cards < self.hand.charlie
        {
            return bad(
                "hand.max_cards",
                "is below hand.charlie: no hand could reach the Charlie",
            );
        }
        if self.hand.charlie_beats_dealer_natural && self.hand.charlie == 0 {
            return bad(
                "hand.charlie_beats_dealer_natural",
                "set hand.charlie to use it",
            );
        }
        if self.dealer.max_cards != 0 && self.dealer.max_cards < 2 {
            return bad("dealer.max_cards", "must be 0 (no limit) or at least 2");
        }
        if !(1..=4).contains(&self.split.max_hands) {
            return bad("split.max_hands", "must be between 1 and 4");
        }
        if self.insurance.even_money && !self.insurance.offered {
            return bad(
                "insurance.even_money",
                "even money needs insurance.offered = true",
            );
        }
        if self.insurance.offered && self.insurance.cost.fraction_of(1_000_000) <= 0 {
            return bad("insurance.cost", "must cost more than nothing");
        }
        check_limits("limits", self.limits)?;
        if self.betting.let_it_play_max != 0 && self.deal.mode != DealMode::CommonDraw {
            return bad(
                "betting.let_it_play_max",
                "Let it play belongs to a common draw",
            );
        }
        if !(0..=MAX_BET).contains(&self.betting.let_it_play_max) {
            return bad(
                "betting.let_it_play_max",
                "must be between 0 (off) and the largest bet",
            );
        }
        if self.betting.play_behind && self.deal.mode == DealMode::CommonDraw {
            return bad(
                "betting.play_behind",
                "a common draw has no seated players to play behind",
            );
        }
        match (self.deal.mode, &self.timers) {
            (DealMode::CommonDraw, None) => {
                return bad(
                    "timers",
                    "a common draw needs [timers] decision_ms and hit_on_timeout",
                )
            }
            (DealMode::CommonDraw, Some(t)) if !(1..=25_000).contains(&t.decision_ms) => {
                return bad("timers.decision_ms", "must be between 1 and 25000 ms")
            }
            (DealMode::Seats, Some(_)) => {
                return bad(
                    "timers",
                    "only a common draw (deal.mode = \"common_draw\") has a decision timer",
                )
            }
            _ => {}
        }
        if self.settlement.dealer_natural_takes == NaturalTakes::OriginalBetsOnly
            && !deal.peek_on.is_empty()
        {
            return bad(
                "settlement.dealer_natural_takes",
                "original bets only applies where the dealer does not peek (peek_on = [])",
            );
        }
        let mut names = std::collections::BTreeSet::new();
        for (i, side) in self.side_bets.iter().enumerate() {
            let key = format!("side_bets[{i}]");
            for name in std::iter::once(&side.name).chain(&side.aliases) {
                if name.is_empty() || name == "main" || name == "insurance" {
                    return Err((
                        format!("{key}.name"),
                        "names must be non-empty and other than \"main\" and \"insurance\"".into(),
                    ));
                }
                if !names.insert(name.as_str()) {
                    return Err((format!("{key}.name"), format!("{name:?} is used twice")));
                }
            }
            check_limits(&format!("{key}.limits"), side.limits)?;
            let combos = side.kind.combinations();
            if side.pays.is_empty() {
                return Err((
                    format!("{key}.pays"),
                    "must pay at least one combination".into(),
                ));
            }
            for combo in side.pays.keys() {
                if !combos.contains(&combo.as_str()) {
                    return Err((
                        format!("{key}.pays.{combo}"),
                        format!("unknown combination; this family has {combos:?}"),
                    ));
                }
            }
            check_keys(
                &format!("{key}.bonus"),
                side.bonus.keys(),
                side.kind.bonus_tables(),
            )?;
            for (table, multipliers) in &side.bonus {
                if multipliers.is_empty() || multipliers.contains(&0) {
                    return Err((
                        format!("{key}.bonus.{table}"),
                        "must list one or more multipliers, each at least 1".into(),
                    ));
                }
            }
            match (side.kind, &side.rank) {
                (SideBetKind::RankTwenty, None) => {
                    return Err((
                        format!("{key}.rank"),
                        "this family needs a rank (\"K\", \"Q\", \"J\", ...)".into(),
                    ))
                }
                (SideBetKind::RankTwenty, Some(r)) if side.rank_value().is_none() => {
                    return Err((
                        format!("{key}.rank"),
                        format!("{r:?} is not a rank (A 2-9 T J Q K)"),
                    ))
                }
                (SideBetKind::RankTwenty, Some(_)) => {}
                (_, Some(_)) => {
                    return Err((format!("{key}.rank"), "this family takes no rank".into()))
                }
                (_, None) => {}
            }
            if let Some(required) = &side.requires_bet {
                let known = self
                    .side_bets
                    .iter()
                    .any(|o| o.name == *required && o.name != side.name);
                if !known {
                    return Err((
                        format!("{key}.requires_bet"),
                        format!("{required:?} is not another side bet of this game"),
                    ));
                }
            }
        }
        Ok(())
    }
}

fn check_limits(key: &str, limits: Limits) -> Result<(), (String, String)> {
    if limits.min < 1 || limits.max < limits.min || limits.max > MAX_BET {
        return Err((
            key.to_string(),
            format!("need 1 <= min <= max <= {MAX_BET} (minor units)"),
        ));
    }
    Ok(())
}

fn check_keys<'a>(
    key: &str,
    given: impl Iterator<Item = &'a String>,
    wanted: &[&str],
) -> Result<(), (String, String)> {
    let given: Vec<&str> = given.map(String::as_str).collect();
    for g in &given {
        if !wanted.contains(g) {
            return Err((
                format!("{key}.{g}"),
                format!("unknown combination; this family has {wanted:?}"),
            ));
        }
    }
    for w in wanted {
        if !given.contains(w) {
            return Err((format!("{key}.{w}"), "missing".to_string()));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_variant_loads() {
        for (stem, _) in BUILT_IN {
            let v = Variant::built_in(stem).expect("listed");
            assert!(v.is_ok(), "{stem}: {v:?}");
        }
    }

    fn deluxe_text() -> &'static str {
        BUILT_IN
            .iter()
            .find(|(n, _)| *n == "deluxe")
            .expect("shipped")
            .1
    }

    #[test]
    fn unknown_key_is_refused_with_its_name() {
        let text = deluxe_text().replace("[dealer]", "[dealer]\nhits_on = 16");
        let err = Variant::from_toml("x.toml", &text).expect_err("unknown key");
        let msg = err.to_string();
        assert!(msg.starts_with("x.toml: "), "{msg}");
        assert!(msg.contains("hits_on"), "{msg}");
    }

    #[test]
    fn inconsistent_settings_name_file_and_key() {
        let text = deluxe_text().replace("decks = 8", "decks = 0");
        let err = Variant::from_toml("d.toml", &text).expect_err("zero decks");
        assert_eq!(
            err,
            VariantError::Invalid {
                file: "d.toml".into(),
                key: "shoe.decks".into(),
                reason: "must be between 1 and 16".into()
            }
        );
    }

    #[test]
    fn side_bet_dependencies_ranks_and_aliases_are_checked() {
        let base = deluxe_text();
        let extra = |block: &str| format!("{base}\n{block}");
        let top = "[[side_bets]]\nname = \"top\"\nkind = \"twenty_one_plus_three\"\nlimits = { min = 1, max = 10 }\nrequires_bet = \"21+3\"\npays = { straight_flush = \"180:1\" }\n";
        let err = Variant::from_toml("v.toml", &extra(top)).expect_err("21+3 missing");
        assert!(
            err.to_string().contains("side_bets[1].requires_bet"),
            "{err}"
        );
        let kk = "[[side_bets]]\nname = \"kk\"\nkind = \"rank_twenty\"\nlimits = { min = 1, max = 10 }\npays = { any_20 = \"4:1\" }\n";
        let err = Variant::from_toml("v.toml", &extra(kk)).expect_err("no rank");
        assert!(err.to_string().contains("side_bets[1].rank"), "{err}");
        let kk_rank = kk.replace("pays", "rank = \"K\"\npays");
        let v = Variant::from_toml("v.toml", &extra(&kk_rank)).expect("valid with a rank");
        assert_eq!(v.side_bets[1].rank_value(), Some(crate::cards::Rank::King));
        let sevens = "[[side_bets]]\nname = \"sevens\"\naliases = [\"7s\", \"pair\"]\nkind = \"sevens\"\nlimits = { min = 1, max = 10 }\npays = { \"777\" = \"100:1\" }\n";
        let err = Variant::from_toml("v.toml", &extra(sevens)).expect_err("alias clash");
        assert!(err.to_string().contains("\"pair\" is used twice"), "{err}");
        let ok =
            Variant::from_toml("v.toml", &extra(&sevens.replace(", \"pair\"", ""))).expect("valid");
        assert_eq!(ok.side_bet_index("7s"), Some(1));
    }

    #[test]
    fn pay_table_must_name_exactly_the_family_combinations() {
        let text = deluxe_text().replace("mixed_pair", "mixd_pair");
        let err = Variant::from_toml("d.toml", &text).expect_err("typo");
        assert!(
            err.to_string().contains("side_bets[0].pays.mixd_pair"),
            "{err}"
        );
    }
}
