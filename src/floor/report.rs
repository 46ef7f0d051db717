//! What the pit page shows about a table's rounds, folded from the rows the floor holds:
//! each round's inputs and settlement (a resolution's corrected result replaces the
//! original), and the per-table, per-shift report. Pure: the rows in, the rounds out.
//!
//! The rows are folded through the table's own code (`table::Follower`, the broker
//! publisher's replica), so the floor's settlements are the table's by construction.

use crate::currency::Currency;
use crate::engine::{BetKind, Event, Input, RoundResult, Variant};
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

/// Folds a table's rows (from row 1, in order) into its rounds; amounts in the lines are
/// written in `currency`.
pub fn rounds(
    table: &str,
    variant_name: &str,
    variant: Arc<Variant>,
    rows: &[LogRow],
    currency: &Currency,
) -> Result<Vec<FloorRound>, String> {
    fold(table, variant_name, variant, rows, currency).map(|f| f.rounds)
}

/// What [`fold`] gives: the rounds, and the table as the last row left it.
pub struct Folded {
    /// The rounds.
    pub rounds: Vec<FloorRound>,
    /// The table after the last row (what a dispute's resolutions are checked against:
    /// `Follower::replays`).
    pub follower: Follower,
    /// Its state after the last row (`None` before the first): its open dispute.
    pub snapshot: Option<Arc<crate::table::Snapshot>>,
}

/// [`rounds`], and the table as the last row left it.
pub fn fold(
    table: &str,
    variant_name: &str,
    variant: Arc<Variant>,
    rows: &[LogRow],
    currency: &Currency,
) -> Result<Folded, String> {
    let mut follower = Follower::new(
        table,
        table,
        variant_name,
        variant,
        DisputeSettings::default(),
    );
    let mut out: BTreeMap<u64, FloorRound> = BTreeMap::new();
    let mut last = None;
    for row in rows {
        let (snapshot, events) = follower.follow(row)?;
        last = Some(Arc::clone(&snapshot));
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
            text: line_text(&row.record, currency),
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
    Ok(Folded {
        rounds: out.into_values().collect(),
        follower,
        snapshot: last,
    })
}

/// A row for people: bets as amounts in the table's currency, seat by seat (the log's own
/// text writes them as the engine's JSON, minor units without a currency).
fn line_text(record: &Record, currency: &Currency) -> String {
    match record {
        Record::Input {
            source,
            input: Input::Bets(seats),
        } => {
            let seats: Vec<String> =
                seats
                    .iter()
                    .map(|b| {
                        let mut parts = vec![format!("main {}", currency.format(b.main))];
                        parts.extend(
                            b.side
                                .iter()
                                .map(|(name, a)| format!("{name} {}", currency.format(*a))),
                        );
                        parts.extend(b.behind.iter().map(|bb| {
                            format!("behind ({}) {}", bb.player, currency.format(bb.main))
                        }));
                        let who = b
                            .player
                            .as_deref()
                            .map_or(String::new(), |p| format!(" ({p})"));
                        format!("seat {}{who}: {}", b.seat, parts.join(", "))
                    })
                    .collect();
            format!("bets — {} ({source})", seats.join("; "))
        }
        other => currency.write_amounts(&other.to_string()),
    }
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
    /// The width of each of `slices`, ms.
    pub slice_ms: i64,
    /// The shift cut into `slice_ms` slices from its start, for the pit page's charts.
    pub slices: Vec<Slice>,
    /// The sum of the squares of each round's house result (main and side bets), for
    /// [`Report::hold_margin`].
    #[serde(skip)]
    pub result_squares: i128,
}

/// One slice of a shift: what was settled in `[from_ms, from_ms + slice_ms)`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Slice {
    /// Its start (Unix ms).
    pub from_ms: i64,
    /// Rounds settled in it.
    pub rounds: u64,
    /// Staked on every bet, side bets included.
    pub handle: i64,
    /// The house's result on them.
    pub result: i64,
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
    /// Staked on every bet, side bets included: what the hold is taken over.
    pub fn total_handle(&self) -> i64 {
        self.handle + self.side_handle
    }

    /// The house's result on every bet, side bets included.
    pub fn total_result(&self) -> i64 {
        self.house_result + self.side_result
    }

    /// The house's result over the handle, in percent (main and side bets together:
    /// [`Report::total_result`] over [`Report::total_handle`]).
    pub fn hold_percent(&self) -> f64 {
        let handle = self.total_handle();
        if handle == 0 {
            0.0
        } else {
            self.total_result() as f64 * 100.0 / handle as f64
        }
    }

    /// How far the hold may be from what the game really holds by chance alone, in
    /// percentage points (95 %: 1.96 standard errors of the total result over the handle,
    /// the spread measured from the shift's own rounds); `None` under two rounds. A few
    /// rounds of blackjack swing the hold by tens of points, so the page says so beside it.
    pub fn hold_margin(&self) -> Option<f64> {
        let handle = self.total_handle();
        if self.rounds < 2 || handle == 0 {
            return None;
        }
        let n = self.rounds as f64;
        let total = self.total_result() as f64;
        let mean = total / n;
        let variance = ((self.result_squares as f64) / n - mean * mean).max(0.0) * n / (n - 1.0);
        Some(1.96 * (variance * n).sqrt() * 100.0 / handle as f64)
    }
}

