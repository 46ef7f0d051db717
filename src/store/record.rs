//! What one row of the event log says. The `payload` column holds a [`Record`] as JSON;
//! the `kind` column repeats its tag so SQL can filter without parsing.

use crate::engine::{Input, SeatId};
use crate::store::dispute::{Origin, Resolution};
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
    /// The table's own clock: a tick at a deadline or just before an input that opens a
    /// timed wait, and the bets of a betting countdown that ran out.
    Clock,
    /// The table itself at the start of a restored timeline: the round a restore
    /// interrupted, voided (`table/task/restore.rs`).
    Restore,
}

impl Source {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Shoe => "shoe",
            Source::Buttons => "buttons",
            Source::Api => "api",
            Source::Demo => "demo",
            Source::Clock => "clock",
            Source::Restore => "restore",
        }
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The row that opens a dispute (`Record::Dispute`): who raised it, about what, and the
/// round as it stood. Its own struct so that the table's recovery, the store's projection,
/// the pit and the log's text read one value instead of each naming its fields; on the wire
/// it is the same object as a struct variant would be (an internally tagged newtype).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RaisedDispute {
    /// Who raised it.
    pub origin: Origin,
    /// The seat it concerns, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seat: Option<SeatId>,
    /// The round it concerns.
    pub round: u64,
    /// The complaint.
    pub reason: String,
    /// The account (or player token's seat) that raised it.
    pub by: String,
    /// The round as it stood, frozen for the record: the table's `RoundView`, kept as
    /// the JSON it wrote (the log is evidence; the store has no need to read it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frozen: Option<Box<serde_json::Value>>,
}

/// The row that resolves a dispute (`Record::Resolve`); on the wire the same object a
/// struct variant would be, like [`RaisedDispute`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResolvedDispute {
    /// The dispute (the sequence number of the row that opened it).
    pub dispute: u64,
    /// What was decided.
    pub resolution: Resolution,
    /// Why.
    pub reason: String,
    /// The supervisor who proposed it.
    pub proposed_by: String,
    /// The supervisor who confirmed it (the same one unless the two-person rule applies).
    pub confirmed_by: String,
    /// The round's corrected inputs.
    pub inputs: Vec<Input>,
    /// Held shoe items taken out of play.
    pub voided: Vec<String>,
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
        /// Who cleared it (empty in logs written before accounts existed).
        #[serde(default, skip_serializing_if = "String::is_empty")]
        by: String,
    },
    /// A dispute halts the round: no input is applied until a supervisor resolves it; shoe
    /// items that arrive meanwhile are `held`.
    Dispute(RaisedDispute),
    /// A supervisor resolved the open dispute. `inputs` is the round's corrected input list
    /// (from its bets), replayed on the engine as it was before the round opened: the
    /// original inputs stay in the log as they were, this row says what replaced them.
    Resolve(ResolvedDispute),
    /// The round's dispute window ended: its result is final.
    Final {
        /// The round.
        round: u64,
    },
    /// The betting countdown opened (remote play, `[play] betting_seconds`): on the table's
    /// clock (`table::clock`), from `at_ms` to `deadline_ms`. It closes at the next `Tick`
    /// row at or past the deadline, or at the tick row just before the bets that close it
    /// early; a restart replays it open with the same deadline.
    Countdown {
        /// The round the bets will be for.
        round: u64,
        /// When it opened, table ms.
        at_ms: u64,
        /// When it closes, table ms.
        deadline_ms: u64,
    },
    /// The store works again after a failed write: the first row written afterwards. It
    /// takes the spill file's entries up to `spill_through` into the log; with any items or
    /// alarms it locks the table like an alarm, the items held (a supervisor clears them
    /// void, or resolves the alarm's dispute).
    Recovered {
        /// What the store said when it failed.
        error: String,
        /// The last spill file entry this row accounts for (0: none).
        spill_through: u64,
        /// Shoe items read while the store failed, in arrival order (the card whose write
        /// failed first).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        items: Vec<String>,
        /// Alarms that could not be recorded meanwhile (their reasons).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        alarms: Vec<String>,
    },
    /// A new timeline of the table's history begins at this row (`store/timeline.rs`):
    /// the history may differ from what others saw under the previous one. Replay passes
    /// over it; everything outside the table that names rows or rounds names them with
    /// the timeline.
    Timeline {
        /// The new timeline's id (32 lowercase hex, random).
        id: String,
        /// The timeline it follows.
        parent: String,
        /// Why it began.
        cause: TimelineCause,
    },
}

