//! The projections: `shoes`, `rounds`, `bets`, `settlements` and `alarms`, written from a
//! log row's record and events in the same transaction as the row (inside a savepoint, so
//! a projection that fails never loses the row). Never read back into the engine.
//!
//! Written once, over [`Sink`]: the statements and their values are the same whichever
//! connection runs them — the sqlx writer (rows with an audit row, or when the direct
//! connection is busy) or the direct connection on the table's thread (`direct.rs`).

use super::{Record, StoreError};
use crate::engine::{Event, Input};
use sqlx::SqliteConnection;

/// Rows per multi-row INSERT: 9 values each stays far below SQLite's limit of 32,766
/// bound values per statement, even for a common draw's thousands of players.
const ROWS_PER_INSERT: usize = 500;

/// A value bound to one of the projections' statements.
#[derive(Debug, Clone, Copy)]
pub(super) enum Arg<'a> {
    /// An integer.
    Int(i64),
    /// A text.
    Text(&'a str),
    /// SQL `NULL`.
    Null,
}

impl<'a> From<Option<i64>> for Arg<'a> {
    fn from(v: Option<i64>) -> Arg<'a> {
        v.map_or(Arg::Null, Arg::Int)
    }
}

impl<'a> From<Option<&'a str>> for Arg<'a> {
    fn from(v: Option<&'a str>) -> Arg<'a> {
        v.map_or(Arg::Null, Arg::Text)
    }
}

