//! Money: integer minor units and the pay ratios that multiply them.
//!
//! Every amount is an `i64` count of the currency's minor unit (cents). Payouts are
//! computed with integer arithmetic only; a fraction of a minor unit is rounded *down*
//! (towards the house) — e.g. 3:2 on a bet of 15 wins 22, not 22.5. Insurance costs are
//! rounded down the same way (half of 15 is 7).

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// An amount in minor units (e.g. cents).
pub type Amount = i64;

/// The largest amount a single bet may be configured to take. Keeps every payout
/// (at most 1000× in any shipped pay table) far inside `i64`.
pub const MAX_BET: Amount = 1_000_000_000_000;

/// How a winning bet is paid.
///
/// Written in config as `"N:M"` (odds: the stake comes back plus `stake × N / M`) or `"Nx"`
/// (a multiplier: `stake × N` comes back in all, the stake included).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum Pay {
    /// `N:M` odds.
    Odds {
        /// N.
        win: u32,
        /// M.
        per: u32,
    },
    /// `Nx`: stake multiplied, stake included.
    Times(u32),
}

impl Pay {
    /// Everything paid back on a winning `stake`: stake plus winnings, rounded down.
    pub fn returns(self, stake: Amount) -> Amount {
        match self {
            Pay::Odds { win, per } => stake + stake * Amount::from(win) / Amount::from(per),
            Pay::Times(n) => stake * Amount::from(n),
        }
    }

    /// Everything paid back per unit staked, as an exact fraction (numerator, denominator):
    /// `3:2` is 5/2, `5x` is 5/1. Game math compares and sums pays with it.
    pub fn return_ratio(self) -> (u64, u64) {
        match self {
            Pay::Odds { win, per } => (u64::from(win) + u64::from(per), u64::from(per)),
            Pay::Times(n) => (u64::from(n), 1),
        }
    }

    /// Everything paid back per unit staked, as a float (3:2 → 2.5).
    pub fn return_per_unit(self) -> f64 {
        let (n, d) = self.return_ratio();
        n as f64 / d as f64
    }

    /// The part of `amount` this ratio names, rounded down (used for costs such as
    /// insurance at `1:2` of the main bet).
    pub fn fraction_of(self, amount: Amount) -> Amount {
        match self {
            Pay::Odds { win, per } => amount * Amount::from(win) / Amount::from(per),
            Pay::Times(n) => amount * Amount::from(n),
        }
    }
}

/// Why a pay ratio could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a pay ratio: write \"N:M\" (odds, e.g. \"3:2\") or \"Nx\" (multiplier, stake included, e.g. \"5x\"), N and M whole numbers, M > 0")]
pub struct PayError(pub String);

impl FromStr for Pay {
    type Err = PayError;

    fn from_str(s: &str) -> Result<Pay, PayError> {
        let err = || PayError(s.to_string());
        let number = |t: &str| -> Result<u32, PayError> {
            if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
                return Err(err());
            }
            t.parse().map_err(|_| err())
        };
        if let Some(n) = s.strip_suffix('x') {
            return Ok(Pay::Times(number(n)?));
        }
        let (win, per) = s.split_once(':').ok_or_else(err)?;
        let (win, per) = (number(win)?, number(per)?);
        if per == 0 {
            return Err(err());
        }
        Ok(Pay::Odds { win, per })
    }
}

impl TryFrom<String> for Pay {
    type Error = PayError;
    fn try_from(s: String) -> Result<Pay, PayError> {
        s.parse()
    }
}

impl From<Pay> for String {
    fn from(p: Pay) -> String {
        p.to_string()
    }
}

impl fmt::Display for Pay {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Pay::Odds { win, per } => write!(f, "{win}:{per}"),
            Pay::Times(n) => write!(f, "{n}x"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn odds_round_down_towards_the_house() {
        let three_two: Pay = "3:2".parse().expect("valid");
        assert_eq!(three_two.returns(100), 250);
        assert_eq!(three_two.returns(15), 37); // 15 + 22.5 -> 15 + 22
        let half: Pay = "1:2".parse().expect("valid");
        assert_eq!(half.fraction_of(15), 7);
    }

    #[test]
    fn the_sheets_odds_on_odd_stakes_round_down_to_a_minor_unit() {
        let pay = |p: &str, stake| p.parse::<Pay>().expect("valid").returns(stake);
        // 3:2 (a natural): exact on even stakes, half a unit kept on odd ones.
        assert_eq!(pay("3:2", 1000), 2500);
        assert_eq!(pay("3:2", 2510), 6275);
        assert_eq!(pay("3:2", 2501), 6252); // 2501 + 3751.5 -> 2501 + 3751
                                            // 6:5: exact on multiples of 5; otherwise rounded down.
        assert_eq!(pay("6:5", 2500), 5500);
        assert_eq!(pay("6:5", 1010), 2222);
        assert_eq!(pay("6:5", 1001), 2202); // 1001 + 1201.2 -> 1001 + 1201
                                            // 9:1 is whole on any stake.
        assert_eq!(pay("9:1", 1001), 10010);
    }

    #[test]
    fn multiplier_includes_the_stake() {
        let five_x: Pay = "5x".parse().expect("valid");
        assert_eq!(five_x.returns(20), 100);
    }

    #[test]
    fn rejects_bad_ratios() {
        for bad in [
            "", "3", "3:0", ":2", "3:", "x", "-1:1", "1.5:1", "3:2:1", "3 :2",
        ] {
            assert!(bad.parse::<Pay>().is_err(), "{bad:?}");
        }
    }
}
