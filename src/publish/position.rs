//! Where the publisher stands on the broker: its own last message on each of the table's
//! two streams, found from its own record of what the broker acknowledged.
//!
//! Anyone who may write to a table's subjects (on an open broker, anyone; on a studio
//! broker, the table's own credential) can put messages there that the table did not
//! sign, in any number. So the publisher never looks for its own last message among the
//! stream's last N: it reads on from the message it last had acknowledged (the stream
//! sequence the acknowledgement gave, kept in memory and in `publish_progress`), every
//! message after it, many requests in flight, and takes the newest of its own. What it
//! did not sign is counted and passed over — never a reason to stop or to start again.
//! Without such a record (a new database, a broker that lost its store) it reads back from
//! the stream's end until it meets a message of its own.

use super::outbox::{broker, Held, PassError, Publisher};
use super::subjects::{self, HEADER_ID, HEADER_SIG};
use crate::store::outbox::Progress;
use crate::trust::wire;
use async_nats::jetstream::message::StreamMessage;
use async_nats::jetstream::stream;
use futures::StreamExt;
use tracing::warn;

/// Requests for single messages in flight at once while reading a stream.
const IN_FLIGHT: usize = 32;
/// Messages per step when reading back from a stream's end.
const STEP: u64 = 256;

/// What one message on a table's stream is to the publisher.
pub(super) enum Seen<T> {
    /// One of the table's own messages of the kind searched for, with what orders them.
    Own(T),
    /// The table's own, but not of that kind (its fork notice on the log subject).
    OwnNotice,
    /// A well-formed row of this table's, signed with another key: `(seq, timeline)`.
    OtherKey(u64, String),
    /// Anything else: a message the table did not sign.
    Foreign,
}

/// What reading a stream found.
pub(super) struct Search<T> {
    /// The newest of the table's own messages read, and its stream sequence.
    pub(super) newest: Option<(T, u64)>,
    /// The table's own message read last in the stream's order, and its stream sequence.
    /// After a `timeline continue` it is the newest branch's, while an older superseded
    /// branch may hold rows with a higher `seq` (`newest`).
    pub(super) latest: Option<(T, u64)>,
    /// The stream's last sequence when the search began: every message up to it was read
    /// (or was the record's, or came before it).
    pub(super) read: u64,
    /// Whether the publisher's record held: the stream still had (or had let expire) the
    /// message it last had acknowledged there, and every message after it was read.
    pub(super) anchored: bool,
    /// Messages the table did not sign that were passed over.
    pub(super) foreign: u64,
    /// The first row of this table's signed with another key, if one was read.
    pub(super) other_key: Option<(u64, String)>,
}

/// Reads `stream` from the publisher's record: `anchor` is the stream sequence of its last
/// acknowledged message there (0: none), `is_anchor` says whether an own message is that
/// one. With a record that holds, every message after it is read and the newest own one
/// (by `T`'s order, so a copy of an older message someone put back is not mistaken for the
/// newest) is returned; the record's own message when none follows (none when retention
/// took it: the record is then the position). Otherwise the stream is read
/// back from its end, a step at a time, to the first step holding an own message.
pub(super) async fn search<T: Ord + Clone>(
    stream: &stream::Stream,
    anchor: u64,
    is_anchor: impl Fn(&T) -> bool,
    classify: impl Fn(&StreamMessage) -> Seen<T>,
) -> Result<Search<T>, PassError> {
    // The description `get_stream` fetched at the start of this pass.
    let state = &stream.cached_info().state;
    let last = state.last_sequence;
    let first = state.first_sequence.max(1);
    let mut found = Search {
        newest: None,
        latest: None,
        read: last,
        anchored: false,
        foreign: 0,
        other_key: None,
    };
    if anchor > 0 && anchor <= last {
        // The record's own message, unless retention took it (the public stream's).
        let holds = if anchor >= first {
            match read(stream, anchor..=anchor).await?.pop() {
                Some((_, Some(m))) => match classify(&m) {
                    Seen::Own(t) if is_anchor(&t) => {
                        found.newest = Some((t.clone(), anchor));
                        found.latest = Some((t, anchor));
                        true
                    }
                    _ => false,
                },
                _ => false,
            }
        } else {
            true
        };
        if holds {
            found.anchored = true;
            let from = anchor.max(first - 1) + 1;
            let mut seq = from;
            while seq <= last {
                let to = (seq + STEP * 4 - 1).min(last);
                for (at, m) in read(stream, seq..=to).await? {
                    if let Some(m) = m {
                        found.take(at, classify(&m));
                    }
                }
                seq = to + 1;
            }
            return Ok(found);
        }
    }
    // No record, or the broker does not hold what it acknowledged: back from the end.
    let mut to = last;
    while to >= first && to > 0 {
        let from = to.saturating_sub(STEP - 1).max(first);
        for (at, m) in read(stream, from..=to).await? {
            if let Some(m) = m {
                found.take(at, classify(&m));
            }
        }
        if found.newest.is_some() {
            break;
        }
        to = from - 1;
    }
    Ok(found)
}

