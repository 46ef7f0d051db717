//! The `[shoe]` table of `table.toml`: which port, how it is framed, which dialect.

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::card::Suit;

/// Which wire protocol the shoe speaks.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default, clap::ValueEnum,
)]
#[serde(rename_all = "kebab-case")]
pub enum Dialect {
    /// croupier's own framed protocol with CRC, ACK/NAK and heartbeats (`drivers/PROTOCOL.md`).
    #[default]
    #[serde(rename = "croupier-v1")]
    #[value(name = "croupier-v1")]
    CroupierV1,
    /// One line per card: suit letter then two-digit rank (`D12` = Q♦), as baccarat shoes send.
    AsciiSuitRank,
    /// Four digits: suit 1–4 (♠ ♥ ♣ ♦) then rank × 10 (`4130` = K♦), as card scanners send.
    Barcode4,
}

impl Dialect {
    /// The name used in config files and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Dialect::CroupierV1 => "croupier-v1",
            Dialect::AsciiSuitRank => "ascii-suit-rank",
            Dialect::Barcode4 => "barcode4",
        }
    }
}

/// Serial parity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Parity {
    /// No parity bit.
    #[default]
    None,
    /// Odd parity.
    Odd,
    /// Even parity.
    Even,
}

/// Options of the `ascii-suit-rank` dialect.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AsciiOptions {
    /// The four suit letters the shoe sends, in the order spades, hearts, diamonds, clubs.
    /// Studio shoes differ (some send `P C Q F`), hence configurable; matched exactly.
    pub suit_letters: String,
    /// A whole line the shoe sends when the cut card passes, if it reports it at all.
    pub cut_card_line: Option<String>,
}

impl Default for AsciiOptions {
    fn default() -> AsciiOptions {
        AsciiOptions {
            suit_letters: "SHDC".to_string(),
            cut_card_line: None,
        }
    }
}

impl AsciiOptions {
    /// The configured letter for each suit, in [`Suit::ALL`] order, once validated.
    pub fn letters(&self) -> Result<[u8; 4], ConfigError> {
        let bytes = self.suit_letters.as_bytes();
        let letters: [u8; 4] = bytes.try_into().map_err(|_| self.bad_letters())?;
        let printable = letters.iter().all(|b| b.is_ascii_graphic());
        let distinct = (0..4).all(|i| !letters[i + 1..].contains(&letters[i]));
        if printable && distinct {
            Ok(letters)
        } else {
            Err(self.bad_letters())
        }
    }

    /// The letter configured for `suit`.
    pub fn letter(letters: &[u8; 4], suit: Suit) -> u8 {
        letters[suit as usize]
    }

    fn bad_letters(&self) -> ConfigError {
        ConfigError::SuitLetters(self.suit_letters.clone())
    }
}

/// The `[shoe]` table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ShoeConfig {
    /// The serial device. Prefer a stable name: `/dev/serial/by-id/...` or the udev alias
    /// `/dev/croupier-shoe` from `drivers/README.md`; `/dev/ttyUSB0` moves between boots.
    pub port: PathBuf,
    /// Line speed in baud.
    pub baud: u32,
    /// Parity.
    pub parity: Parity,
    /// Data bits, 5–8.
    pub data_bits: u8,
    /// Stop bits, 1 or 2.
    pub stop_bits: u8,
    /// The wire protocol.
    pub dialect: Dialect,
    /// Options of the `ascii-suit-rank` dialect.
    pub ascii: AsciiOptions,
    /// `croupier-v1` only: with no valid frame for this long the link counts as down and
    /// the port is reopened. The shoe sends a heartbeat every second when idle.
    pub heartbeat_timeout_ms: u64,
    /// First wait before reopening a lost port; doubles per failed attempt.
    pub reconnect_initial_ms: u64,
    /// The cap on that wait, so a replugged shoe is found within this long.
    pub reconnect_max_ms: u64,
}

impl Default for ShoeConfig {
    fn default() -> ShoeConfig {
        ShoeConfig {
            port: PathBuf::from("/dev/croupier-shoe"),
            baud: 115_200,
            parity: Parity::None,
            data_bits: 8,
            stop_bits: 1,
            dialect: Dialect::CroupierV1,
            ascii: AsciiOptions::default(),
            heartbeat_timeout_ms: 3_000,
            reconnect_initial_ms: 100,
            reconnect_max_ms: 5_000,
        }
    }
}

