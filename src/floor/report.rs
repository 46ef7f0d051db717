//! What the pit page shows about a table's rounds, folded from the rows the floor holds:
//! each round's inputs and settlement (a resolution's corrected result replaces the
//! original), and the per-table, per-shift report. Pure: the rows in, the rounds out.
//!
//! The rows are folded through the table's own code (`table::Follower`, the broker
//! publisher's replica), so the floor's settlements are the table's by construction.

use crate::engine::{BetKind, Event, RoundResult, Variant};
use crate::store::{LogRow, Record};
use crate::table::{DisputeSettings, Follower};
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::Arc;

/// One input, alarm or resolution of a round, for people.
#[derive(Debug, Clone, Serialize)]
pub struct RoundLine {
    /// The row.
    pub seq: u64,
    /// The table's commit time (Unix ms).
    pub at_ms: i64,
    /// Its kind.
    pub kind: String,
    /// What it says.
    pub text: String,
}

/// One round as the floor recalls it.
#[derive(Debug, Clone, Serialize)]
pub struct FloorRound {
    /// The table.
    pub table: String,
    /// The round's number.
    pub round: u64,
    /// When its first row was committed.
    pub opened_ms: i64,
    /// When its (last) settlement was committed.
    pub settled_ms: Option<i64>,
    /// Its rows in order.
    pub lines: Vec<RoundLine>,
    /// Its settlement (the corrected one after a resolution).
    pub result: Option<RoundResult>,
}

/// Folds a table's rows (from row 1, in order) into its rounds.
pub fn rounds(
    table: &str,
    variant_name: &str,
    variant: Arc<Variant>,
    rows: &[LogRow],
) -> Result<Vec<FloorRound>, String> {
    let mut follower = Follower::new(
        table,
        table,
        variant_name,
        variant,
        DisputeSettings::default(),
    );
    let mut out: BTreeMap<u64, FloorRound> = BTreeMap::new();
    for row in rows {
        let (snapshot, events) = follower.follow(row)?;
        let mut number = snapshot.round.number;
        for e in &events {
            if let Event::RoundSettled(r) = e {
                number = r.round;
            }
        }
        if number == 0 {
            continue;
        }
        let entry = out.entry(number).or_insert_with(|| FloorRound {
            table: table.to_string(),
            round: number,
            opened_ms: row.at_ms,
            settled_ms: None,
            lines: Vec::new(),
            result: None,
        });
        entry.lines.push(RoundLine {
            seq: row.seq,
            at_ms: row.at_ms,
            kind: row.record.kind().to_string(),
            text: row.record.to_string(),
        });
        for e in events {
            if let Event::RoundSettled(r) = e {
                entry.settled_ms = Some(row.at_ms);
                entry.result = Some(*r);
            }
        }
        if let Record::Resolve { .. } = row.record {
            // The corrected round's events replaced the result above; nothing else.
        }
    }
    Ok(out.into_values().collect())
}

/// Whether a round matches a search: a card (`7H`) among its cards, a player's id.
pub fn matches(round: &FloorRound, card: Option<&str>, player: Option<&str>) -> bool {
    let Some(result) = &round.result else {
        return card.is_none() && player.is_none();
    };
    let card_ok = card.is_none_or(|c| {
        let c = c.to_ascii_uppercase();
        result
            .dealer_cards
            .iter()
            .chain(result.hands.iter().flat_map(|h| h.cards.iter()))
            .chain(result.burned.iter())
            .any(|x| x.to_string() == c)
    });
    let player_ok = player.is_none_or(|p| {
        result
            .bets
            .iter()
            .filter_map(|b| b.player.as_ref())
            .any(|x| &**x == p)
            || result
                .hands
                .iter()
                .filter_map(|h| h.player.as_ref())
                .any(|x| &**x == p)
    });
    card_ok && player_ok
}

/// A table's figures over a shift (amounts in minor units).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Report {
    /// The table.
    pub table: String,
    /// Rounds settled in the shift (cancelled ones included, with no money).
    pub rounds: u64,
    /// Total staked on main bets, doubles, splits and insurance.
    pub handle: i64,
    /// Staked minus returned on those.
    pub house_result: i64,
    /// Total staked on side bets.
    pub side_handle: i64,
    /// Side-bet stakes minus their returns.
    pub side_result: i64,
    /// The table's wall clock going back within or across the shift ([`clock_steps`]):
    /// rounds may then be counted in a shift they were not dealt in, so the report says so.
    pub clock_steps: Vec<ClockStep>,
}

