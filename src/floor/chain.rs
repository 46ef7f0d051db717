//! A table's published log rows and the check of their hash chain: pure functions, no I/O.
//!
//! A row on `croupier.<table>.log` is `{"table", "seq", "at_ms", "kind", "hash", "record"}`
//! with the record exactly as the table stored it (`publish::outbox`). The floor recomputes
//! `sha256(prev_hash || seq || at_ms || kind || 0 || payload)` (`store::chain_hash`) from
//! the previous row it holds; a row whose hash does not follow is a **break**, a row after
//! a missing one a **gap**. Either raises a floor alarm; the row is still stored (as
//! published) and the chain goes on from its published hash, so one tampered row raises
//! one alarm, not one per later row.

use serde::Deserialize;
use serde_json::value::RawValue;
use std::collections::HashSet;

/// One published row, as the floor stores it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WireRow {
    /// The table.
    pub table: String,
    /// The table's sequence number.
    pub seq: u64,
    /// When the table committed it (Unix ms).
    pub at_ms: i64,
    /// Its kind (`input`, `alarm`, ...).
    pub kind: String,
    /// The chain hash the table published.
    pub hash: [u8; 32],
    /// The record's text exactly as published.
    pub payload: String,
    /// The branch it was published on (`""` before any `croupier timeline continue`).
    pub branch: String,
}

#[derive(Deserialize)]
struct Wire<'a> {
    table: String,
    seq: u64,
    at_ms: i64,
    kind: String,
    hash: String,
    #[serde(borrow)]
    record: &'a RawValue,
    #[serde(default)]
    branch: String,
}

/// Parses a message body; `Err` says what is wrong with it.
pub fn parse(body: &[u8]) -> Result<WireRow, String> {
    let w: Wire<'_> = serde_json::from_slice(body).map_err(|e| format!("not a log row: {e}"))?;
    let bytes = hex::decode(&w.hash).map_err(|e| format!("bad hash: {e}"))?;
    let hash: [u8; 32] = bytes
        .try_into()
        .map_err(|_| "bad hash: not 32 bytes".to_string())?;
    Ok(WireRow {
        table: w.table,
        seq: w.seq,
        at_ms: w.at_ms,
        kind: w.kind,
        hash,
        payload: w.record.get().to_string(),
        branch: w.branch,
    })
}

/// The last row the floor holds for a table (seq 0 and zero hash: none yet).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Head {
    /// Its sequence number.
    pub seq: u64,
    /// Its published hash.
    pub hash: [u8; 32],
}

/// Where a table's ingest stands: its head, the branch the head is on, and the branches
/// the table left (their rows, arriving late, are superseded and passed over).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Position {
    /// The last row held on the current branch.
    pub head: Head,
    /// The current branch (`""` before any `croupier timeline continue`).
    pub branch: String,
    /// Branches the table left.
    pub left: HashSet<String>,
}

/// What the check found about one row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Finding {
    /// The hash follows from the previous row.
    Ok,
    /// The hash does not follow: the row (or the one before) was altered.
    Break,
    /// Rows `from..=to` are missing before this one; its chain could not be checked.
    Gap {
        /// The first missing row.
        from: u64,
        /// The last missing row.
        to: u64,
    },
}

/// A floor alarm about one table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Alarm {
    /// The row it is about.
    pub seq: u64,
    /// `chain_break`, `gap`, `conflict` (a row published again with other content),
    /// `unreadable` (not a log row), `misfiled` (a row of another table), `timeline` (a
    /// new branch supersedes rows the floor held), `fork` (a new branch that does not
    /// follow from the row it says it continues) or `stall` (the stream holds rows the
    /// floor has not taken for longer than `--stall-seconds`).
    pub kind: &'static str,
    /// For people.
    pub detail: String,
}

