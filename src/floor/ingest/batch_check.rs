//! A fetched batch checked against the position the floor holds: each row's chain link,
//! a new branch (a `timeline`, or a `fork` when it does not follow), misfiled and
//! unreadable messages, and what the commit must write. Apart from the passes, since it
//! does no I/O: the database's hashes it needs come in as `held`.

use crate::engine::Input;
use crate::floor::chain::{self, Alarm, Finding, Head, Position, WireRow};
use crate::floor::db::{Batch, BranchStart};
use crate::store::Record;
use std::collections::{HashMap, HashSet};

/// Checks message bodies (with their stream sequence) against `at`: the batch to commit
/// and the new position. Messages at or below `seen` (a stream sequence) were looked at
/// before: an unreadable one among them is not alarmed again.
///
/// A row on a branch the floor has not seen begins that branch: it must follow from the
/// row before it on the history the floor holds (`held`: those rows' hashes, read from
/// the database, for rows before this batch), and the rows after that one on the old
/// branch are superseded — kept as published, out of the table's history — with a
/// `timeline` alarm; one that does not follow is a `fork`.
pub fn check(
    table: &str,
    mut at: Position,
    seen: u64,
    bodies: &[(u64, Vec<u8>)],
    held: &HashMap<u64, [u8; 32]>,
) -> (Batch, Position) {
    let mut batch = Batch::default();
    // The hashes of rows taken in this batch, by row: a branch may begin after one.
    let mut taken: HashMap<u64, [u8; 32]> = HashMap::new();
    for (stream_seq, body) in bodies {
        let row: WireRow = match chain::parse(body) {
            Ok(r) => r,
            Err(why) => {
                if *stream_seq > seen {
                    batch.alarms.push(match fork_notice(table, body) {
                        Some(detail) => Alarm {
                            seq: *stream_seq,
                            kind: "fork",
                            detail: format!("table {table} stopped publishing: {detail}"),
                        },
                        None => Alarm {
                            seq: *stream_seq,
                            kind: "unreadable",
                            detail: format!("table {table}: message {stream_seq}: {why}"),
                        },
                    });
                }
                continue;
            }
        };
        if row.table != table {
            batch.alarms.push(Alarm {
                seq: *stream_seq,
                kind: "misfiled",
                detail: format!(
                    "message {stream_seq} on table {table}'s log names table {}",
                    row.table
                ),
            });
            continue;
        }
        let begins = row.branch != at.branch && !at.left.contains(&row.branch);
        let (finding, next) = if row.branch == at.branch {
            let Some(checked) = chain::check(at.head, &row) else {
                continue;
            };
            checked
        } else if at.left.contains(&row.branch) {
            // A superseded branch's row delivered again.
            continue;
        } else {
            let common = row.seq.saturating_sub(1);
            let prev = if common == 0 {
                Some([0u8; 32])
            } else {
                taken.get(&common).or_else(|| held.get(&common)).copied()
            };
            let finding = match prev {
                Some(prev) => {
                    let expected = crate::store::chain_hash(
                        &prev,
                        row.seq,
                        row.at_ms,
                        &row.kind,
                        &row.payload,
                    );
                    if expected == row.hash {
                        Finding::Ok
                    } else {
                        Finding::Break
                    }
                }
                None => Finding::Gap {
                    from: common,
                    to: common,
                },
            };
            let superseded = at.head.seq;
            batch.alarms.push(if finding == Finding::Break {
                Alarm {
                    seq: row.seq,
                    kind: "fork",
                    detail: format!(
                        "table {table}: branch {:?} begins at row {} but does not follow from row {common} of the history the floor holds (branch {:?}): another history under this id",
                        row.branch, row.seq, at.branch
                    ),
                }
            } else {
                Alarm {
                    seq: row.seq,
                    kind: "timeline",
                    detail: format!(
                        "table {table}: a new timeline (branch {:?}) continues after row {common}; rows {}..={superseded} of branch {:?} are superseded (kept)",
                        row.branch,
                        common + 1,
                        at.branch
                    ),
                }
            });
            batch.branches.push(BranchStart {
                branch: row.branch.clone(),
                parent: at.branch.clone(),
                common_seq: common,
                superseded_seq: superseded,
            });
            taken.retain(|seq, _| *seq <= common);
            at.left
                .insert(std::mem::replace(&mut at.branch, row.branch.clone()));
            let next = Head {
                seq: row.seq,
                hash: row.hash,
            };
            (finding, next)
        };
        // A branch that does not follow raised its `fork` alarm above.
        if let Some(a) =
            chain::alarm(&row, &finding).filter(|_| !(begins && finding == Finding::Break))
        {
            batch.alarms.push(a);
        }
        if is_card(&row) {
            batch.last_card_ms = Some(row.at_ms);
        }
        let verdict = match finding {
            Finding::Ok => "ok",
            Finding::Break => "break",
            Finding::Gap { .. } => "gap",
        };
        taken.insert(row.seq, row.hash);
        batch.rows.push((row, verdict));
        at.head = next;
    }
    (batch, at)
}