impl<T: Ord + Clone> Search<T> {
    fn take(&mut self, at: u64, seen: Seen<T>) {
        match seen {
            Seen::Own(t) => {
                if self.latest.as_ref().is_none_or(|(_, l)| at > *l) {
                    self.latest = Some((t.clone(), at));
                }
                if self.newest.as_ref().is_none_or(|(n, _)| t > *n) {
                    self.newest = Some((t, at));
                }
            }
            Seen::OwnNotice => {}
            Seen::OtherKey(seq, timeline) => {
                self.foreign += 1;
                self.other_key.get_or_insert((seq, timeline));
            }
            Seen::Foreign => self.foreign += 1,
        }
    }
}

/// The messages at `seqs`, in order, many requests in flight (`None`: no message there —
/// deleted, or expired).
async fn read(
    stream: &stream::Stream,
    seqs: std::ops::RangeInclusive<u64>,
) -> Result<Vec<(u64, Option<StreamMessage>)>, PassError> {
    let answers: Vec<_> = futures::stream::iter(seqs)
        .map(|seq| async move { (seq, stream.get_raw_message(seq).await) })
        .buffered(IN_FLIGHT)
        .collect()
        .await;
    answers
        .into_iter()
        .map(|(seq, r)| match r {
            Ok(m) => Ok((seq, Some(m))),
            Err(e) if e.kind() == stream::RawMessageErrorKind::NoMessageFound => Ok((seq, None)),
            Err(e) => Err(broker(e)),
        })
        .collect()
}

/// A log message's row: its `seq`, chain hash and timeline (`branch.rs` reads it too).
#[derive(serde::Deserialize)]
pub(super) struct LoggedRow {
    pub(super) table: String,
    pub(super) seq: u64,
    pub(super) hash: String,
    /// Absent in rows published before timelines existed.
    #[serde(default)]
    pub(super) timeline: String,
}

/// A row found on the log stream, ordered by its `seq` (a copy of an older row sorts
/// before the newest).
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord)]
struct OwnRow {
    seq: u64,
    hash: String,
}

/// A public message's number.
#[derive(serde::Deserialize)]
struct Numbered {
    n: u64,
}

/// What the broker's last own row says of this log.
enum Standing {
    /// The log holds it: publishing goes on after it.
    Holds,
    /// The log's newest branch supersedes it: publishing goes on after the common row.
    Superseded,
}

