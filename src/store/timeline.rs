//! Timelines: the identity of a table's history.
//!
//! Sequence numbers and round numbers name rows and rounds only within one history. A
//! history can diverge from what others saw — a database restored from a backup plays
//! the lost rounds' numbers again; a second table configured with the same id writes its
//! own rows 1, 2, 3 — so everything that leaves the table names them with the timeline:
//! `(timeline, seq)`, never `seq` alone.
//!
//! - The first timeline's id is random, made with the database (`tables.timeline`).
//! - A database opened with a backup's marker (`store/backup.rs` writes it into the copy
//!   only) was restored: a `timeline` row (cause `restored`) begins a new timeline before
//!   anything else is written.
//! - `croupier timeline continue` begins one (cause `continued`) when the operator keeps
//!   this log although the broker holds another history of the table.
//!
//! The current timeline is the last `timeline` row's, else the first; its epoch counts
//! the timelines before it.

use super::record::{Record, TimelineCause};
use super::LogRow;

/// A timeline of a table's history.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Timeline {
    /// Its id: 32 lowercase hex digits, random.
    pub id: String,
    /// How many timelines came before it in this log (0 for the first).
    pub epoch: u32,
    /// The first row that belongs to it (1 for the first timeline).
    pub from_seq: u64,
}

impl Timeline {
    /// The timeline `log` is on, `first` being the database's first timeline id.
    pub fn of(first: &str, log: &[LogRow]) -> Timeline {
        let mut current = Timeline {
            id: first.to_string(),
            epoch: 0,
            from_seq: 1,
        };
        for row in log {
            current.follow(row.seq, &row.record);
        }
        current
    }

    /// Moves on to the timeline a `timeline` row at `seq` begins; other records leave
    /// it as it is.
    pub fn follow(&mut self, seq: u64, record: &Record) {
        if let Record::Timeline { id, .. } = record {
            self.id = id.clone();
            self.epoch += 1;
            self.from_seq = seq;
        }
    }

    /// The first eight hex digits: enough to tell timelines apart in a log line or an id.
    pub fn short(&self) -> &str {
        self.id.get(..8).unwrap_or(&self.id)
    }
}

/// What the publisher needs of a log's timelines: which timeline a row belongs to, and
/// under which branch and public id offset it is published after an operator's
/// `croupier timeline continue` (ARCHITECTURE.md, invariant "One table, one timeline").
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Lineage {
    first: String,
    changes: Vec<(u64, String, TimelineCause)>,
}

/// A branch on the broker: the history published after an operator continued this log
/// over another one the broker holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Branch<'a> {
    /// The id of the `continued` timeline that began it.
    pub id: &'a str,
    /// The last row both histories share.
    pub common_seq: u64,
    /// The broker's last row of the history it supersedes.
    pub superseded: &'a super::BrokerHead,
    /// Added to row numbers in public message ids.
    pub public_offset: u64,
}

impl Lineage {
    /// The lineage of a log whose first timeline is `first` and whose `timeline` rows are
    /// `rows` (sequence number and record, in order).
    pub fn new(first: &str, rows: impl IntoIterator<Item = (u64, Record)>) -> Lineage {
        let changes = rows
            .into_iter()
            .filter_map(|(seq, r)| match r {
                Record::Timeline { id, cause, .. } => Some((seq, id, cause)),
                _ => None,
            })
            .collect();
        Lineage {
            first: first.to_string(),
            changes,
        }
    }

    /// The timeline row `seq` belongs to.
    pub fn timeline_at(&self, seq: u64) -> &str {
        self.changes
            .iter()
            .rev()
            .find(|(at, ..)| *at <= seq)
            .map_or(self.first.as_str(), |(_, id, _)| id.as_str())
    }