/// The detail of a table's notice that its publisher stopped over another history
/// (`publish::outbox`, `{"table", "notice": "fork", "detail"}`), if `body` is one for
/// `table`.
fn fork_notice(table: &str, body: &[u8]) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Notice {
        table: String,
        notice: String,
        detail: String,
    }
    let n: Notice = serde_json::from_slice(body).ok()?;
    (n.table == table && n.notice == "fork").then_some(n.detail)
}

/// The rows of `bodies` that may begin a branch the floor has not seen: the row before
/// each, whose hash the check needs from the database.
pub(super) fn branch_points(at: &Position, bodies: &[(u64, Vec<u8>)]) -> Vec<u64> {
    let mut seen = HashSet::new();
    bodies
        .iter()
        .filter_map(|(_, b)| chain::parse(b).ok())
        .filter(|r| r.branch != at.branch && !at.left.contains(&r.branch) && r.seq > 1)
        .filter(|r| seen.insert(r.branch.clone()))
        .map(|r| r.seq - 1)
        .collect()
}

fn is_card(row: &WireRow) -> bool {
    row.kind == "input"
        && matches!(
            serde_json::from_str::<Record>(&row.payload),
            Ok(Record::Input {
                input: Input::Card(_),
                ..
            })
        )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::chain_hash;

    /// Rows `from..=to` of a log whose row `from - 1` has hash `prev`, published on
    /// `branch`, as message bodies; and the last row's hash.
    fn rows(
        prev: [u8; 32],
        from: u64,
        to: u64,
        branch: &str,
        salt: &str,
    ) -> (Vec<Vec<u8>>, Vec<[u8; 32]>) {
        let mut prev = prev;
        let mut bodies = Vec::new();
        let mut hashes = Vec::new();
        for seq in from..=to {
            let payload = format!(r#"{{"kind":"held","item":"{seq}{salt}"}}"#);
            let hash = chain_hash(&prev, seq, 1000 + seq as i64, "held", &payload);
            bodies.push(
                format!(
                    r#"{{"table":"t1","seq":{seq},"at_ms":{},"kind":"held","hash":"{}","timeline":"x","branch":"{branch}","record":{payload}}}"#,
                    1000 + seq,
                    hex::encode(hash)
                )
                .into_bytes(),
            );
            hashes.push(hash);
            prev = hash;
        }
        (bodies, hashes)
    }

    fn numbered(bodies: Vec<Vec<u8>>, first: u64) -> Vec<(u64, Vec<u8>)> {
        bodies
            .into_iter()
            .zip(first..)
            .map(|(b, s)| (s, b))
            .collect()
    }

    #[test]
    fn a_branch_supersedes_the_rows_after_the_common_one_and_a_stray_one_is_a_fork() {
        let (old, old_hashes) = rows([0; 32], 1, 6, "", "H");
        let (batch, at) = check(
            "t1",
            Position::default(),
            0,
            &numbered(old, 1),
            &HashMap::new(),
        );
        assert!(batch.alarms.is_empty());
        assert_eq!((at.head.seq, at.branch.as_str()), (6, ""));
        // The restored log shares rows 1..=3, then continues as branch "b".
        let (new, new_hashes) = rows(old_hashes[2], 4, 8, "b", "S");
        // Row 3's hash comes from the database here (not in this batch).
        let held = HashMap::from([(3, old_hashes[2])]);
        assert_eq!(branch_points(&at, &numbered(new.clone(), 7)), vec![3]);
        let (batch, at) = check("t1", at, 6, &numbered(new, 7), &held);
        let kinds: Vec<&str> = batch.alarms.iter().map(|a| a.kind).collect();
        assert_eq!(kinds, ["timeline"], "{:?}", batch.alarms);
        assert!(
            batch.alarms[0].detail.contains("rows 4..=6"),
            "{}",
            batch.alarms[0].detail
        );
        assert_eq!(batch.branches.len(), 1);
        assert_eq!(
            (
                batch.branches[0].common_seq,
                batch.branches[0].superseded_seq
            ),
            (3, 6)
        );
        assert!(batch.rows.iter().all(|(_, v)| *v == "ok"));
        assert_eq!(
            (at.head.seq, at.head.hash, at.branch.as_str()),
            (8, new_hashes[4], "b")
        );
        assert!(at.left.contains(""));
        // A superseded row delivered again is passed over.
        let (late, _) = rows(old_hashes[4], 6, 6, "", "H");
        let (batch, same) = check("t1", at.clone(), 12, &numbered(late, 6), &HashMap::new());
        assert!(batch.rows.is_empty() && batch.alarms.is_empty());
        assert_eq!(same, at);
        // A branch that does not follow from the history held: a fork, stored as published.
        let (stray, _) = rows([7; 32], 5, 5, "c", "Z");
        let held = HashMap::from([(4, new_hashes[0])]);
        let (batch, at) = check("t1", at, 12, &numbered(stray, 13), &held);
        let kinds: Vec<&str> = batch.alarms.iter().map(|a| a.kind).collect();
        assert_eq!(kinds, ["fork"]);
        assert_eq!(batch.rows[0].1, "break");
        assert_eq!(at.branch, "c");
    }
}