impl ShoeConfig {
    /// Checks the values serde cannot: bit counts, backoff order, suit letters.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if !(5..=8).contains(&self.data_bits) {
            return Err(ConfigError::DataBits(self.data_bits));
        }
        if !(1..=2).contains(&self.stop_bits) {
            return Err(ConfigError::StopBits(self.stop_bits));
        }
        if self.baud == 0 {
            return Err(ConfigError::Baud);
        }
        if self.reconnect_initial_ms == 0 || self.reconnect_initial_ms > self.reconnect_max_ms {
            return Err(ConfigError::Backoff);
        }
        if self.heartbeat_timeout_ms == 0 {
            return Err(ConfigError::HeartbeatTimeout);
        }
        self.ascii.letters()?;
        Ok(())
    }

    /// [`ShoeConfig::heartbeat_timeout_ms`] as a duration.
    pub fn heartbeat_timeout(&self) -> Duration {
        Duration::from_millis(self.heartbeat_timeout_ms)
    }
}

/// A `[shoe]` value that parses but cannot work.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// `data_bits` outside 5–8.
    #[error("shoe.data_bits = {0}: must be 5, 6, 7 or 8")]
    DataBits(u8),
    /// `stop_bits` not 1 or 2.
    #[error("shoe.stop_bits = {0}: must be 1 or 2")]
    StopBits(u8),
    /// `baud` is zero.
    #[error("shoe.baud must be above 0")]
    Baud,
    /// Backoff bounds out of order.
    #[error("shoe.reconnect_initial_ms must be above 0 and at most shoe.reconnect_max_ms")]
    Backoff,
    /// Heartbeat timeout zero.
    #[error("shoe.heartbeat_timeout_ms must be above 0")]
    HeartbeatTimeout,
    /// Suit letters not four distinct printable ASCII characters.
    #[error("shoe.ascii.suit_letters = {0:?}: must be four distinct printable ASCII letters for spades, hearts, diamonds, clubs")]
    SuitLetters(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid_and_round_trip_through_toml() {
        let cfg = ShoeConfig::default();
        cfg.validate().expect("defaults valid");
        let text = toml::to_string(&cfg).expect("serialises");
        let back: ShoeConfig = toml::from_str(&text).expect("parses");
        assert_eq!(back, cfg);
    }

    #[test]
    fn parses_a_studio_shoe_table() {
        let cfg: ShoeConfig = toml::from_str(
            r#"
            port = "/dev/serial/by-id/usb-FTDI_shoe-if00-port0"
            baud = 9600
            dialect = "ascii-suit-rank"
            ascii = { suit_letters = "PCQF", cut_card_line = "CUT" }
            "#,
        )
        .expect("parses");
        assert_eq!(cfg.dialect, Dialect::AsciiSuitRank);
        assert_eq!(cfg.ascii.letters(), Ok(*b"PCQF"));
        assert_eq!(cfg.data_bits, 8);
        cfg.validate().expect("valid");
    }

    #[test]
    fn rejects_unknown_keys_and_bad_values() {
        assert!(toml::from_str::<ShoeConfig>("baudrate = 9600").is_err());
        assert!(toml::from_str::<ShoeConfig>("dialect = \"morse\"").is_err());
        let bad = |f: fn(&mut ShoeConfig)| {
            let mut cfg = ShoeConfig::default();
            f(&mut cfg);
            cfg.validate()
        };
        assert_eq!(bad(|c| c.data_bits = 9), Err(ConfigError::DataBits(9)));
        assert_eq!(bad(|c| c.stop_bits = 0), Err(ConfigError::StopBits(0)));
        assert_eq!(
            bad(|c| c.reconnect_initial_ms = 10_000),
            Err(ConfigError::Backoff)
        );
        assert!(matches!(
            bad(|c| c.ascii.suit_letters = "SSDC".into()),
            Err(ConfigError::SuitLetters(_))
        ));
        assert!(matches!(
            bad(|c| c.ascii.suit_letters = "SHD".into()),
            Err(ConfigError::SuitLetters(_))
        ));
    }
}