/// Why a new timeline began.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "cause")]
pub enum TimelineCause {
    /// The database was restored from a backup: whatever the table wrote after the backup
    /// was taken is not in this log, and others may have seen it.
    Restored {
        /// When the backup was taken (Unix ms).
        backup_ms: i64,
        /// The log's last row in the backup.
        backup_seq: u64,
    },
    /// The operator continued on this log although the broker holds another history of
    /// the table (`croupier timeline continue`): that history is kept there, superseded.
    Continued {
        /// The broker's last row of the other history: its timeline, sequence number and
        /// chain hash.
        superseded: BrokerHead,
        /// The last row the broker holds that this log holds too (0: none): publishing
        /// goes on after it.
        common_seq: u64,
        /// Added to a row's sequence number in the ids of the public messages published
        /// for it from now on, so that they sort after every public message of the
        /// superseded history (relays, viewers and resumers take ids as growing).
        public_offset: u64,
    },
}

/// A row as the broker holds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BrokerHead {
    /// The timeline it was published under (empty: published before timelines existed).
    pub timeline: String,
    /// Its sequence number.
    pub seq: u64,
    /// Its chain hash (hex).
    pub hash: String,
}

impl Record {
    /// The `kind` column: `input`, `alarm`, `held`, `clear`, `dispute`, `resolve`,
    /// `final`, `recovered`, `countdown` or `timeline`.
    pub fn kind(&self) -> &'static str {
        match self {
            Record::Input { .. } => "input",
            Record::Alarm { .. } => "alarm",
            Record::Held { .. } => "held",
            Record::Clear { .. } => "clear",
            Record::Dispute(_) => "dispute",
            Record::Resolve(_) => "resolve",
            Record::Final { .. } => "final",
            Record::Recovered { .. } => "recovered",
            Record::Countdown { .. } => "countdown",
            Record::Timeline { .. } => "timeline",
        }
    }
}