/// Checks `row` against `head`. `None`: the floor already holds this seq (a redelivery),
/// nothing to store. Otherwise the finding and the new head.
pub fn check(head: Head, row: &WireRow) -> Option<(Finding, Head)> {
    if row.seq <= head.seq {
        return None;
    }
    let next = Head {
        seq: row.seq,
        hash: row.hash,
    };
    if row.seq > head.seq + 1 {
        return Some((
            Finding::Gap {
                from: head.seq + 1,
                to: row.seq - 1,
            },
            next,
        ));
    }
    let expected =
        crate::store::chain_hash(&head.hash, row.seq, row.at_ms, &row.kind, &row.payload);
    let finding = if expected == row.hash {
        Finding::Ok
    } else {
        Finding::Break
    };
    Some((finding, next))
}

/// The alarm a finding raises, if any.
pub fn alarm(row: &WireRow, finding: &Finding) -> Option<Alarm> {
    match finding {
        Finding::Ok => None,
        Finding::Break => Some(Alarm {
            seq: row.seq,
            kind: "chain_break",
            detail: format!(
                "row {} of table {} does not follow from the row before it: its hash {} is not \
                 sha256(previous hash, seq, at_ms, kind, payload)",
                row.seq,
                row.table,
                hex::encode(row.hash)
            ),
        }),
        Finding::Gap { from, to } => Some(Alarm {
            seq: row.seq,
            kind: "gap",
            detail: format!(
                "table {}: rows {from}..={to} are missing before row {}",
                row.table, row.seq
            ),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::chain_hash;

    fn rows(n: u64) -> Vec<WireRow> {
        let mut prev = [0u8; 32];
        (1..=n)
            .map(|seq| {
                let payload = format!(r#"{{"kind":"held","item":"{seq}H"}}"#);
                let hash = chain_hash(&prev, seq, 1000 + seq as i64, "held", &payload);
                prev = hash;
                WireRow {
                    table: "t1".into(),
                    seq,
                    at_ms: 1000 + seq as i64,
                    kind: "held".into(),
                    hash,
                    payload,
                    branch: String::new(),
                }
            })
            .collect()
    }

    fn run(rows: &[WireRow]) -> (Head, Vec<Finding>) {
        let mut head = Head::default();
        let mut out = Vec::new();
        for r in rows {
            if let Some((f, h)) = check(head, r) {
                out.push(f);
                head = h;
            }
        }
        (head, out)
    }

    #[test]
    fn an_intact_chain_verifies_and_redeliveries_are_skipped() {
        let rs = rows(5);
        let mut twice = rs.clone();
        twice.extend(rs[1..3].iter().cloned());
        let (head, found) = run(&twice);
        assert_eq!(found, vec![Finding::Ok; 5]);
        assert_eq!(head.seq, 5);
        assert_eq!(head.hash, rs[4].hash);
    }

    #[test]
    fn a_tampered_payload_breaks_once_and_the_chain_goes_on() {
        let mut rs = rows(5);
        rs[2].payload = rs[2].payload.replace("3H", "3S");
        let (_, found) = run(&rs);
        assert_eq!(
            found,
            vec![
                Finding::Ok,
                Finding::Ok,
                Finding::Break,
                Finding::Ok,
                Finding::Ok
            ]
        );
        let a = alarm(&rs[2], &found[2]).expect("an alarm");
        assert_eq!((a.seq, a.kind), (3, "chain_break"));
    }

    #[test]
    fn a_missing_row_is_a_gap() {
        let mut rs = rows(5);
        rs.remove(1);
        let (_, found) = run(&rs);
        assert_eq!(found[1], Finding::Gap { from: 2, to: 2 });
        assert_eq!(found[2], Finding::Ok);
    }

    #[test]
    fn the_wire_format_round_trips_the_payload_byte_for_byte() {
        let r = &rows(1)[0];
        let body = format!(
            r#"{{"table":"t1","seq":1,"at_ms":1001,"kind":"held","hash":"{}","record":{}}}"#,
            hex::encode(r.hash),
            r.payload
        );
        assert_eq!(&parse(body.as_bytes()).expect("parses"), r);
        assert!(parse(b"{}").is_err());
        assert!(
            parse(br#"{"table":"t","seq":1,"at_ms":1,"kind":"k","hash":"00","record":{}}"#)
                .unwrap_err()
                .contains("32 bytes")
        );
    }
}
