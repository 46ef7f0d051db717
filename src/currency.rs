//! The table's currency: how an integer count of minor units is written for people
//! (`€1.00`, `$12,500.00`, `¥300`). Amounts stay integers everywhere else — in the engine,
//! the log, the database and the API's fields; only text for people goes through here.

use serde::{Deserialize, Serialize};

/// The currency of a table: ISO 4217 code, symbol and minor-unit exponent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Currency {
    /// The ISO 4217 code (`EUR`).
    pub code: String,
    /// The symbol people know it by (`€`); the code itself when it has none.
    pub symbol: String,
    /// Decimal places of the minor unit (2 for cents, 0 for yen).
    pub exponent: u8,
}

/// Why a currency setting is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CurrencyError {
    /// Not an ISO 4217 code.
    #[error("{0:?} is not an ISO 4217 currency code (such as EUR, USD, GBP)")]
    UnknownCode(String),
    /// An exponent other than the standard's for that code.
    #[error("{code} has {iso} decimal place(s) in ISO 4217, not {given}")]
    WrongExponent {
        /// The code.
        code: String,
        /// The standard's exponent.
        iso: u16,
        /// The configured one.
        given: u8,
    },
    /// A code without a minor unit in the standard (gold, SDR, …) and no exponent given.
    #[error("{0} has no minor unit in ISO 4217: not a table currency")]
    NoMinorUnit(String),
}

impl Currency {
    /// The currency with ISO 4217 code `code`; `exponent`, when given, must be the
    /// standard's (it documents the file rather than changing the money).
    pub fn new(code: &str, exponent: Option<u8>) -> Result<Currency, CurrencyError> {
        let iso = iso_currency::Currency::from_code(code)
            .ok_or_else(|| CurrencyError::UnknownCode(code.to_string()))?;
        let standard = iso
            .exponent()
            .ok_or_else(|| CurrencyError::NoMinorUnit(code.to_string()))?;
        if let Some(given) = exponent {
            if u16::from(given) != standard {
                return Err(CurrencyError::WrongExponent {
                    code: code.to_string(),
                    iso: standard,
                    given,
                });
            }
        }
        let symbol = iso.symbol().symbol;
        Ok(Currency {
            code: code.to_string(),
            // Symbols the standard's data lacks come out as the generic sign: use the code.
            symbol: if symbol.is_empty() || symbol == "¤" {
                code.to_string()
            } else {
                symbol
            },
            // ISO 4217 exponents are 0 to 4.
            exponent: u8::try_from(standard).unwrap_or(2),
        })
    }

    /// Reads an amount people write (`500`, `500.5`, `500.00`) as minor units: at most the
    /// currency's decimal places, no sign, no grouping.
    pub fn parse(&self, text: &str) -> Result<i64, String> {
        let bad = || format!("{text:?} is not an amount in {} (e.g. 500.00)", self.code);
        let (whole, frac) = text.trim().split_once('.').unwrap_or((text.trim(), ""));
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        if !digits(whole) || (text.contains('.') && !digits(frac)) {
            return Err(bad());
        }
        if frac.len() > usize::from(self.exponent) {
            return Err(format!(
                "{text:?}: {} has {} decimal places",
                self.code, self.exponent
            ));
        }
        let scale = 10i64.pow(u32::from(self.exponent));
        let w: i64 = whole.parse().map_err(|_| bad())?;
        let f: i64 = if frac.is_empty() {
            0
        } else {
            format!("{frac:0<width$}", width = usize::from(self.exponent))
                .parse()
                .map_err(|_| bad())?
        };
        w.checked_mul(scale)
            .and_then(|m| m.checked_add(f))
            .ok_or_else(bad)
    }

    /// Euro cents, the built-in default.
    pub fn euro() -> Currency {
        Currency {
            code: "EUR".into(),
            symbol: "€".into(),
            exponent: 2,
        }
    }