/// A connection inside the row's transaction that runs one statement with its values.
pub(super) trait Sink {
    /// Runs `sql` with `args` bound in order.
    async fn exec(&mut self, sql: &str, args: &[Arg<'_>]) -> Result<(), StoreError>;
}

impl Sink for SqliteConnection {
    async fn exec(&mut self, sql: &str, args: &[Arg<'_>]) -> Result<(), StoreError> {
        let mut query = sqlx::query(sql);
        for arg in args {
            query = match *arg {
                Arg::Int(v) => query.bind(v),
                Arg::Text(v) => query.bind(v),
                Arg::Null => query.bind(None::<i64>),
            };
        }
        query.execute(&mut *self).await?;
        Ok(())
    }
}

/// `INSERT INTO … VALUES (?, …), (?, …)…`: `rows` rows of `columns` placeholders each.
fn multi_row(prefix: &str, columns: usize, rows: usize) -> String {
    let row = format!("({})", vec!["?"; columns].join(", "));
    format!("{prefix} VALUES {}", vec![row; rows].join(", "))
}

/// Writes the projections of one row (shoes, rounds, bets, settlements, alarms).
pub(super) async fn project(
    conn: &mut impl Sink,
    table: &str,
    seq_i: i64,
    record: &Record,
    events: &[Event],
    shoe: u32,
) -> Result<(), StoreError> {
    use Arg::{Int, Text};
    if let Record::Resolve { .. } = record {
        // The corrected round replaces the recorded one: its bets and settlement are
        // written again from the corrected replay's events below.
        if let Some(number) = events.iter().find_map(|e| match e {
            Event::RoundOpened { round } => Some(*round),
            _ => None,
        }) {
            let number = i64::try_from(number).unwrap_or(i64::MAX);
            for sql in [
                "DELETE FROM bets WHERE table_id = ? AND round = ?",
                "DELETE FROM settlements WHERE table_id = ? AND round = ?",
                "UPDATE rounds SET settled_seq = NULL, result = NULL, final_seq = NULL WHERE table_id = ? AND round = ?",
            ] {
                conn.exec(sql, &[Text(table), Int(number)]).await?;
            }
        }
    }
    for event in events {
        match event {
            Event::ShoeShuffled { shoe } => {
                conn.exec(
                    "INSERT OR REPLACE INTO shoes (table_id, shoe, started_seq) VALUES (?, ?, ?)",
                    &[Text(table), Int(i64::from(*shoe)), Int(seq_i)],
                )
                .await?;
            }
            Event::RoundOpened { round: number } => {
                let number = i64::try_from(*number).unwrap_or(i64::MAX);
                // A resolution replays the round's opening: the row stays as first written.
                conn.exec(
                    "INSERT INTO rounds (table_id, round, shoe, opened_seq) VALUES (?, ?, ?, ?) \
                     ON CONFLICT (table_id, round) DO NOTHING",
                    &[Text(table), Int(number), Int(i64::from(shoe)), Int(seq_i)],
                )
                .await?;
                let opening = match record {
                    Record::Input { input, .. } => Some(input),
                    Record::Resolve(r) => r.inputs.first(),
                    _ => None,
                };
                if let Some(input) = opening {
                    let bets: Vec<_> = (1i64..).zip(placed_bets(input)).collect();
                    // Many rows per statement: one statement for a round's bets, not one
                    // per bet.
                    for chunk in bets.chunks(ROWS_PER_INSERT) {
                        let sql = multi_row(
                            "INSERT INTO bets (table_id, round, line, seat, player, kind, amount)",
                            7,
                            chunk.len(),
                        );
                        let args: Vec<Arg> = chunk
                            .iter()
                            .flat_map(|(line, (seat, player, kind, amount))| {
                                [
                                    Text(table),
                                    Int(number),
                                    Int(*line),
                                    Int(i64::from(*seat)),
                                    Text(player),
                                    Text(kind),
                                    Int(*amount),
                                ]
                            })
                            .collect();
                        conn.exec(&sql, &args).await?;
                    }
                }
            }
            Event::RoundSettled(result) => {
                let number = i64::try_from(result.round).unwrap_or(i64::MAX);
                // A cancellation of a settled round replaces its settlement.
                conn.exec(
                    "DELETE FROM settlements WHERE table_id = ? AND round = ?",
                    &[Text(table), Int(number)],
                )
                .await?;
                let json = serde_json::to_string(result)?;
                conn.exec(
                    "UPDATE rounds SET settled_seq = ?, result = ? WHERE table_id = ? AND round = ?",
                    &[Int(seq_i), Text(&json), Text(table), Int(number)],
                )
                .await?;
                let settled = (1i64..)
                    .zip(&result.bets)
                    .map(|(line, bet)| Ok((line, bet, serde_json::to_string(bet)?)))
                    .collect::<Result<Vec<_>, serde_json::Error>>()?;
                for chunk in settled.chunks(ROWS_PER_INSERT) {
                    let sql = multi_row(
                        "INSERT INTO settlements (table_id, round, line, seat, player, kind, staked, returned, detail)",
                        9,
                        chunk.len(),
                    );
                    let args: Vec<Arg> = chunk
                        .iter()
                        .flat_map(|(line, bet, detail)| {
                            [
                                Text(table),
                                Int(number),
                                Int(*line),
                                Int(i64::from(bet.seat)),
                                Text(bet.player.as_deref().unwrap_or("")),
                                Text(bet.kind.name()),
                                Int(bet.staked),
                                Int(bet.returned),
                                Text(detail),
                            ]
                        })
                        .collect();
                    conn.exec(&sql, &args).await?;
                }
            }
            _ => {}
        }
    }
    let alarm = match record {
        Record::Alarm {
            reason, expected, ..
        } => Some((reason.clone(), expected.clone())),
        _ => record.recovered_alarm(),
    };
    if let Some((reason, expected)) = alarm {
        conn.exec(
            "INSERT INTO alarms (table_id, raised_seq, reason, expected) VALUES (?, ?, ?, ?)",
            &[Text(table), Int(seq_i), Text(&reason), Text(&expected)],
        )
        .await?;
    }
    let clear_alarms =
        "UPDATE alarms SET cleared_seq = ? WHERE table_id = ? AND cleared_seq IS NULL";
    match record {
        Record::Clear { .. } => {
            conn.exec(clear_alarms, &[Int(seq_i), Text(table)]).await?;
        }
        Record::Dispute(d) => {
            let frozen = d.frozen.as_ref().map(serde_json::to_string).transpose()?;
            conn.exec(
                "INSERT INTO disputes (table_id, raised_seq, round, origin, seat, reason, raised_by, frozen) \
                 VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                &[
                    Text(table),
                    Int(seq_i),
                    Int(i64::try_from(d.round).unwrap_or(i64::MAX)),
                    Text(d.origin.as_str()),
                    d.seat.map(i64::from).into(),
                    Text(&d.reason),
                    Text(&d.by),
                    frozen.as_deref().into(),
                ],
            )
            .await?;
        }
        Record::Resolve(r) => {
            // An alarm's dispute has no `dispute` row of its own: one is written here, for the
            // round the corrected replay opened (0 when the alarm came between rounds).
            let round = events
                .iter()
                .find_map(|e| match e {
                    Event::RoundOpened { round } => i64::try_from(*round).ok(),
                    _ => None,
                })
                .unwrap_or(0);
            let dispute = i64::try_from(r.dispute).unwrap_or(i64::MAX);
            conn.exec(
                "INSERT INTO disputes (table_id, raised_seq, round, origin, reason, raised_by) \
                 SELECT ?, ?, ?, 'alarm', reason, 'alarm' FROM alarms WHERE table_id = ? AND raised_seq = ? \
                 ON CONFLICT (table_id, raised_seq) DO NOTHING",
                &[Text(table), Int(dispute), Int(round), Text(table), Int(dispute)],
            )
            .await?;
            let resolution = serde_json::to_string(&r.resolution)?;
            conn.exec(
                "UPDATE disputes SET resolved_seq = ?, resolution = ?, resolve_reason = ?, proposed_by = ?, confirmed_by = ? \
                 WHERE table_id = ? AND raised_seq = ?",
                &[
                    Int(seq_i),
                    Text(&resolution),
                    Text(&r.reason),
                    Text(&r.proposed_by),
                    Text(&r.confirmed_by),
                    Text(table),
                    Int(dispute),
                ],
            )
            .await?;
            conn.exec(clear_alarms, &[Int(seq_i), Text(table)]).await?;
        }
        Record::Final { round } => {
            conn.exec(
                "UPDATE rounds SET final_seq = ? WHERE table_id = ? AND round = ?",
                &[
                    Int(seq_i),
                    Text(table),
                    Int(i64::try_from(*round).unwrap_or(i64::MAX)),
                ],
            )
            .await?;
        }
        _ => {}
    }
    Ok(())
}

/// Every bet an input places: (seat, player — empty for the seat's own bet —, kind, amount).
fn placed_bets(input: &Input) -> Vec<(u8, String, String, i64)> {
    let mut out = Vec::new();
    let mut add = |seat: u8, player: &str, main: i64, side: &[(String, i64)]| {
        out.push((seat, player.to_string(), "main".to_string(), main));
        for (name, amount) in side {
            out.push((seat, player.to_string(), name.clone(), *amount));
        }
    };
    match input {
        Input::Bets(bets) => {
            for b in bets {
                add(b.seat, "", b.main, &b.side);
                for bb in &b.behind {
                    add(b.seat, &bb.player, bb.main, &bb.side);
                }
            }
        }
        Input::PlayerBets(players) => {
            for p in players {
                for b in &p.boxes {
                    add(b.seat, &p.player, b.main, &b.side);
                }
            }
        }
        _ => {}
    }
    out
}