/// The report of `table` over rounds settled in `[from_ms, to_ms)`, with the steps back
/// of its clock (`steps`, from [`clock_steps`]) that touch the shift: either side of the
/// step inside it; cut into slices of `slice_ms` (at least 1 ms) for the charts.
pub fn report(
    table: &str,
    rounds: &[FloorRound],
    steps: &[ClockStep],
    (from_ms, to_ms): (i64, i64),
    slice_ms: i64,
) -> Report {
    let within = |at: i64| at >= from_ms && at < to_ms;
    let slice_ms = slice_ms.max(1);
    let count = usize::try_from(((to_ms - from_ms).max(0) + slice_ms - 1) / slice_ms).unwrap_or(0);
    let mut r = Report {
        slice_ms,
        slices: (0..count)
            .map(|i| Slice {
                from_ms: from_ms + i as i64 * slice_ms,
                ..Slice::default()
            })
            .collect(),
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
        let (mut staked_all, mut result_all) = (0, 0);
        for b in &result.bets {
            let (staked, returned) = (b.staked, b.returned);
            staked_all += staked;
            result_all += staked - returned;
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
        r.result_squares += i128::from(result_all) * i128::from(result_all);
        let at_slice = usize::try_from((at - from_ms) / slice_ms).unwrap_or(0);
        if let Some(slice) = r.slices.get_mut(at_slice) {
            slice.rounds += 1;
            slice.handle += staked_all;
            slice.result += result_all;
        }
    }
    r
}

/// Reports as CSV: a header, one line per report.
pub fn csv(reports: &[Report], from_ms: i64, to_ms: i64) -> String {
    let mut out = String::from(
        "table,from_ms,to_ms,rounds,handle,house_result,hold_percent,side_handle,side_result,clock_steps,total_handle,total_result\n",
    );
    for r in reports {
        out.push_str(&format!(
            "{},{from_ms},{to_ms},{},{},{},{:.2},{},{},{},{},{}\n",
            csv_field(&r.table),
            r.rounds,
            r.handle,
            r.house_result,
            r.hold_percent(),
            r.side_handle,
            r.side_result,
            r.clock_steps.len(),
            r.total_handle(),
            r.total_result()
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

    /// A settled round at `at_ms` with one main bet: `staked`, `returned`.
    fn settled(round: u64, at_ms: i64, staked: i64, returned: i64) -> FloorRound {
        let result = serde_json::json!({
            "round": round, "shoe": 1, "dealer_cards": [], "dealer_total": 0,
            "dealer_natural": false, "hands": [], "burned": [], "cancelled": false,
            "bets": [{"seat": 1, "kind": "main", "staked": staked, "returned": returned}],
        });
        FloorRound {
            table: "t".into(),
            round,
            opened_ms: at_ms,
            settled_ms: Some(at_ms),
            lines: Vec::new(),
            result: Some(serde_json::from_value(result).expect("a result")),
        }
    }

    #[test]
    fn the_shift_is_cut_into_slices_and_the_hold_carries_its_margin() {
        let rounds = [
            settled(1, 500, 100, 0),
            settled(2, 1_500, 100, 200),
            settled(3, 1_999, 100, 0),
            settled(4, 3_000, 100, 0), // after the shift
        ];
        let r = report("t", &rounds, &[], (0, 2_500), 1_000);
        let slices: Vec<(i64, u64, i64, i64)> = r
            .slices
            .iter()
            .map(|s| (s.from_ms, s.rounds, s.handle, s.result))
            .collect();
        assert_eq!(
            slices,
            [(0, 1, 100, 100), (1_000, 2, 200, 0), (2_000, 0, 0, 0)]
        );
        assert_eq!((r.rounds, r.handle, r.house_result), (3, 300, 100));
        // Results 100, -100, 100: sd 115.47 a round, 1.96 * 115.47 * sqrt(3) over 300.
        let margin = r.hold_margin().expect("a margin");
        assert!((margin - 130.66).abs() < 0.01, "{margin}");
        assert_eq!(
            report("t", &rounds[..1], &[], (0, 2_500), 1_000).hold_margin(),
            None
        );
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
        assert_eq!(
            report("t", &[], &steps, (1_900, 3_000), 100).clock_steps,
            steps
        );
        assert_eq!(
            report("t", &[], &steps, (1_400, 1_550), 100).clock_steps,
            steps
        );
        assert!(report("t", &[], &steps, (0, 1_400), 100)
            .clock_steps
            .is_empty());
        let line = csv(&[report("t", &[], &steps, (0, 3_000), 100)], 0, 3_000);
        let column = line
            .lines()
            .next()
            .and_then(|h| h.split(',').position(|c| c == "clock_steps"));
        let steps_field = line
            .lines()
            .nth(1)
            .zip(column)
            .and_then(|(l, i)| l.split(',').nth(i));
        assert_eq!(steps_field, Some("1"), "{line}");
        assert!(clock_steps(&[row(1, 5), row(2, 5), row(3, 6)]).is_empty());
    }
}
