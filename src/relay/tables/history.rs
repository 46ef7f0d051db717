//! A resuming viewer's messages older than the ring: the id is found by bisection over
//! the table's public stream and what follows it read from there, up to [`HISTORY`]
//! messages. Apart from the following, since it reads the stream message by message on
//! a viewer's request, never on the relay's path.

use super::follow::parse;
use super::{RelayedTable, Tables};
use crate::broker::subjects::HEADER_ID;
use crate::trust::wire;
use crate::web::feed::{Message, Relayed};
use async_nats::jetstream;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// The most messages a resuming viewer is sent from the stream before the ring.
pub const HISTORY: u64 = 20_000;

impl Tables {
    /// What a viewer of `table` resuming after `after` needs from the stream before the
    /// ring takes over: nothing when the ring serves it; nothing either when the id is not
    /// in the stream (any more) or more than [`HISTORY`] messages back — the viewer then
    /// gets a resync view.
    pub async fn history(&self, table: &str, after: Option<(u64, u32)>) -> Vec<Arc<Message>> {
        let Some(after) = after else {
            return Vec::new();
        };
        let Some(t) = self.read().get(table).cloned() else {
            return Vec::new();
        };
        if t.source.feed.holds(after) {
            return Vec::new();
        }
        let Some((_, oldest)) = t.source.feed.oldest() else {
            return Vec::new();
        };
        let stream = t.stream.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let Some(stream) = stream else {
            return Vec::new();
        };
        match read_history(&stream, table, &t, after, oldest).await {
            Ok(history) => history,
            Err(e) => {
                tracing::debug!(table, ?after, error = %e, "no history from the stream: a resync");
                Vec::new()
            }
        }
    }
}

/// The table's signed message at stream sequence `seq`, if it is one.
async fn signed_at(
    stream: &jetstream::stream::Stream,
    table: &str,
    relayed: &RelayedTable,
    seq: u64,
) -> Result<Option<Relayed>, String> {
    let m = match stream.get_raw_message(seq).await {
        Ok(m) => m,
        Err(e) if e.kind() == jetstream::stream::RawMessageErrorKind::NoMessageFound => {
            return Ok(None)
        }
        Err(e) => return Err(e.to_string()),
    };
    if !relayed.signed(table, wire::PUBLIC, &m.payload, Some(&m.headers))
        || m.headers.get(HEADER_ID).is_none()
    {
        return Ok(None);
    }
    Ok(parse(&m.payload).ok())
}

/// The stream's messages after the one with id `after`, up to the ring's oldest (`n` =
/// `oldest`, included). The id is found by bisection over the stream's sequence (ids
/// grow with it); a message the table did not sign is stepped over.
async fn read_history(
    stream: &jetstream::stream::Stream,
    table: &str,
    relayed: &RelayedTable,
    after: (u64, u32),
    oldest: u64,
) -> Result<Vec<Arc<Message>>, String> {
    let first = stream
        .get_info()
        .await
        .map_err(|e| e.to_string())?
        .state
        .first_sequence
        .max(1);
    let (mut lo, mut hi) = (first, relayed.stream_seq.load(Ordering::Relaxed));
    let mut found = None;
    'search: while lo <= hi {
        let mid = lo + (hi - lo) / 2;
        // The first of the table's own messages at or after `mid`.
        let mut probe = mid;
        let r = loop {
            if probe > hi {
                hi = mid.saturating_sub(1);
                if mid == 0 {
                    break 'search;
                }
                continue 'search;
            }
            if let Some(r) = signed_at(stream, table, relayed, probe).await? {
                break r;
            }
            probe += 1;
        };
        match (r.seq, r.sub).cmp(&after) {
            std::cmp::Ordering::Equal => {
                found = Some((probe, r.n));
                break;
            }
            std::cmp::Ordering::Less => lo = probe + 1,
            std::cmp::Ordering::Greater if mid == 0 => break,
            std::cmp::Ordering::Greater => hi = mid - 1,
        }
    }
    let (at, n) = found.ok_or("the id is not in the stream")?;
    if oldest.saturating_sub(n + 1) > HISTORY {
        return Err(format!("{} messages back", oldest - n - 1));
    }
    // Through the ring's oldest message itself: the feed resumes after an id it holds.
    let mut out = Vec::new();
    let mut seq = at + 1;
    let mut next = n + 1;
    while next <= oldest {
        if seq > relayed.stream_seq.load(Ordering::Relaxed) {
            return Err("the stream ended before the ring's oldest message".into());
        }
        if let Some(r) = signed_at(stream, table, relayed, seq).await? {
            if r.n == next {
                out.push(Arc::new(Message::new(r.seq, r.sub, r.kind, r.text)));
                next += 1;
            } else if r.n > next {
                return Err(format!("message {next} is not in the stream"));
            }
        }
        seq += 1;
    }
    Ok(out)
}
