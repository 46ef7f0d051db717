//! `croupier timeline …`: a restored table's new timeline, and the wallet movements of
//! the history it superseded, for the operator to reconcile.

use super::args::TableArgs;
use super::{fail, with_runtime};
use clap::Subcommand;
use std::process::ExitCode;

/// `croupier timeline …`.
#[derive(Subcommand)]
pub enum TimelineCommand {
    /// Keeps this table's log although the broker holds another history of the table (a
    /// restored database whose lost rows were published; a second table that published
    /// under this id): run with the table stopped. A new timeline begins in the log; at
    /// the next start the log is published after the last row both share, and the
    /// broker's other history stays there, superseded. Exit 0 when a timeline began or
    /// there was nothing to continue over (it says which), 2 on an error.
    Continue {
        #[command(flatten)]
        table: TableArgs,
    },
    /// Lists the wallet movements of the rounds a restore lost, which the restored log
    /// does not know: read from the rows the broker keeps of the superseded history
    /// (after `croupier timeline continue`), by round, seat and player, with each
    /// player's totals — for the operator to reconcile with the wallet. Read-only; the
    /// table may be running. Exit 0, 2 on an error.
    Lost {
        #[command(flatten)]
        table: TableArgs,
        /// JSON instead of text.
        #[arg(long)]
        json: bool,
    },
}

/// `croupier timeline …`: exit 0 when done (or nothing to do), 2 on an error.
pub fn timeline_command(command: TimelineCommand) -> ExitCode {
    match command {
        TimelineCommand::Continue { table } => with_runtime(timeline_continue(table)),
        TimelineCommand::Lost { table, json } => with_runtime(timeline_lost(table, json)),
    }
}

/// `croupier timeline continue`.
async fn timeline_continue(table: TableArgs) -> ExitCode {
    use croupier::publish::branch::{continue_timeline, Outcome};
    let (config, db) = match table.load() {
        Ok(loaded) => loaded,
        Err(code) => return code,
    };
    match continue_timeline(&config, &db).await {
        Ok(Outcome::Continued {
            seq,
            id,
            superseded,
            common_seq,
            public_offset,
        }) => {
            println!(
                "table {}: timeline {id} begins at row {seq}. At the next start the log is published after row {common_seq}, the last row the broker's history shares with it; the broker's rows {}..={} (timeline {}) stay there, superseded. Public ids go on from {}. `croupier timeline lost` lists the wallet movements of the superseded rows, which this log does not know.",
                config.table.id,
                common_seq + 1,
                superseded.seq,
                if superseded.timeline.is_empty() { "from before timelines" } else { superseded.timeline.as_str() },
                common_seq + 1 + public_offset,
            );
            ExitCode::SUCCESS
        }
        Ok(Outcome::NothingToContinue(why)) => {
            println!("table {}: {why}", config.table.id);
            ExitCode::SUCCESS
        }
        Err(e) => fail(e),
    }
}

/// `croupier timeline lost`.
async fn timeline_lost(table: TableArgs, json: bool) -> ExitCode {
    let (config, db) = match table.load() {
        Ok(loaded) => loaded,
        Err(code) => return code,
    };
    let lost = match croupier::publish::branch::lost_tail(&config, &db).await {
        Ok(lost) => lost,
        Err(e) => return fail(e),
    };
    if json {
        match serde_json::to_string_pretty(&lost) {
            Ok(text) => println!("{text}"),
            Err(e) => return fail(e),
        }
        return ExitCode::SUCCESS;
    }
    let money = config.table.currency();
    print!("{}", lost_report(&config.table.id, &lost, &money));
    ExitCode::SUCCESS
}

/// `croupier timeline lost` for people: each seat-round the superseded rows moved money
/// in, what became of it, and per player what the operator has to do.
fn lost_report(
    table: &str,
    lost: &croupier::publish::lost::LostTail,
    money: &croupier::currency::Currency,
) -> String {
    use croupier::publish::lost::{Here, LostState};
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "table {table}: the broker's superseded rows {}..={} (timeline {}; this log continued as timeline {}): what they moved in the wallet after the last row both share, which this log does not know",
        lost.common_seq + 1,
        lost.last_seq,
        if lost.superseded.is_empty() { "from before timelines" } else { lost.superseded.as_str() },
        lost.timeline
    );
    if lost.moves.is_empty() {
        let _ = writeln!(out, "no player's money moved in them");
        return out;
    }
    // Per player: (paid twice: net to take back, stakes held that nothing settles, net of
    // the rounds played there only).
    let mut totals: std::collections::BTreeMap<&str, (i64, i64, i64)> = Default::default();
    for m in &lost.moves {
        let what = match (m.here, m.state) {
            (Here::None, LostState::Final) => "final there: played and paid on that history only",
            (Here::None, LostState::Settled) => {
                "settled there, never final: nothing credited, its stakes stayed debited"
            }
            (Here::None, LostState::Open) => {
                "in play when that history ends: its stakes stayed debited, and nothing will settle them"
            }
            (Here::Voided, _) => {
                "in play at the fork, voided here (its stakes up to the fork returned by this log): what that history staked after the fork and paid is extra"
            }
            (Here::Settled, _) => {
                "settled at the fork and paid here too once final: that history's payment is a second one"
            }
            (Here::Open, _) => "in play at the fork and still in play here",
        };
        let _ = writeln!(
            out,
            "round {:>5}  seat {:>2}  {:<16} staked {:>12}  returned {:>12}  {what}",
            m.round,
            m.seat,
            m.player,
            money.format(m.staked),
            money.format(m.returned),
        );
        let t = totals.entry(m.player.as_str()).or_default();
        match (m.here, m.state) {
            (Here::Voided | Here::Settled, _) => t.0 += m.returned - m.staked,
            (Here::None, LostState::Settled | LostState::Open) => t.1 += m.staked,
            (Here::None, LostState::Final) => t.2 += m.returned - m.staked,
            (Here::Open, _) => {}
        }
    }
    for (player, (twice, held, there)) in totals {
        let _ = writeln!(
            out,
            "{player}: on rounds this log also settles, that history's net to the player {} — reverse it to match this log; stakes no history will settle {} — return them (the sheets void an interrupted round); rounds played only there, net {} — as paid",
            money.format(twice),
            money.format(held),
            money.format(there),
        );
    }
    out
}