impl Record {
    /// The alarm a `recovered` row raises — `(reason, expected)` — when the outage left
    /// items or alarms to decide on; `None` for a plain `recovered` row, or another kind.
    pub fn recovered_alarm(&self) -> Option<(String, String)> {
        let Record::Recovered {
            error,
            items,
            alarms,
            ..
        } = self
        else {
            return None;
        };
        if items.is_empty() && alarms.is_empty() {
            return None;
        }
        let mut reason = format!("the store could not be written ({error})");
        if !items.is_empty() {
            reason.push_str(&format!(
                "; read meanwhile and not applied: {}",
                items.join(" ")
            ));
        }
        if !alarms.is_empty() {
            reason.push_str(&format!("; alarms meanwhile: {}", alarms.join("; ")));
        }
        let expected = if items.is_empty() {
            "check what the alarms say, then clear the alarm".to_string()
        } else {
            "a supervisor decides: clear the alarm to void the held items (take them out of \
             play), or resolve its dispute — rejecting it plays them in order where they still \
             fit"
            .to_string()
        };
        Some((reason, expected))
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
                Input::DoubleShort { seat, short } => write!(
                    f,
                    "seat {seat}: double, {} cannot follow: a hit ({source})",
                    short.join(", ")
                ),
                Input::SplitShort { seat, short } => write!(
                    f,
                    "seat {seat}: split, {} cannot follow: the first hand only ({source})",
                    short.join(", ")
                ),
                // Bets, bonus outcomes, shuffles and inputs added later: their JSON form.
                other => match serde_json::to_string(other) {
                    Ok(json) => write!(f, "{json} ({source})"),
                    Err(_) => write!(f, "{other:?} ({source})"),
                },
            },
            Record::Countdown {
                round,
                at_ms,
                deadline_ms,
            } => write!(
                f,
                "betting countdown for round {round}: {} ms (table clock {at_ms} to {deadline_ms})",
                deadline_ms.saturating_sub(*at_ms)
            ),
            Record::Alarm {
                reason, expected, ..
            } => write!(f, "ALARM: {reason} — {expected}"),
            Record::Timeline { id, parent, cause } => match cause {
                TimelineCause::Restored { backup_seq, .. } => write!(
                    f,
                    "NEW TIMELINE {id}: restored from a backup at row {backup_seq} (was {parent})"
                ),
                TimelineCause::Continued {
                    superseded,
                    common_seq,
                    ..
                } => write!(
                    f,
                    "NEW TIMELINE {id}: continued by the operator after row {common_seq}; the \
                     broker's history to its row {} is superseded (was {parent})",
                    superseded.seq
                ),
            },
            Record::Held { item } => write!(f, "held while locked: {item}"),
            Record::Clear { reason, voided, by } => {
                write!(f, "alarm cleared: {reason}")?;
                if !by.is_empty() {
                    write!(f, " (by {by})")?;
                }
                if !voided.is_empty() {
                    write!(f, " (voided: {})", voided.join(" "))?;
                }
                Ok(())
            }
            Record::Dispute(d) => {
                write!(f, "DISPUTE on round {}", d.round)?;
                if let Some(seat) = d.seat {
                    write!(f, ", seat {seat}")?;
                }
                write!(f, " raised by {} {}: {}", d.origin.as_str(), d.by, d.reason)
            }
            Record::Resolve(r) => {
                write!(
                    f,
                    "dispute {} resolved: {} ({}); proposed by {}, confirmed by {}",
                    r.dispute,
                    r.resolution.name(),
                    r.reason,
                    r.proposed_by,
                    r.confirmed_by
                )?;
                if !r.voided.is_empty() {
                    write!(f, " (voided: {})", r.voided.join(" "))?;
                }
                Ok(())
            }
            Record::Final { round } => write!(f, "round {round} is final"),
            Record::Recovered {
                error,
                items,
                alarms,
                ..
            } => {
                write!(f, "STORE RECOVERED after a failed write ({error})")?;
                if !items.is_empty() {
                    write!(f, "; held, not recorded meanwhile: {}", items.join(" "))?;
                }
                if !alarms.is_empty() {
                    write!(f, "; alarms meanwhile: {}", alarms.join("; "))?;
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Logs written while `Dispute` was a struct variant must still read, and a new row
    /// must write the same object: the log is evidence and its rows are hashed as written.
    #[test]
    fn a_dispute_row_keeps_its_json() {
        let written = r#"{"kind":"dispute","origin":"player","seat":3,"round":7,"reason":"short paid","by":"player:seat 3"}"#;
        let record: Record = serde_json::from_str(written).expect("reads");
        let Record::Dispute(d) = &record else {
            panic!("not a dispute: {record:?}");
        };
        assert_eq!(
            (d.origin, d.seat, d.round, d.reason.as_str(), d.by.as_str()),
            (Origin::Player, Some(3), 7, "short paid", "player:seat 3")
        );
        assert!(d.frozen.is_none());
        assert_eq!(serde_json::to_string(&record).expect("writes"), written);
    }

    /// The same for the row that resolves one.
    #[test]
    fn a_resolve_row_keeps_its_json() {
        let written = r#"{"kind":"resolve","dispute":12,"resolution":{"op":"reject"},"reason":"as dealt","proposed_by":"user:s1","confirmed_by":"user:s2","inputs":[],"voided":["7H"]}"#;
        let record: Record = serde_json::from_str(written).expect("reads");
        let Record::Resolve(r) = &record else {
            panic!("not a resolution: {record:?}");
        };
        assert_eq!(
            (r.dispute, &r.resolution, r.confirmed_by.as_str()),
            (12, &Resolution::Reject, "user:s2")
        );
        assert_eq!(r.voided, ["7H"]);
        assert_eq!(serde_json::to_string(&record).expect("writes"), written);
    }
}