impl Publisher {
    /// What the two streams hold of this table's: the last row and public message it
    /// signed, read on from `from` (what this process last had acknowledged, else the
    /// saved progress). The log's last row must be the table's own row at that `seq` (same
    /// chain hash), or the very row the log's newest branch supersedes (the operator's
    /// `croupier timeline continue`): anything else is another history under this table's
    /// id (a restored database, a second table with the same id), and nothing is
    /// published. When the broker lost its store (the log stream holds less than was
    /// acknowledged), what it holds now is where publishing resumes.
    pub(super) async fn held(
        &self,
        log: &stream::Stream,
        public: &stream::Stream,
        from: Progress,
    ) -> Result<Held, PassError> {
        let table = self.info.id.as_str();
        let key = self.keys.verifying_key();
        let signed = |domain: &str, m: &StreamMessage| {
            subjects::signed(&key, domain, table, &m.payload, &m.headers)
        };
        let rows = search(
            log,
            from.log_stream_seq,
            |r: &OwnRow| r.seq == from.log_seq,
            |m| {
                let row = serde_json::from_slice::<LoggedRow>(&m.payload)
                    .ok()
                    .filter(|r| r.table == table);
                match row {
                    Some(r) if signed(wire::LOG, m) => Seen::Own(OwnRow {
                        seq: r.seq,
                        hash: r.hash,
                    }),
                    Some(r) if m.headers.get(HEADER_SIG).is_some() => {
                        Seen::OtherKey(r.seq, r.timeline)
                    }
                    // The table's word that it stopped over another history, for the floor.
                    None if signed(wire::LOG, m) => Seen::OwnNotice,
                    _ => Seen::Foreign,
                }
            },
        )
        .await?;
        self.passed_over(log, rows.foreign);
        // A fresh publisher (no record of anything acknowledged) that finds only rows of
        // this table's id signed with another key: a second table publishes under this id,
        // or this table's key was replaced. Once the table has a record of its own, such
        // rows are only noise someone wrote.
        if let (Some((seq, timeline)), None, false) = (&rows.other_key, &rows.newest, rows.anchored)
        {
            return Err(PassError::Fork(format!(
                "timeline_foreign: the broker holds rows of table {table} signed with another key (row {seq}, timeline {timeline}): another table publishes under this id, or this table's key was replaced. Nothing is published; give one of the tables another id"
            )));
        }
        let (position, log_at) = match self.place(&rows).await? {
            Some(placed) => placed,
            None if rows.anchored => (from.log_seq, from.log_stream_seq),
            None => (0, 0),
        };
        let messages = search(
            public,
            from.public_stream_seq,
            |(id, _): &((u64, u32), u64)| *id == from.public_id,
            |m| {
                if !signed(wire::PUBLIC, m) {
                    return Seen::Foreign;
                }
                let id = m
                    .headers
                    .get(HEADER_ID)
                    .and_then(|v| crate::web::feed::parse_id(v.as_str()));
                match (id, serde_json::from_slice::<Numbered>(&m.payload)) {
                    (Some(id), Ok(n)) => Seen::Own((id, n.n)),
                    _ => Seen::Foreign,
                }
            },
        )
        .await?;
        self.passed_over(public, messages.foreign);
        let ((public_id, n), public_at) = match messages.newest {
            Some(found) => found,
            // Its own messages expired (the public stream's retention): the record says
            // where it stands.
            None if messages.anchored => ((from.public_id, from.public_n), 0),
            None => (((0, 0), 0), 0),
        };
        let (public, resync_due) = self.public_position(public_id);
        Ok(Held {
            log: position,
            log_at,
            log_read: rows.read,
            public,
            n,
            public_at,
            public_read: messages.read,
            resync_due,
        })
    }

    /// Counts and says (once per pass, not per message) what was passed over.
    fn passed_over(&self, stream: &stream::Stream, foreign: u64) {
        if foreign > 0 {
            self.status.count_foreign(foreign);
            warn!(table = %self.info.id, stream = %stream.cached_info().config.name, foreign, "publisher: passed over messages the table did not sign");
        }
    }

