//! The sheets' balance rules (`[funds]` in the variant), as pure functions: what a
//! decision becomes when the player's balance cannot cover its extra stake.

use crate::engine::variant::{FundsRules, ShortDouble, ShortSplit};
use crate::engine::Action;

/// The action played instead of `action` (a double or split the wallet refused for funds)
/// on a hand totalling `total`; `None`: the decision is refused.
pub fn short_funds(rules: &FundsRules, action: Action, total: u8) -> Option<Action> {
    match (action, rules.short_double, rules.short_split) {
        (Action::Double, ShortDouble::Hit, _) => Some(Action::Hit),
        (Action::Split, _, ShortSplit::HitIf11OrLess) if total <= 11 => Some(Action::Hit),
        (Action::Split, _, ShortSplit::HitIf11OrLess) => Some(Action::Stand),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Variant;

    #[test]
    fn deluxe_plays_a_short_double_as_a_hit_and_a_short_split_by_the_total() {
        let deluxe = Variant::built_in("deluxe")
            .expect("shipped")
            .expect("valid");
        let f = &deluxe.funds;
        assert_eq!(short_funds(f, Action::Double, 10), Some(Action::Hit));
        assert_eq!(short_funds(f, Action::Double, 17), Some(Action::Hit));
        // A pair of 5s (10) is hit; a pair of 8s (16) stands.
        assert_eq!(short_funds(f, Action::Split, 10), Some(Action::Hit));
        assert_eq!(short_funds(f, Action::Split, 11), Some(Action::Hit));
        assert_eq!(short_funds(f, Action::Split, 16), Some(Action::Stand));
        assert_eq!(short_funds(f, Action::Insurance, 10), None);
    }

    #[test]
    fn without_funds_rules_a_short_decision_is_refused() {
        let ultimate = Variant::built_in("ultimate")
            .expect("shipped")
            .expect("valid");
        assert_eq!(ultimate.funds, FundsRules::default());
        for action in [Action::Double, Action::Split] {
            assert_eq!(short_funds(&ultimate.funds, action, 10), None);
        }
    }
}
