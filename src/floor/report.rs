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

/// The report of `table` over rounds settled in `[from_ms, to_ms)`.
pub fn report(table: &str, rounds: &[FloorRound], from_ms: i64, to_ms: i64) -> Report {
    let mut r = Report {
        table: table.to_string(),
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
        "table,from_ms,to_ms,rounds,handle,house_result,hold_percent,side_handle,side_result\n",
    );
    for r in reports {
        out.push_str(&format!(
            "{},{from_ms},{to_ms},{},{},{},{:.2},{},{}\n",
            csv_field(&r.table),
            r.rounds,
            r.handle,
            r.house_result,
            r.hold_percent(),
            r.side_handle,
            r.side_result
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