    /// The branch row `seq` is published on: the last continue whose common row is
    /// before it (`None`: the history as first published).
    pub fn branch_at(&self, seq: u64) -> Option<Branch<'_>> {
        self.branches().rev().find(|b| b.common_seq < seq)
    }

    /// The newest branch.
    pub fn last_branch(&self) -> Option<Branch<'_>> {
        self.branches().next_back()
    }

    /// Every branch, the newest first.
    pub fn branches_newest_first(&self) -> Vec<Branch<'_>> {
        self.branches().rev().collect()
    }

    fn branches(&self) -> impl DoubleEndedIterator<Item = Branch<'_>> {
        self.changes
            .iter()
            .filter_map(|(_, id, cause)| match cause {
                TimelineCause::Continued {
                    superseded,
                    common_seq,
                    public_offset,
                } => Some(Branch {
                    id,
                    common_seq: *common_seq,
                    superseded,
                    public_offset: *public_offset,
                }),
                TimelineCause::Restored { .. } => None,
            })
    }
}

/// A new random timeline id (32 lowercase hex digits).
pub fn new_id() -> Result<String, super::StoreError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| super::StoreError::Random(e.to_string()))?;
    Ok(hex::encode(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(seq: u64, record: Record) -> LogRow {
        LogRow {
            seq,
            at_ms: 0,
            record,
            hash: String::new(),
        }
    }

    #[test]
    fn the_last_timeline_row_names_the_timeline_and_counts_the_epoch() {
        let held = || Record::Held { item: "7H".into() };
        let restored = |id: &str, parent: &str| Record::Timeline {
            id: id.into(),
            parent: parent.into(),
            cause: TimelineCause::Restored {
                backup_ms: 1,
                backup_seq: 1,
            },
        };
        let first = Timeline::of("aa", &[row(1, held())]);
        assert_eq!(
            (first.id.as_str(), first.epoch, first.from_seq),
            ("aa", 0, 1)
        );
        let log = [
            row(1, held()),
            row(2, restored("bb", "aa")),
            row(3, held()),
            row(4, restored("cc", "bb")),
        ];
        let t = Timeline::of("aa", &log);
        assert_eq!((t.id.as_str(), t.epoch, t.from_seq), ("cc", 2, 4));
    }

    #[test]
    fn rows_after_a_continue_are_published_on_its_branch() {
        let continued = |id: &str, common_seq: u64, public_offset: u64| Record::Timeline {
            id: id.into(),
            parent: "aa".into(),
            cause: TimelineCause::Continued {
                superseded: crate::store::BrokerHead {
                    timeline: "aa".into(),
                    seq: 150,
                    hash: "h".into(),
                },
                common_seq,
                public_offset,
            },
        };
        let restored = Record::Timeline {
            id: "bb".into(),
            parent: "aa".into(),
            cause: TimelineCause::Restored {
                backup_ms: 1,
                backup_seq: 124,
            },
        };
        let lineage = Lineage::new(
            "aa",
            [
                (125, restored),
                (140, continued("cc", 124, 27)),
                (200, continued("dd", 180, 99)),
            ],
        );
        assert_eq!(lineage.timeline_at(124), "aa");
        assert_eq!(lineage.timeline_at(125), "bb");
        assert_eq!(lineage.timeline_at(139), "bb");
        assert_eq!(lineage.timeline_at(141), "cc");
        assert_eq!(lineage.branch_at(124), None);
        let b = lineage
            .branch_at(125)
            .expect("the rows after the common one");
        assert_eq!((b.id, b.public_offset), ("cc", 27));
        assert_eq!(lineage.branch_at(180).map(|b| b.id), Some("cc"));
        assert_eq!(lineage.branch_at(181).map(|b| b.id), Some("dd"));
        assert_eq!(lineage.last_branch().map(|b| b.common_seq), Some(180));
    }

    #[test]
    fn new_ids_are_random_hex() {
        let (a, b) = (new_id().expect("id"), new_id().expect("id"));
        assert_eq!(a.len(), 32);
        assert!(a
            .bytes()
            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
        assert_ne!(a, b);
    }
}
