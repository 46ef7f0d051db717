//! The sheets' balance rules (`[funds]` in the variant), as pure functions: what a
//! decision becomes when the player's balance cannot cover its extra stake. The bet-time
//! rules (second seats, follows, re-bets, specials) are in `play::funds`.

use crate::engine::variant::{FundsRules, ShortDouble, ShortSplit, ShortSplitAce};
use crate::engine::{Action, Total, Variant};
use crate::money::Amount;

/// A stake the balance cannot cover, refused before it reaches the engine (nothing changes).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FundsRefusal {
    /// The balance (after this round's stakes) is below what is asked.
    #[error("insufficient funds: {needed} needed, {available} available")]
    InsufficientFunds {
        /// What the bet or decision would stake, minor units.
        needed: Amount,
        /// What the balance still covers, minor units.
        available: Amount,
    },
}

impl FundsRefusal {
    /// The stable machine-readable code (`insufficient_funds`, the wallet's own).
    pub fn code(&self) -> &'static str {
        match self {
            FundsRefusal::InsufficientFunds { .. } => "insufficient_funds",
        }
    }
}

/// The extra stake `action` takes on a hand whose initial stake is `main`: a double or a
/// split another `main`, insurance its cost (rounded down); every other decision nothing.
pub fn decision_cost(v: &Variant, action: Action, main: Amount) -> Amount {
    match action {
        Action::Double | Action::Split => main,
        Action::Insurance => v.insurance.cost.fraction_of(main),
        _ => 0,
    }
}

/// What reaches the engine when the player asks for `action`, which stakes `cost` more,
/// with `available` left on the balance, on a hand totalling `total`: the action itself when
/// the balance covers it, else what `[funds]` plays instead (Deluxe: a hit or a stand), else
/// a refusal. Insurance the balance cannot cover is always refused ("available only with
/// sufficient coin balance").
pub fn funded_decision(
    rules: &FundsRules,
    action: Action,
    cost: Amount,
    available: Amount,
    total: Total,
) -> Result<Action, FundsRefusal> {
    if cost <= available {
        return Ok(action);
    }
    short_funds(rules, action, total).ok_or(FundsRefusal::InsufficientFunds {
        needed: cost,
        available,
    })
}

/// The action played instead of `action` (a double or split the wallet refused for funds)
/// on a hand totalling `total`; `None`: the decision is refused. A short split is judged
/// by the hand's score with its aces counted as `funds.short_split_ace` says.
pub fn short_funds(rules: &FundsRules, action: Action, total: Total) -> Option<Action> {
    let score = match rules.short_split_ace {
        ShortSplitAce::One if total.soft => total.best.saturating_sub(10),
        _ => total.best,
    };
    match (action, rules.short_double, rules.short_split) {
        (Action::Double, ShortDouble::Hit, _) => Some(Action::Hit),
        (Action::Split, _, ShortSplit::HitIf11OrLess) if score <= 11 => Some(Action::Hit),
        (Action::Split, _, ShortSplit::HitIf11OrLess) => Some(Action::Stand),
        _ => None,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A hard total.
    fn hard(best: u8) -> Total {
        Total { best, soft: false }
    }

    /// A shipped variant (the balance rules' tests share it).
    pub(crate) fn variant(name: &str) -> Variant {
        Variant::built_in(name).expect("shipped").expect("valid")
    }

    #[test]
    fn deluxe_plays_a_short_double_as_a_hit_and_a_short_split_by_the_total() {
        let deluxe = variant("deluxe");
        let f = &deluxe.funds;
        assert_eq!(short_funds(f, Action::Double, hard(10)), Some(Action::Hit));
        assert_eq!(short_funds(f, Action::Double, hard(17)), Some(Action::Hit));
        // A pair of 5s (10) is hit; a pair of 8s (16) stands.
        assert_eq!(short_funds(f, Action::Split, hard(10)), Some(Action::Hit));
        assert_eq!(short_funds(f, Action::Split, hard(11)), Some(Action::Hit));
        assert_eq!(short_funds(f, Action::Split, hard(16)), Some(Action::Stand));
        assert_eq!(short_funds(f, Action::Insurance, hard(10)), None);
        // A-A: 12 with an ace as 11 (the default) stands; 2 with aces as 1 is hit.
        let aces = Total {
            best: 12,
            soft: true,
        };
        assert_eq!(short_funds(f, Action::Split, aces), Some(Action::Stand));
        let mut one = deluxe.funds;
        one.short_split_ace = ShortSplitAce::One;
        assert_eq!(short_funds(&one, Action::Split, aces), Some(Action::Hit));
        assert_eq!(
            short_funds(&one, Action::Split, hard(12)),
            Some(Action::Stand)
        );
    }

    #[test]
    fn a_decision_the_balance_covers_is_played_as_asked() {
        let deluxe = variant("deluxe");
        let f = &deluxe.funds;
        assert_eq!(decision_cost(&deluxe, Action::Double, 100), 100);
        assert_eq!(decision_cost(&deluxe, Action::Split, 100), 100);
        assert_eq!(decision_cost(&deluxe, Action::Insurance, 15), 7);
        assert_eq!(decision_cost(&deluxe, Action::Stand, 100), 0);
        // (asked, cost, available, total) -> played; exactly enough is enough.
        let cases = [
            ((Action::Double, 100, 100, 10), Action::Double),
            ((Action::Double, 100, 99, 10), Action::Hit),
            ((Action::Split, 100, 99, 16), Action::Stand),
            ((Action::Stand, 0, 0, 16), Action::Stand),
        ];
        for ((asked, cost, available, total), played) in cases {
            assert_eq!(
                funded_decision(f, asked, cost, available, hard(total)),
                Ok(played),
                "{asked:?} costing {cost} with {available}"
            );
        }
        let short = funded_decision(f, Action::Insurance, 50, 49, hard(20)).expect_err("refused");
        assert_eq!(short.code(), "insufficient_funds");
        assert_eq!(
            short,
            FundsRefusal::InsufficientFunds {
                needed: 50,
                available: 49
            }
        );
    }

    #[test]
    fn multihand_refuses_every_special_decision_it_cannot_cover() {
        let multihand = variant("multihand");
        for action in [Action::Double, Action::Split, Action::Insurance] {
            assert!(funded_decision(&multihand.funds, action, 100, 50, hard(10)).is_err());
            assert_eq!(
                funded_decision(&multihand.funds, action, 100, 100, hard(10)),
                Ok(action)
            );
        }
    }

    #[test]
    fn without_funds_rules_a_short_decision_is_refused() {
        let ultimate = variant("ultimate");
        assert_eq!(ultimate.funds.short_double, ShortDouble::Refuse);
        assert_eq!(ultimate.funds.short_split, ShortSplit::Refuse);
        for action in [Action::Double, Action::Split] {
            assert_eq!(short_funds(&ultimate.funds, action, hard(10)), None);
        }
    }
}