    /// `amount` minor units for people: `€1.00`, `-€5.50`, `€10,000.00`, `CHF 2.00`.
    pub fn format(&self, amount: i64) -> String {
        let sign = if amount < 0 { "-" } else { "" };
        let abs = amount.unsigned_abs();
        let scale = 10u64.pow(u32::from(self.exponent));
        let whole = group_thousands(abs / scale);
        let symbol = if self.symbol.chars().all(char::is_alphabetic) {
            // A letter symbol (CHF, kr) reads better apart from the digits.
            format!("{} ", self.symbol)
        } else {
            self.symbol.clone()
        };
        if self.exponent == 0 {
            format!("{sign}{symbol}{whole}")
        } else {
            let frac = abs % scale;
            let width = usize::from(self.exponent);
            format!("{sign}{symbol}{whole}.{frac:0width$}")
        }
    }
}

/// Words after which a number in a message for people is an amount (the engine's and the
/// betting window's messages: "main bet 5 is outside the limits 10 to 1000000").
const AMOUNT_AFTER: [&str; 7] = ["bet", "limits", "to", "staked", "returned", "stake", "unit"];

impl Currency {
    /// `message` with every amount (a whole number right after one of [`AMOUNT_AFTER`])
    /// written in this currency; seat and hand numbers are left alone.
    pub fn write_amounts(&self, message: &str) -> String {
        let mut out = String::with_capacity(message.len() + 16);
        let mut previous = "";
        for (i, word) in message.split(' ').enumerate() {
            if i > 0 {
                out.push(' ');
            }
            let digits = word.trim_end_matches([',', '.', ';', ':', ')']);
            let tail = &word[digits.len()..];
            match digits.parse::<i64>() {
                Ok(n) if AMOUNT_AFTER.contains(&previous) && !digits.starts_with('+') => {
                    out.push_str(&self.format(n));
                    out.push_str(tail);
                }
                _ => out.push_str(word),
            }
            previous = word;
        }
        out
    }
}

impl Default for Currency {
    fn default() -> Currency {
        Currency::euro()
    }
}

/// `12500` → `12,500`.
fn group_thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_are_written_in_the_currency() {
        let eur = Currency::new("EUR", None).expect("EUR");
        assert_eq!(eur, Currency::euro());
        assert_eq!(eur.format(100), "€1.00");
        assert_eq!(eur.format(5), "€0.05");
        assert_eq!(eur.format(-550), "-€5.50");
        assert_eq!(eur.format(1_000_000), "€10,000.00");
        assert_eq!(eur.format(0), "€0.00");
        let jpy = Currency::new("JPY", Some(0)).expect("JPY");
        assert_eq!(jpy.format(12_345), "¥12,345");
        let bhd = Currency::new("BHD", None).expect("BHD");
        assert_eq!(bhd.exponent, 3);
        assert!(
            bhd.format(1_500).ends_with("1.500"),
            "{}",
            bhd.format(1_500)
        );
        let usd = Currency::new("USD", Some(2)).expect("USD");
        assert_eq!(usd.format(250_000), "$2,500.00");
    }

    #[test]
    fn amounts_in_messages_are_written_in_the_currency_and_seats_are_not() {
        let eur = Currency::euro();
        assert_eq!(
            eur.write_amounts("seat 1: main bet 5 is outside the limits 10 to 1000000"),
            "seat 1: main bet €0.05 is outside the limits €0.10 to €10,000.00"
        );
        assert_eq!(
            eur.write_amounts("seat 2: pair bet 600 is over the main bet 500"),
            "seat 2: pair bet €6.00 is over the main bet €5.00"
        );
    }

    #[test]
    fn codes_and_exponents_are_checked_against_the_standard() {
        assert_eq!(
            Currency::new("EUX", None),
            Err(CurrencyError::UnknownCode("EUX".into()))
        );
        assert!(matches!(
            Currency::new("EUR", Some(3)),
            Err(CurrencyError::WrongExponent {
                iso: 2,
                given: 3,
                ..
            })
        ));
        assert!(matches!(
            Currency::new("XAU", None),
            Err(CurrencyError::NoMinorUnit(_))
        ));
    }
}
