//! What one row of the event log says. The `payload` column holds a [`Record`] as JSON;
//! the `kind` column repeats its tag so SQL can filter without parsing.

use crate::engine::Input;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Where an input came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// The card shoe (a card or the cut card).
    Shoe,
    /// The dealer's button box.
    Buttons,
    /// The HTTP API (seat terminals, the dealer panel, tests).
    Api,
    /// The built-in demo players (`[demo] players = true`).
    Demo,
}

impl Source {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Shoe => "shoe",
            Source::Buttons => "buttons",
            Source::Api => "api",
            Source::Demo => "demo",
        }
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One entry of the append-only event log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Record {
    /// An input the engine accepted. Replaying these in order rebuilds the engine.
    Input {
        /// Where it came from.
        source: Source,
        /// The input.
        input: Input,
    },
    /// The table locked: a rejected card or cut card, a device fault, a supervisor call.
    Alarm {
        /// Why, for people.
        reason: String,
        /// What the dealer or supervisor must do before clearing it.
        expected: String,
        /// The shoe item that was refused (`"7H"`, `"CUT"`), if a refused item caused it.
        /// It is not in play: clearing the alarm voids it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        item: Option<String>,
    },
    /// A shoe item that arrived while the table was locked: recorded, not applied. Clearing
    /// the alarm voids it (the dealer takes it out of play).
    Held {
        /// The item (`"7H"`, `"CUT"`).
        item: String,
    },
    /// The alarm was cleared; the table takes inputs again.
    Clear {
        /// The operator's reason.
        reason: String,
        /// The refused and held shoe items taken out of play, in arrival order.
        voided: Vec<String>,
    },
}

impl Record {
    /// The `kind` column: `input`, `alarm`, `held` or `clear`.
    pub fn kind(&self) -> &'static str {
        match self {
            Record::Input { .. } => "input",
            Record::Alarm { .. } => "alarm",
            Record::Held { .. } => "held",
            Record::Clear { .. } => "clear",
        }
    }
}

impl fmt::Display for Record {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Record::Input { source, input } => match input {
                Input::Card(card) => write!(f, "card {card} ({source})"),
                Input::CutCard => write!(f, "cut card ({source})"),
                Input::Decision { seat, action } => {
                    write!(f, "seat {seat}: {} ({source})", action.name())
                }
                // Bets, bonus outcomes, shuffles and inputs added later: their JSON form.
                other => match serde_json::to_string(other) {
                    Ok(json) => write!(f, "{json} ({source})"),
                    Err(_) => write!(f, "{other:?} ({source})"),
                },
            },
            Record::Alarm {
                reason, expected, ..
            } => write!(f, "ALARM: {reason} — {expected}"),
            Record::Held { item } => write!(f, "held while locked: {item}"),
            Record::Clear { reason, voided } => {
                write!(f, "alarm cleared: {reason}")?;
                if !voided.is_empty() {
                    write!(f, " (voided: {})", voided.join(" "))?;
                }
                Ok(())
            }
        }
    }
}
