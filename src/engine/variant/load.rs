//! Reading a variant: parsing its TOML, then validating every setting against the others
//! (`Variant::from_toml`, `Variant::load`, `Variant::built_in`), with the file and the
//! dotted key in every error.

use super::settings::*;
use crate::money::MAX_BET;
use std::path::Path;

/// The longest resume window a variant may set (`timeouts.resume_ms`), ms.
const MAX_RESUME_MS: u64 = 3_600_000;

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
        include_str!("../../../config/variants/ultimate.toml"),
    ),
    (
        "deluxe",
        include_str!("../../../config/variants/deluxe.toml"),
    ),
    (
        "caribbean21",
        include_str!("../../../config/variants/caribbean21.toml"),
    ),
    (
        "infor6",
        include_str!("../../../config/variants/infor6.toml"),
    ),
    (
        "multihand",
        include_str!("../../../config/variants/multihand.toml"),
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

    /// The display name (`name`) of the built-in variant `stem`, the files parsed once.
    pub fn built_in_name(stem: &str) -> Option<&'static str> {
        static NAMES: std::sync::OnceLock<Vec<(&'static str, String)>> = std::sync::OnceLock::new();
        NAMES
            .get_or_init(|| {
                BUILT_IN
                    .iter()
                    .filter_map(|(s, _)| Some((*s, Variant::built_in(s)?.ok()?.name)))
                    .collect()
            })
            .iter()
            .find(|(s, _)| *s == stem)
            .map(|(_, name)| name.as_str())
    }

    /// This variant with some settings changed, each by its dotted key
    /// (`insurance.won_returns`) as in the file, and validated again. A scenario uses it to
    /// replay a round under the other reading of a sheet; `file` names the result in errors.
    pub fn with_settings(
        &self,
        file: &str,
        settings: &[(String, serde_json::Value)],
    ) -> Result<Variant, VariantError> {
        let invalid = |key: &str, reason: String| VariantError::Invalid {
            file: file.to_string(),
            key: key.to_string(),
            reason,
        };
        let mut doc = serde_json::to_value(self).map_err(|e| invalid("", e.to_string()))?;
        for (key, value) in settings {
            let mut parts: Vec<&str> = key.split('.').collect();
            let last = parts.pop().unwrap_or_default();
            let mut node = &mut doc;
            for part in parts {
                node = node
                    .get_mut(part)
                    .ok_or_else(|| invalid(key, "no such section".into()))?;
            }
            let table = node
                .as_object_mut()
                .ok_or_else(|| invalid(key, "not a section".into()))?;
            table.insert(last.to_string(), value.clone());
        }
        let variant: Variant = serde_json::from_value(doc).map_err(|e| VariantError::Parse {
            file: file.to_string(),
            reason: e.to_string(),
        })?;
        variant
            .validate()
            .map_err(|(key, reason)| invalid(&key, reason))?;
        Ok(variant)
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
        if self.funds.bet_unit < 1 {
            return bad("funds.bet_unit", "must be at least 1 minor unit");
        }
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
        if !(1..=2).contains(&self.betting.seats_per_player) {
            return bad(
                "betting.seats_per_player",
                "a player holds one seat, or two (the engine takes at most two)",
            );
        }
        if self.betting.play_behind && self.deal.mode == DealMode::CommonDraw {
            return bad(
                "betting.play_behind",
                "a common draw has no seated players to play behind",
            );
        }
        if self.betting.play_behind && self.split.max_hands > 2 {
            // A follower short at a split drops the follow for the seat's split hands
            // (`Input::SplitShort`): sound only where a hand splits once.
            return bad(
                "split.max_hands",
                "with betting.play_behind a hand splits once (2): a bet behind follows one split",
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
        if self.deal.mode == DealMode::CommonDraw && self.timeouts != TimeoutRules::default() {
            return bad(
                "timeouts",
                "a common draw's timeouts are [timers] (hit_on_timeout, two strikes)",
            );
        }
        if self.timeouts.resume_ms > MAX_RESUME_MS {
            return bad(
                "timeouts.resume_ms",
                "must be between 0 (none) and 3600000 ms (an hour)",
            );
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
            if let Some(rtp) = side.rtp {
                if !(rtp.is_finite() && rtp > 0.0 && rtp < 1000.0) {
                    return Err((
                        format!("{key}.rtp"),
                        "must be a percentage above 0 and below 1000 (e.g. 92.86)".into(),
                    ));
                }
            }
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