    /// Where publishing goes on after what the log stream's search found: the row after
    /// which the log is published and that row's stream sequence (`None`: no own row was
    /// read). Two of the table's own rows stand for the broker's head: the one with the
    /// highest `seq` (a copy of an older row someone put back at the stream's end does not
    /// move the position back) and the last in the stream's order (after a `timeline
    /// continue`, an older superseded branch may hold rows with a higher `seq` than the
    /// newest branch's). A row this log holds wins, the higher first; then the row the
    /// log's newest branch supersedes; anything else is another history under this table's
    /// id ([`PassError::Fork`]).
    async fn place(&self, rows: &Search<OwnRow>) -> Result<Option<(u64, u64)>, PassError> {
        let candidates: Vec<&(OwnRow, u64)> = match (&rows.newest, &rows.latest) {
            (Some(n), Some(l)) if n.1 != l.1 => vec![n, l],
            (Some(n), _) => vec![n],
            (None, Some(l)) => vec![l],
            (None, None) => return Ok(None),
        };
        let mut superseded = None;
        for (r, at) in candidates.iter().copied() {
            match self.standing(r).await? {
                Some(Standing::Holds) => return Ok(Some((r.seq, *at))),
                Some(Standing::Superseded) => superseded = superseded.or(Some(*at)),
                None => {}
            }
        }
        if let Some(at) = superseded {
            let branch = self
                .lineage
                .last_branch()
                .ok_or_else(|| broker("no branch"))?;
            return Ok(Some((branch.common_seq, at)));
        }
        Err(self.fork(&candidates[candidates.len() - 1].0).await)
    }

    /// Whether this log holds the broker's own row `r`, or its newest branch supersedes
    /// it (`None`: neither).
    async fn standing(&self, r: &OwnRow) -> Result<Option<Standing>, PassError> {
        let ours = self.db.rows_after(r.seq - 1, 1).await?;
        if ours
            .first()
            .is_some_and(|o| o.row.seq == r.seq && o.hash == r.hash)
        {
            return Ok(Some(Standing::Holds));
        }
        if let Some(b) = self.lineage.last_branch() {
            if b.superseded.seq == r.seq && b.superseded.hash == r.hash {
                return Ok(Some(Standing::Superseded));
            }
        }
        Ok(None)
    }

    /// The refusal when the broker's last own row `r` is neither this log's nor the one
    /// its newest branch supersedes.
    async fn fork(&self, r: &OwnRow) -> PassError {
        let table = self.info.id.as_str();
        let why = match self.db.last_seq().await {
            Ok(last) if r.seq > last => format!(
                "it holds row {} and this log ends at row {last} (a restored or cut-back database)",
                r.seq
            ),
            _ => format!(
                "its row {} (hash {}) is not this log's row {}",
                r.seq, r.hash, r.seq
            ),
        };
        PassError::Fork(format!(
            "timeline_fork: the broker holds another history of table {table}: {why}. Nothing is published. If this log is the one to keep, stop the table and run `croupier timeline continue` (the broker's history is kept, marked superseded)"
        ))
    }

    /// The public stream's position in row terms from its last own message's id, and
    /// whether a branch's resync view is still due: a message of the superseded history
    /// after the newest branch's common row puts the position back to that row, with a
    /// resync first. (A stream behind the common row — one the broker lost and that is
    /// being filled again — goes on from where it is.)
    fn public_position(&self, id: (u64, u32)) -> ((u64, u32), bool) {
        let Some(newest) = self.lineage.last_branch() else {
            return (id, false);
        };
        let branches = self.lineage.branches_newest_first();
        let on = branches
            .iter()
            .position(|b| id >= (b.common_seq + b.public_offset, u32::MAX));
        let row = match on {
            Some(i) => (id.0 - branches[i].public_offset, id.1),
            None => id,
        };
        if on == Some(0) || row.0 <= newest.common_seq {
            return (row, false);
        }
        ((newest.common_seq, u32::MAX), true)
    }
}