/// A row committed at an earlier wall-clock time than the row before it: the table's
/// clock was stepped back between them (NTP, an operator, a real-time clock reset). The
/// table counts every step it sees, either way, on `/readyz` and `/metrics`
/// (`clock::StepWatch`); from the rows alone the floor can tell only a step back — a step
/// forward looks like a quiet table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ClockStep {
    /// The row written after the step.
    pub seq: u64,
    /// Its time (Unix ms).
    pub at_ms: i64,
    /// The row before it's time, later than `at_ms`.
    pub previous_ms: i64,
}

/// Every step back of the table's clock in `rows` (in order): a row earlier than the one
/// before it.
pub fn clock_steps(rows: &[LogRow]) -> Vec<ClockStep> {
    rows.windows(2)
        .filter(|w| w[1].at_ms < w[0].at_ms)
        .map(|w| ClockStep {
            seq: w[1].seq,
            at_ms: w[1].at_ms,
            previous_ms: w[0].at_ms,
        })
        .collect()
}

impl Report {
    /// The house's result over the handle, in percent (main and side bets together).
    pub fn hold_percent(&self) -> f64 {
        let handle = self.handle + self.side_handle;
        if handle == 0 {
            0.0
        } else {
            (self.house_result + self.side_result) as f64 * 100.0 / handle as f64
        }
    }
}

/// The report of `table` over rounds settled in `[from_ms, to_ms)`, with the steps back
/// of its clock (`steps`, from [`clock_steps`]) that touch the shift: either side of the
/// step inside it.
pub fn report(
    table: &str,
    rounds: &[FloorRound],
    steps: &[ClockStep],
    from_ms: i64,
    to_ms: i64,
) -> Report {
    let within = |at: i64| at >= from_ms && at < to_ms;
    let mut r = Report {
        table: table.to_string(),
        clock_steps: steps
            .iter()
            .filter(|s| within(s.at_ms) || within(s.previous_ms))
            .cloned()
            .collect(),
        ..Report::default()
    };
    for round in rounds {
        let (Some(at), Some(result)) = (round.settled_ms, &round.result) else {
            continue;
        };
        if at < from_ms || at >= to_ms {
            continue;
        }
        r.rounds += 1;
        for b in &result.bets {
            let (staked, returned) = (b.staked, b.returned);
            match b.kind {
                BetKind::Side(_) => {
                    r.side_handle += staked;
                    r.side_result += staked - returned;
                }
                BetKind::Main | BetKind::Insurance => {
                    r.handle += staked;
                    r.house_result += staked - returned;
                }
            }
        }
    }
    r
}

/// Reports as CSV: a header, one line per report.
pub fn csv(reports: &[Report], from_ms: i64, to_ms: i64) -> String {
    let mut out = String::from(
        "table,from_ms,to_ms,rounds,handle,house_result,hold_percent,side_handle,side_result,clock_steps\n",
    );
    for r in reports {
        out.push_str(&format!(
            "{},{from_ms},{to_ms},{},{},{},{:.2},{},{},{}\n",
            csv_field(&r.table),
            r.rounds,
            r.handle,
            r.house_result,
            r.hold_percent(),
            r.side_handle,
            r.side_result,
            r.clock_steps.len()
        ));
    }
    out
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(seq: u64, at_ms: i64) -> LogRow {
        LogRow {
            seq,
            at_ms,
            record: Record::Clear {
                reason: String::new(),
                voided: Vec::new(),
                by: String::new(),
            },
            hash: String::new(),
        }
    }

    #[test]
    fn a_step_back_of_the_clock_is_marked_in_the_shifts_it_touches() {
        let rows = [row(1, 1_000), row(2, 2_000), row(3, 1_500), row(4, 1_600)];
        let steps = clock_steps(&rows);
        assert_eq!(
            steps,
            [ClockStep {
                seq: 3,
                at_ms: 1_500,
                previous_ms: 2_000
            }]
        );
        // A shift holding either side of the step says so; one holding neither does not.
        assert_eq!(report("t", &[], &steps, 1_900, 3_000).clock_steps, steps);
        assert_eq!(report("t", &[], &steps, 1_400, 1_550).clock_steps, steps);
        assert!(report("t", &[], &steps, 0, 1_400).clock_steps.is_empty());
        let line = csv(&[report("t", &[], &steps, 0, 3_000)], 0, 3_000);
        assert!(
            line.lines().nth(1).is_some_and(|l| l.ends_with(",1")),
            "{line}"
        );
        assert!(clock_steps(&[row(1, 5), row(2, 5), row(3, 6)]).is_empty());
    }
}
