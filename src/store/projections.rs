//! The projections: `shoes`, `rounds`, `bets`, `settlements` and `alarms`, written from a
//! log row's record and events in the same transaction as the row (inside a savepoint, so
//! a projection that fails never loses the row). Never read back into the engine.

use super::*;
use sqlx::QueryBuilder;

/// Rows per multi-row INSERT: 9 values each stays far below SQLite's limit of 32,766
/// bound values per statement, even for a common draw's thousands of players.
const ROWS_PER_INSERT: usize = 500;

/// Writes the projections of one row (shoes, rounds, bets, settlements, alarms).
pub(super) async fn project(
    conn: &mut SqliteConnection,
    table: &str,
    seq_i: i64,
    record: &Record,
    events: &[Event],
    shoe: u32,
) -> Result<(), StoreError> {
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
                sqlx::query(sql)
                    .bind(table)
                    .bind(number)
                    .execute(&mut *conn)
                    .await?;
            }
        }
    }
    for event in events {
        match event {
            Event::ShoeShuffled { shoe } => {
                sqlx::query(
                    "INSERT OR REPLACE INTO shoes (table_id, shoe, started_seq) VALUES (?, ?, ?)",
                )
                .bind(table)
                .bind(i64::from(*shoe))
                .bind(seq_i)
                .execute(&mut *conn)
                .await?;
            }
            Event::RoundOpened { round: number } => {
                let number = i64::try_from(*number).unwrap_or(i64::MAX);
                // A resolution replays the round's opening: the row stays as first written.
                sqlx::query(
                    "INSERT INTO rounds (table_id, round, shoe, opened_seq) VALUES (?, ?, ?, ?) \
                     ON CONFLICT (table_id, round) DO NOTHING",
                )
                .bind(table)
                .bind(number)
                .bind(i64::from(shoe))
                .bind(seq_i)
                .execute(&mut *conn)
                .await?;
                let opening = match record {
                    Record::Input { input, .. } => Some(input),
                    Record::Resolve { inputs, .. } => inputs.first(),
                    _ => None,
                };
                if let Some(input) = opening {
                    let bets: Vec<_> = (1i64..).zip(placed_bets(input)).collect();
                    // Many rows per statement: one round trip to SQLite's thread for a
                    // round's bets, not one per bet.
                    for chunk in bets.chunks(ROWS_PER_INSERT) {
                        let mut insert = QueryBuilder::<Sqlite>::new(
                            "INSERT INTO bets (table_id, round, line, seat, player, kind, amount) ",
                        );
                        insert.push_values(
                            chunk,
                            |mut row, (line, (seat, player, kind, amount))| {
                                row.push_bind(table)
                                    .push_bind(number)
                                    .push_bind(*line)
                                    .push_bind(i64::from(*seat))
                                    .push_bind(player.as_str())
                                    .push_bind(kind.as_str())
                                    .push_bind(*amount);
                            },
                        );
                        insert.build().execute(&mut *conn).await?;
                    }
                }
            }
            Event::RoundSettled(result) => {
                let number = i64::try_from(result.round).unwrap_or(i64::MAX);
                // A cancellation of a settled round replaces its settlement.
                sqlx::query("DELETE FROM settlements WHERE table_id = ? AND round = ?")
                    .bind(table)
                    .bind(number)
                    .execute(&mut *conn)
                    .await?;
                sqlx::query(
                        "UPDATE rounds SET settled_seq = ?, result = ? WHERE table_id = ? AND round = ?",
                    )
                    .bind(seq_i)
                    .bind(serde_json::to_string(result)?)
                    .bind(table)
                    .bind(number)
                    .execute(&mut *conn)
                    .await?;
                let settled = (1i64..)
                    .zip(&result.bets)
                    .map(|(line, bet)| Ok((line, bet, serde_json::to_string(bet)?)))
                    .collect::<Result<Vec<_>, serde_json::Error>>()?;
                for chunk in settled.chunks(ROWS_PER_INSERT) {
                    let mut insert = QueryBuilder::<Sqlite>::new(
                        "INSERT INTO settlements (table_id, round, line, seat, player, kind, staked, returned, detail) ",
                    );
                    insert.push_values(chunk, |mut row, (line, bet, detail)| {
                        row.push_bind(table)
                            .push_bind(number)
                            .push_bind(*line)
                            .push_bind(i64::from(bet.seat))
                            .push_bind(bet.player.as_deref().unwrap_or(""))
                            .push_bind(bet.kind.name())
                            .push_bind(bet.staked)
                            .push_bind(bet.returned)
                            .push_bind(detail.as_str());
                    });
                    insert.build().execute(&mut *conn).await?;
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
        sqlx::query(
            "INSERT INTO alarms (table_id, raised_seq, reason, expected) VALUES (?, ?, ?, ?)",
        )
        .bind(table)
        .bind(seq_i)
        .bind(reason)
        .bind(expected)
        .execute(&mut *conn)
        .await?;
    }
    match record {
        Record::Clear { .. } => {
            sqlx::query(
                "UPDATE alarms SET cleared_seq = ? WHERE table_id = ? AND cleared_seq IS NULL",
            )
            .bind(seq_i)
            .bind(table)
            .execute(&mut *conn)
            .await?;
        }
        Record::Dispute {
            origin,
            seat,
            round,
            reason,
            by,
            frozen,
        } => {
            sqlx::query(
                "INSERT INTO disputes (table_id, raised_seq, round, origin, seat, reason, raised_by, frozen) \
                 VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            )
            .bind(table)
            .bind(seq_i)
            .bind(i64::try_from(*round).unwrap_or(i64::MAX))
            .bind(origin.as_str())
            .bind(seat.map(i64::from))
            .bind(reason)
            .bind(by)
            .bind(frozen.as_ref().map(serde_json::to_string).transpose()?)
            .execute(&mut *conn)
            .await?;
        }
        Record::Resolve {
            dispute,
            resolution,
            reason,
            proposed_by,
            confirmed_by,
            ..
        } => {
            // An alarm's dispute has no `dispute` row of its own: one is written here, for the
            // round the corrected replay opened (0 when the alarm came between rounds).
            let round = events
                .iter()
                .find_map(|e| match e {
                    Event::RoundOpened { round } => i64::try_from(*round).ok(),
                    _ => None,
                })
                .unwrap_or(0);
            sqlx::query(
                "INSERT INTO disputes (table_id, raised_seq, round, origin, reason, raised_by) \
                 SELECT ?, ?, ?, 'alarm', reason, 'alarm' FROM alarms WHERE table_id = ? AND raised_seq = ? \
                 ON CONFLICT (table_id, raised_seq) DO NOTHING",
            )
            .bind(table)
            .bind(i64::try_from(*dispute).unwrap_or(i64::MAX))
            .bind(round)
            .bind(table)
            .bind(i64::try_from(*dispute).unwrap_or(i64::MAX))
            .execute(&mut *conn)
            .await?;
            sqlx::query(
                "UPDATE disputes SET resolved_seq = ?, resolution = ?, resolve_reason = ?, proposed_by = ?, confirmed_by = ? \
                 WHERE table_id = ? AND raised_seq = ?",
            )
            .bind(seq_i)
            .bind(serde_json::to_string(resolution)?)
            .bind(reason)
            .bind(proposed_by)
            .bind(confirmed_by)
            .bind(table)
            .bind(i64::try_from(*dispute).unwrap_or(i64::MAX))
            .execute(&mut *conn)
            .await?;
            sqlx::query(
                "UPDATE alarms SET cleared_seq = ? WHERE table_id = ? AND cleared_seq IS NULL",
            )
            .bind(seq_i)
            .bind(table)
            .execute(&mut *conn)
            .await?;
        }
        Record::Final { round } => {
            sqlx::query("UPDATE rounds SET final_seq = ? WHERE table_id = ? AND round = ?")
                .bind(seq_i)
                .bind(table)
                .bind(i64::try_from(*round).unwrap_or(i64::MAX))
                .execute(&mut *conn)
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
