//! The `[buttons]` table of `table.toml`: which driver, the timings, and what each pin does.

use std::collections::HashSet;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// What a button asks the table to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ButtonAction {
    /// The player stands.
    Stand,
    /// The player doubles down.
    Double,
    /// The player splits a pair.
    Split,
    /// The player surrenders.
    Surrender,
    /// The player takes insurance.
    InsuranceYes,
    /// The player declines insurance.
    InsuranceNo,
    /// The dealer confirms (a result, a correction).
    Confirm,
    /// A fresh shoe is loaded.
    NewShoe,
    /// No more bets.
    CloseBets,
    /// Call the pit supervisor.
    CallSupervisor,
}

/// Which button-box driver runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum ButtonDriver {
    /// The Raspberry Pi's GPIO through rppal.
    #[default]
    Rppal,
    /// An in-process fake, for hosts without GPIO and for tests.
    Fake,
}

/// One button: a BCM GPIO pin, wired to ground, and its actions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PinBinding {
    /// BCM GPIO number (not the header pin number), 0–27.
    pub pin: u8,
    /// What a press does.
    pub action: ButtonAction,
    /// What a press held past `long_press_ms` does instead, if anything. Without one, the
    /// action fires on press; with one, on release (or at the threshold for the long one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub long_press: Option<ButtonAction>,
}

/// The `[buttons]` table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ButtonsConfig {
    /// `rppal` on a Pi, `fake` anywhere else.
    pub driver: ButtonDriver,
    /// A level must hold this long to count; contact bounce is shorter.
    pub debounce_ms: u64,
    /// A press held this long is a long press.
    pub long_press_ms: u64,
    /// A press held this long is a stuck button: reported as a fault, and that press does
    /// nothing, so a jammed key cannot act on its own.
    pub stuck_after_s: u64,
    /// The buttons.
    pub pins: Vec<PinBinding>,
}

impl Default for ButtonsConfig {
    fn default() -> ButtonsConfig {
        let bind = |pin, action, long_press| PinBinding {
            pin,
            action,
            long_press,
        };
        use ButtonAction::*;
        ButtonsConfig {
            driver: ButtonDriver::Rppal,
            debounce_ms: 20,
            long_press_ms: 1_000,
            stuck_after_s: 10,
            // The layout drawn in drivers/README.md.
            pins: vec![
                bind(5, Stand, None),
                bind(6, Double, None),
                bind(13, Split, None),
                bind(19, Surrender, None),
                bind(26, InsuranceYes, None),
                bind(16, InsuranceNo, None),
                bind(20, Confirm, None),
                bind(21, CloseBets, Some(NewShoe)),
                bind(12, CallSupervisor, None),
            ],
        }
    }
}

/// A `[buttons]` value that parses but cannot work.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ButtonsConfigError {
    /// Pin outside BCM 0–27.
    #[error("buttons.pins: GPIO {0} is not on the 40-pin header (BCM 0-27)")]
    Pin(u8),
    /// Pin bound twice.
    #[error("buttons.pins: GPIO {0} is bound twice")]
    DuplicatePin(u8),
    /// Timings out of order.
    #[error("buttons: need 0 < debounce_ms < long_press_ms < stuck_after_s * 1000")]
    Timings,
}

impl ButtonsConfig {
    /// Checks pins and timings.
    pub fn validate(&self) -> Result<(), ButtonsConfigError> {
        let mut seen = HashSet::new();
        for binding in &self.pins {
            if binding.pin > 27 {
                return Err(ButtonsConfigError::Pin(binding.pin));
            }
            if !seen.insert(binding.pin) {
                return Err(ButtonsConfigError::DuplicatePin(binding.pin));
            }
        }
        let ordered = 0 < self.debounce_ms
            && self.debounce_ms < self.long_press_ms
            && self.long_press_ms < self.stuck_after_s.saturating_mul(1000);
        if ordered {
            Ok(())
        } else {
            Err(ButtonsConfigError::Timings)
        }
    }

    /// Debounce as a duration.
    pub fn debounce(&self) -> Duration {
        Duration::from_millis(self.debounce_ms)
    }

    /// Long-press threshold as a duration.
    pub fn long_press(&self) -> Duration {
        Duration::from_millis(self.long_press_ms)
    }

    /// Stuck threshold as a duration.
    pub fn stuck_after(&self) -> Duration {
        Duration::from_secs(self.stuck_after_s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid_and_round_trip_through_toml() {
        let cfg = ButtonsConfig::default();
        cfg.validate().expect("valid");
        let text = toml::to_string(&cfg).expect("serialises");
        assert_eq!(toml::from_str::<ButtonsConfig>(&text), Ok(cfg));
    }

    #[test]
    fn parses_a_pin_map() {
        let cfg: ButtonsConfig = toml::from_str(
            r#"
            driver = "fake"
            debounce_ms = 15
            pins = [
                { pin = 17, action = "stand" },
                { pin = 27, action = "close-bets", long_press = "call-supervisor" },
            ]
            "#,
        )
        .expect("parses");
        assert_eq!(cfg.driver, ButtonDriver::Fake);
        assert_eq!(cfg.pins[1].long_press, Some(ButtonAction::CallSupervisor));
        assert_eq!(cfg.long_press_ms, 1_000);
        cfg.validate().expect("valid");
    }

    #[test]
    fn rejects_bad_pins_timings_and_keys() {
        assert!(toml::from_str::<ButtonsConfig>("debounce = 5").is_err());
        assert!(toml::from_str::<ButtonsConfig>("pins = [{ pin = 1, action = \"hit\" }]").is_err());
        let mut cfg = ButtonsConfig::default();
        cfg.pins[1].pin = cfg.pins[0].pin;
        assert_eq!(cfg.validate(), Err(ButtonsConfigError::DuplicatePin(5)));
        cfg.pins[1].pin = 40;
        assert_eq!(cfg.validate(), Err(ButtonsConfigError::Pin(40)));
        let cfg = ButtonsConfig {
            long_press_ms: 20_000,
            ..ButtonsConfig::default()
        };
        assert_eq!(cfg.validate(), Err(ButtonsConfigError::Timings));
    }
}
