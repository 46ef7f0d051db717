//! The public feed: one task turns the table's snapshots and deltas into redacted
//! messages, serialised once (and framed once for WebSocket), kept in a ring for
//! resumption and broadcast to the `/ws/public` fan-out (`super::fanout`) and every
//! `/sse/public` subscriber.
//!
//! Messages (JSON): `{"type": "view", "id": "12.0", "seq": 12, "sub": 0, "n": 5,
//! "resync": false, "view": PublicView}` whenever the public view changes (its
//! `last_result` is filled in resync views only), and
//! `{"type": "result", ..., "result": RoundResult, "round": N, "status": "provisional"}`
//! when a round settles (`"final"` at once without a dispute window; a resolution that
//! re-settles the round sends its corrected result again; `"signed"`: the table's signed
//! statement of it, see `crate::trust::attest`), then `{"type": "final", "round":
//! N, "status": "final"}` when its dispute window closes. `seq` is the
//! table's log sequence number; `sub` counts messages since that row (betting-window
//! changes are not log rows); `id` = `"seq.sub"` is what a client resumes from; `n`
//! counts messages in this process, so a client can tell a gap; `at_ms` is when the
//! message was published (Unix ms). A subscriber that resumes
//! from an id still in the ring gets every message after it; otherwise (or after falling
//! behind) a `resync` view, which is the whole public state, with the last result inside
//! (and its `"signed"` statement, when the feed has it).
//! Only [`view::public_view`](super::view::public_view) output and settled results are
//! ever put in a message.

use super::view::{public_view, PublicView};
use crate::engine::{Event, RoundResult};
use crate::table::{Subscription, TableHandle, Update};
use crate::trust::Signed;
use axum::extract::ws::Utf8Bytes;
use futures::FutureExt;
use serde::Serialize;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::sync::{broadcast, Notify};
use tokio::time::Instant;

/// Messages kept for resumption.
pub const RING: usize = 4096;
/// Messages a subscriber may fall behind before it is resynced.
pub const LAG: usize = 512;

/// One public message, serialised once.
#[derive(Debug, Clone)]
pub struct Message {
    /// The table's sequence number.
    pub seq: u64,
    /// Messages since that row.
    pub sub: u32,
    /// `"view"` or `"result"`.
    pub kind: &'static str,
    /// The JSON text.
    pub text: Utf8Bytes,
    /// The text as one WebSocket text frame, encoded once for every `/ws/public` viewer.
    pub frame: bytes::Bytes,
}

impl Message {
    /// The message `seq.sub` of kind `kind` with this JSON text (framed once here).
    pub fn new(seq: u64, sub: u32, kind: &'static str, text: String) -> Message {
        Message {
            seq,
            sub,
            kind,
            frame: super::wsframe::text_frame(&text),
            text: text.into(),
        }
    }

    /// `(seq, sub)`: messages are ordered by it.
    pub fn key(&self) -> (u64, u32) {
        (self.seq, self.sub)
    }

    /// `"seq.sub"`.
    pub fn id(&self) -> String {
        format!("{}.{}", self.seq, self.sub)
    }
}

#[derive(Serialize)]
struct Wire<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
    id: String,
    seq: u64,
    sub: u32,
    n: u64,
    at_ms: u64,
    resync: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    view: Option<&'a PublicView>,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<&'a RoundResult>,
    /// Results: `provisional` (open to disputes) or `final`; `final` messages: `final`.
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<&'static str>,
    /// `final` messages: the round whose result became final.
    #[serde(skip_serializing_if = "Option::is_none")]
    round: Option<u64>,
    /// Results: the table's signed statement of it (`crate::trust::attest`); resync
    /// views: the signed statement of the view's last result, when the feed holds it (a
    /// page opened after the round settled verifies the result it shows).
    #[serde(skip_serializing_if = "Option::is_none")]
    signed: Option<&'a Signed>,
}

/// What a public message says, before it is numbered: the one description of the wire
/// format, shared by this feed and the broker publisher (`crate::publish`), so the two
/// cannot drift apart.
#[derive(Debug, Clone, Copy)]
pub enum Body<'a> {
    /// The public view (`resync`: the whole state, its last result inside).
    View {
        /// The view.
        view: &'a PublicView,
        /// Whether this is a resync view.
        resync: bool,
        /// A resync view's: the table's signed statement of the view's last result.
        signed: Option<&'a Signed>,
    },
    /// A settled round's result.
    Result {
        /// The result.
        result: &'a RoundResult,
        /// Still open to disputes.
        provisional: bool,
        /// The table's signed statement of it (none without table keys).
        signed: Option<&'a Signed>,
    },
    /// A provisional result's dispute window closed.
    Final {
        /// The round.
        round: u64,
    },
}

impl Body<'_> {
    /// `"view"`, `"result"` or `"final"`.
    pub fn kind(&self) -> &'static str {
        match self {
            Body::View { .. } => "view",
            Body::Result { .. } => "result",
            Body::Final { .. } => "final",
        }
    }
}

/// The JSON text of the message `seq.sub`, number `n`, published at `at_ms`.
pub fn encode(seq: u64, sub: u32, n: u64, at_ms: u64, body: Body<'_>) -> String {
    let mut wire = Wire {
        kind: body.kind(),
        id: format!("{seq}.{sub}"),
        seq,
        sub,
        n,
        at_ms,
        resync: false,
        view: None,
        result: None,
        status: None,
        round: None,
        signed: None,
    };
    match body {
        Body::View {
            view,
            resync,
            signed,
        } => {
            wire.view = Some(view);
            wire.resync = resync;
            wire.signed = signed;
        }
        Body::Result {
            result,
            provisional,
            signed,
        } => {
            wire.result = Some(result);
            wire.signed = signed;
            wire.status = Some(if provisional { "provisional" } else { "final" });
            wire.round = Some(result.round);
        }
        Body::Final { round } => {
            wire.status = Some("final");
            wire.round = Some(round);
        }
    }
    // Serialising these plain structs cannot fail (no maps with non-string keys).
    serde_json::to_string(&wire).unwrap_or_default()
}

struct Ring {
    capacity: usize,
    messages: VecDeque<Arc<Message>>,
    view: Option<PublicView>,
    seq: u64,
    sub: u32,
    n: u64,
    /// The table's own feed stopped following its table: no viewer for [`ALONE`].
    idle: bool,
    /// The last result's signed statement, by its round: a resync view carries it.
    signed: Option<(u64, Signed)>,
}

/// Wall-clock milliseconds since the Unix epoch (when a message was published).
fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// Parses a resume id: `"12.3"` or `"12"` (= `"12.0"`).
pub fn parse_id(id: &str) -> Option<(u64, u32)> {
    let id = id.trim();
    match id.split_once('.') {
        Some((a, b)) => Some((a.parse().ok()?, b.parse().ok()?)),
        None => Some((id.parse().ok()?, 0)),
    }
}

/// The public feed of one table.
#[derive(Clone)]
pub struct PublicFeed {
    ring: Arc<Mutex<Ring>>,
    tx: broadcast::Sender<Arc<Message>>,
    /// The table a table's own feed follows (`None`: a relay's, fed from the broker).
    follow: Option<Arc<Follow>>,
}

/// How long the table's own feed goes on making messages with no viewer: a viewer who
/// comes back within it resumes from the ring. After it the feed stops following the
/// table until a viewer joins, so a table nobody watches directly (a studio's, whose
/// players watch through relays) does not view, encode and frame every change for no
/// one (issue #37).
pub const ALONE: Duration = Duration::from_secs(5);
/// How often a quiet table's feed looks whether it still has viewers (a busy one looks at
/// every change).
const LOOK_FOR_VIEWERS: Duration = Duration::from_secs(1);
/// How often a feed at rest looks whether its table has stopped.
const AT_REST_CHECK: Duration = Duration::from_secs(5);

/// What brings a table's own feed back to following its table when a viewer joins.
struct Follow {
    table: TableHandle,
    /// The subscription the joining viewer's call took, for the feed's task.
    resumed: Mutex<Option<Subscription>>,
    woken: Notify,
}

impl Follow {
    fn lock_resumed(&self) -> MutexGuard<'_, Option<Subscription>> {
        // Only ever a take or a put: a panic cannot leave it inconsistent.
        self.resumed.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn take(&self) -> Option<Subscription> {
        self.lock_resumed().take()
    }
}

/// A message numbered elsewhere, for [`PublicFeed::relay`].
#[derive(Debug, Clone)]
pub struct Relayed {
    /// Its log row.
    pub seq: u64,
    /// Its index after that row.
    pub sub: u32,
    /// Its number.
    pub n: u64,
    /// `"view"`, `"result"` or `"final"`.
    pub kind: &'static str,
    /// The JSON text, as published.
    pub text: String,
    /// A view message's view.
    pub view: Option<PublicView>,
    /// A result message's result.
    pub result: Option<RoundResult>,
    /// A result message's signed statement.
    pub signed: Option<Signed>,
}

/// What a new subscriber gets: the backlog to send first, then the live receiver.
pub struct Joined {
    /// Messages to send before the live ones.
    pub backlog: Vec<Arc<Message>>,
    /// The live messages.
    pub live: broadcast::Receiver<Arc<Message>>,
}

impl PublicFeed {
    /// An empty feed with no task: [`PublicFeed::start`] feeds it from a table, the relay
    /// (`crate::relay`) with [`PublicFeed::relay`] from the broker.
    pub fn empty() -> PublicFeed {
        PublicFeed::with_ring(RING)
    }

    /// [`PublicFeed::empty`] keeping the last `capacity` messages for resumption (at least
    /// one).
    pub fn with_ring(capacity: usize) -> PublicFeed {
        let capacity = capacity.max(1);
        let (tx, _) = broadcast::channel(LAG);
        PublicFeed {
            ring: Arc::new(Mutex::new(Ring {
                capacity,
                messages: VecDeque::with_capacity(capacity.min(RING)),
                view: None,
                seq: 0,
                sub: 0,
                n: 0,
                idle: false,
                signed: None,
            })),
            tx,
            follow: None,
        }
    }

    /// Appends a message numbered elsewhere (by the table's publisher), as it was sent:
    /// its text is passed on byte for byte. `view` (a view message's view) and `result` (a
    /// result message's result) keep the resync view current. A message not newer than the
    /// last one is ignored (a redelivery).
    ///
    /// A message that does not follow the last one (its `n` is not the next: the feed
    /// was seeded before a stream that no longer holds what follows the seed, or the
    /// stream lost messages) is a gap for every subscriber: each is sent the whole state
    /// at it instead, a resync view with its id and number, and the ring starts again at
    /// it, so no resumer is served across the gap either. The table's own feed never
    /// relays, so it never does this.
    pub fn relay(&self, relayed: Relayed) {
        let mut ring = self.lock();
        if ring.n > 0 && (relayed.seq, relayed.sub) <= (ring.seq, ring.sub) {
            return;
        }
        let follows = relayed.n == ring.n + 1;
        ring.seq = relayed.seq;
        ring.sub = relayed.sub;
        ring.n = relayed.n;
        if let Some(view) = relayed.view {
            // The slim view leaves the last result out: it is the one already known.
            let last_result = ring.view.as_mut().and_then(|v| v.last_result.take());
            ring.view = Some(PublicView {
                last_result: view.last_result.or(last_result),
                ..view
            });
        }
        if let Some(result) = &relayed.result {
            ring.signed = relayed.signed.map(|s| (result.round, s));
        }
        if let (Some(result), Some(view)) = (relayed.result, ring.view.as_mut()) {
            view.last_result = Some(result);
        }
        let message = Arc::new(Message::new(
            relayed.seq,
            relayed.sub,
            relayed.kind,
            relayed.text,
        ));
        if follows {
            self.insert(&mut ring, message);
            return;
        }
        tracing::warn!(
            n = ring.n,
            "a gap in the relayed messages: every viewer is resynced"
        );
        ring.messages.clear();
        let resync = Self::resync(&ring).unwrap_or_else(|| Arc::clone(&message));
        ring.messages.push_back(message);
        // No subscriber is not an error.
        let _ = self.tx.send(resync);
    }

    /// Seeds a relay's feed that has nothing yet with the view after the stream's message
    /// `n` (id `id`), as the table's publisher put it in the key-value bucket: a resync
    /// sends it with that id and number until the first relayed message, which is then
    /// `n + 1` — so a viewer who joins on it, whenever it joins, gets the state and then
    /// exactly what follows it, never a jump nor an older state after a newer one. The
    /// stream's messages up to `n` reach the ring through [`PublicFeed::backfill`].
    pub fn seed(&self, view: PublicView, id: (u64, u32), n: u64) {
        let mut ring = self.lock();
        if ring.view.is_none() && ring.n == 0 && ring.messages.is_empty() {
            ring.view = Some(view);
            (ring.seq, ring.sub) = id;
            ring.n = n;
        }
    }

    /// Fills an empty ring with the stream's consecutive messages up to and including the
    /// seed's own ([`PublicFeed::seed`]), for viewers resuming after one of them; they are
    /// sent to no one, as every subscriber already has the state after them. `false` (and
    /// nothing done) when the ring is not empty or the last message is not the seed's.
    pub fn backfill(&self, messages: Vec<Arc<Message>>) -> bool {
        let mut ring = self.lock();
        let ends_at_seed = messages
            .last()
            .is_some_and(|m| m.key() == (ring.seq, ring.sub));
        if !ring.messages.is_empty() || !ends_at_seed {
            return false;
        }
        let skip = messages.len().saturating_sub(ring.capacity);
        ring.messages.extend(messages.into_iter().skip(skip));
        true
    }

    /// The newest message's id and number (`None` before the first).
    pub fn last(&self) -> Option<((u64, u32), u64)> {
        let ring = self.lock();
        (ring.n > 0).then_some(((ring.seq, ring.sub), ring.n))
    }

    /// The oldest message still in the ring: its id and number.
    pub fn oldest(&self) -> Option<((u64, u32), u64)> {
        let ring = self.lock();
        let first = ring.messages.front()?;
        // Ring messages are consecutive: the first one's number follows from the last's.
        let n = (ring.n + 1).saturating_sub(ring.messages.len() as u64);
        Some(((first.seq, first.sub), n))
    }

    /// Whether a subscriber resuming after `key` would be served from the ring (or is up
    /// to date), rather than resynced.
    pub fn holds(&self, key: (u64, u32)) -> bool {
        Self::after(&self.lock(), key).is_some()
    }

    /// The public view a resync would send now.
    pub fn view(&self) -> Option<PublicView> {
        self.lock().view.clone()
    }

    /// Starts the feed's task for `table`; it ends when the table stops. With no viewer
    /// for [`ALONE`] it rests until one joins.
    pub fn start(table: &TableHandle) -> PublicFeed {
        let follow = Arc::new(Follow {
            table: table.clone(),
            resumed: Mutex::new(None),
            woken: Notify::new(),
        });
        let feed = PublicFeed {
            follow: Some(Arc::clone(&follow)),
            ..PublicFeed::empty()
        };
        feed.on_snapshot(&table.snapshot());
        let mut sub = Some(table.subscribe());
        let mut watch = table.watch();
        let me = feed.clone();
        let handle = table.clone();
        tokio::spawn(async move {
            // The last time the task saw someone subscribed: it looks at every change,
            // and every `LOOK_FOR_VIEWERS` while the table is quiet.
            let mut watched_at = Instant::now();
            let mut look = crate::clock::every(LOOK_FOR_VIEWERS);
            loop {
                let Some(following) = sub.as_mut() else {
                    // At rest: a viewer's join wakes it with a subscription taken then.
                    tokio::select! {
                        () = follow.woken.notified() => {
                            sub = follow.take();
                            watched_at = Instant::now();
                        }
                        () = tokio::time::sleep_until(crate::clock::on_grid(
                            tokio::time::Instant::now() + AT_REST_CHECK,
                            LOOK_FOR_VIEWERS,
                        )) => {
                            if watch.has_changed().is_err() {
                                break;
                            }
                        }
                    }
                    continue;
                };
                tokio::select! {
                    // Deltas first: a snapshot replaces the last one at once, while the
                    // deltas of the rows before it may still be queued; taking the
                    // snapshot first would number a later row's view before an earlier
                    // row's result (issue #32: the "silent gap" under load).
                    biased;
                    update = following.next() => match update {
                        Some(Update::Delta(d)) => {
                            let settled = d.events.iter().filter_map(|e| match e {
                                Event::RoundSettled(result) => Some(result),
                                _ => None,
                            });
                            for (i, result) in settled.enumerate() {
                                let provisional = d.provisional == Some(result.round);
                                // Public: players by their public names, as the view.
                                let mut public = (**result).clone();
                                handle.snapshot().pseudonyms.result(&mut public);
                                me.on_result(d.seq, &public, provisional, d.signed.get(i));
                            }
                            if let crate::store::Record::Final { round } = &d.record {
                                me.on_final(d.seq, *round);
                            }
                        }
                        Some(Update::Resync(_)) => {}
                        None => break,
                    },
                    changed = watch.changed() => {
                        if changed.is_err() {
                            break;
                        }
                        let snapshot = Arc::clone(&watch.borrow_and_update());
                        me.on_snapshot(&snapshot);
                    }
                    _ = look.tick() => {}
                }
                if me.tx.receiver_count() > 0 {
                    watched_at = Instant::now();
                } else if watched_at.elapsed() >= ALONE && me.rest() {
                    sub = None;
                }
            }
        });
        feed
    }

    /// Stops following the table if no one is subscribed (checked under the ring's lock,
    /// which every join takes: none can slip in between).
    fn rest(&self) -> bool {
        let mut ring = self.lock();
        if self.tx.receiver_count() > 0 {
            return false;
        }
        ring.idle = true;
        true
    }

    /// A viewer joins a feed at rest: it follows the table again from the table's state
    /// now, taken with a subscription whose deltas are those after it (its first update
    /// is that state, at once), and the task is woken with it.
    fn resume(&self, ring: &mut Ring) {
        let Some(follow) = self.follow.as_ref().filter(|_| ring.idle) else {
            return;
        };
        ring.idle = false;
        let mut sub = follow.table.subscribe();
        let snapshot = match sub.next().now_or_never() {
            Some(Some(Update::Resync(snapshot))) => snapshot,
            _ => follow.table.snapshot(),
        };
        let view = public_view(&snapshot);
        if Self::changes(ring, &view) {
            // What changed at rest made no message: no resumer can be brought to now
            // from the ring, so it starts again here, and the state now takes a number
            // (and an id) of its own, which a new viewer's resync view carries.
            ring.messages.clear();
            Self::number_next(ring, view.seq);
            ring.view = Some(view);
        }
        *follow.lock_resumed() = Some(sub);
        follow.woken.notify_one();
    }

    /// Whether `view` differs from the ring's in what people can see (not its `seq`).
    fn changes(ring: &Ring, view: &PublicView) -> bool {
        !ring.view.as_ref().is_some_and(|v| {
            PublicView {
                seq: view.seq,
                ..v.clone()
            } == *view
        })
    }

    fn lock(&self) -> MutexGuard<'_, Ring> {
        // A panic while holding the lock leaves a consistent ring (pushes are atomic).
        self.ring.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Takes the next number and id, for a message about row `seq`; the row it is
    /// numbered under (never before the last one's).
    fn number_next(ring: &mut Ring, seq: u64) -> u64 {
        // Ids only ever grow with `n`: a viewer's fan-out sends nothing at or below the
        // last id it queued, and resumes after an id by finding it in the ring. A message
        // about an earlier row than the last one numbered takes that row's id space.
        let seq = seq.max(ring.seq);
        if seq == ring.seq && ring.n > 0 {
            ring.sub += 1;
        } else {
            ring.seq = seq;
            ring.sub = 0;
        }
        ring.n += 1;
        seq
    }

    fn push(&self, ring: &mut Ring, seq: u64, body: Body<'_>) {
        let seq = Self::number_next(ring, seq);
        let text = encode(seq, ring.sub, ring.n, now_ms(), body);
        let message = Arc::new(Message::new(seq, ring.sub, body.kind(), text));
        self.insert(ring, message);
    }

    /// Appends `message` to the ring and sends it to every subscriber.
    fn insert(&self, ring: &mut Ring, message: Arc<Message>) {
        if ring.messages.len() >= ring.capacity {
            ring.messages.pop_front();
        }
        ring.messages.push_back(Arc::clone(&message));
        // No subscriber is not an error.
        let _ = self.tx.send(message);
    }

    fn on_snapshot(&self, snapshot: &crate::table::Snapshot) {
        let view = public_view(snapshot);
        let mut ring = self.lock();
        // Only changes people can see make a message (e.g. not the expectation).
        if !Self::changes(&ring, &view) {
            return;
        }
        // The last result travels in its own message (and in resync views): leaving it
        // out of the others halves what every viewer receives per change.
        let slim = PublicView {
            last_result: None,
            ..view.clone()
        };
        self.push(
            &mut ring,
            view.seq,
            Body::View {
                view: &slim,
                resync: false,
                signed: None,
            },
        );
        ring.view = Some(view);
    }

    fn on_result(
        &self,
        seq: u64,
        result: &RoundResult,
        provisional: bool,
        signed: Option<&Signed>,
    ) {
        let mut ring = self.lock();
        ring.signed = signed.map(|s| (result.round, s.clone()));
        self.push(
            &mut ring,
            seq,
            Body::Result {
                result,
                provisional,
                signed,
            },
        );
    }

    /// A provisional result's dispute window closed.
    fn on_final(&self, seq: u64, round: u64) {
        let mut ring = self.lock();
        self.push(&mut ring, seq, Body::Final { round });
    }

    /// Joins the feed after the message `after` (`None`: a new viewer): the missed
    /// messages when they are all still in the ring, otherwise a resync view.
    pub fn join(&self, after: Option<(u64, u32)>) -> Joined {
        let mut ring = self.lock();
        self.resume(&mut ring);
        let live = self.tx.subscribe();
        let backlog = Self::backlog(&ring, after);
        Joined { backlog, live }
    }

    /// After falling behind: what the subscriber missed since `last`, or a resync.
    pub fn catch_up(&self, last: Option<(u64, u32)>) -> Joined {
        self.join(last)
    }

    /// What a subscriber that already has its own live receiver missed since `last` (every
    /// message still in the ring), or a resync view: [`PublicFeed::join`] without a new
    /// receiver.
    pub fn missed(&self, last: Option<(u64, u32)>) -> Vec<Arc<Message>> {
        Self::backlog(&self.lock(), last)
    }

    /// The messages after `after` when the ring still holds them all, else a resync view.
    fn backlog(ring: &Ring, after: Option<(u64, u32)>) -> Vec<Arc<Message>> {
        match after.and_then(|key| Self::after(ring, key)) {
            Some(missed) => missed,
            None => Self::resync(ring).into_iter().collect(),
        }
    }

    /// A live receiver of its own (for the `/ws/public` fan-out's shards).
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<Message>> {
        let mut ring = self.lock();
        self.resume(&mut ring);
        self.tx.subscribe()
    }

    fn after(ring: &Ring, key: (u64, u32)) -> Option<Vec<Arc<Message>>> {
        let last = ring.messages.back()?;
        if key == (last.seq, last.sub) {
            return Some(Vec::new());
        }
        let at = ring.messages.iter().position(|m| (m.seq, m.sub) == key)?;
        Some(ring.messages.iter().skip(at + 1).cloned().collect())
    }

    fn resync(ring: &Ring) -> Option<Arc<Message>> {
        let view = ring.view.as_ref()?;
        // Only the statement of the result the view shows (a correction's new statement
        // replaces the old one with the result it signs).
        let last = view.last_result.as_ref().map(|r| r.round);
        let signed = ring
            .signed
            .as_ref()
            .filter(|(round, _)| Some(*round) == last)
            .map(|(_, s)| s);
        let text = encode(
            ring.seq,
            ring.sub,
            ring.n,
            now_ms(),
            Body::View {
                view,
                resync: true,
                signed,
            },
        );
        Some(Arc::new(Message::new(ring.seq, ring.sub, "view", text)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A table's view after the message numbered `n` (its `shoe.dealt` tells them apart).
    fn view(n: u64) -> PublicView {
        serde_json::from_value(serde_json::json!({
            "table": "alpha", "name": "Demo table", "variant": "deluxe",
            "currency": {"code": "EUR", "symbol": "€", "exponent": 2},
            "seq": n, "state": "open",
            "betting": {"open": false, "bets": [], "players": []},
            "shoe": {"number": 1, "dealt": n, "burned": 0, "remaining": 416 - n, "cut_seen": false},
            "round": {"number": 1, "settled": false, "bets": [], "hands": [], "dealer": [],
                      "dealer_total": 0, "dealer_soft": false, "peeked": null},
            "rounds_settled": 0, "last_result": null, "provisional": null
        }))
        .expect("a view")
    }

    /// The view message `n` (id `n.0`) as the table's publisher numbered it.
    fn relayed(n: u64) -> Relayed {
        let v = view(n);
        Relayed {
            seq: n,
            sub: 0,
            n,
            kind: "view",
            text: encode(
                n,
                0,
                n,
                0,
                Body::View {
                    view: &v,
                    resync: false,
                    signed: None,
                },
            ),
            view: Some(v),
            result: None,
            signed: None,
        }
    }

    fn json(m: &Message) -> serde_json::Value {
        serde_json::from_str(m.text.as_str()).expect("json")
    }

    #[test]
    fn ids_grow_with_n_even_for_a_message_about_an_earlier_row() {
        let feed = PublicFeed::with_ring(8);
        feed.on_final(101, 1);
        // A late row's message (its delta read after a later snapshot): numbered after,
        // so its id must come after too, or a viewer's fan-out drops it as already sent.
        feed.on_final(100, 1);
        feed.on_final(101, 2);
        feed.on_final(102, 3);
        let keys: Vec<_> = feed.lock().messages.iter().map(|m| m.key()).collect();
        assert_eq!(keys.len(), 4);
        assert!(keys.windows(2).all(|w| w[0] < w[1]), "{keys:?}");
        // Resuming after any of them finds exactly what follows.
        assert_eq!(feed.missed(Some(keys[1])).len(), 2);
    }

    #[test]
    fn a_viewer_of_a_seeded_feed_gets_the_seed_numbered_as_published_then_what_follows() {
        let feed = PublicFeed::with_ring(8);
        feed.seed(view(17), (17, 0), 17);
        // A viewer joining before the relay has read anything of the stream.
        let mut joined = feed.join(None);
        let first = json(&joined.backlog[0]);
        assert_eq!(first["resync"], true);
        assert_eq!(
            (first["id"].as_str(), first["n"].as_u64()),
            (Some("17.0"), Some(17))
        );
        assert_eq!(first["view"]["shoe"]["dealt"], 17);
        // The stream's messages up to the seed's fill the ring, sent to no one.
        let early: Vec<_> = (10..=17)
            .map(|n| {
                let r = relayed(n);
                Arc::new(Message::new(r.seq, r.sub, r.kind, r.text))
            })
            .collect();
        // Older messages through `relay` are not newer than the seed: nothing.
        feed.relay(relayed(12));
        assert!(feed.backfill(early));
        assert!(
            joined.live.try_recv().is_err(),
            "no older state after the seed's"
        );
        assert_eq!(feed.oldest(), Some(((10, 0), 10)));
        assert!(feed.holds((12, 0)));
        // Then the next message, live, as published.
        feed.relay(relayed(18));
        let next = json(&joined.live.try_recv().expect("message 18"));
        assert_eq!(
            (next["n"].as_u64(), next["resync"].as_bool()),
            (Some(18), Some(false))
        );
        assert_eq!(feed.missed(Some((12, 0))).len(), 6);
    }

    #[test]
    fn a_backfill_that_does_not_end_at_the_seed_is_refused() {
        let feed = PublicFeed::with_ring(8);
        feed.seed(view(17), (17, 0), 17);
        let r = relayed(16);
        assert!(!feed.backfill(vec![Arc::new(Message::new(r.seq, r.sub, r.kind, r.text))]));
        assert_eq!(feed.oldest(), None);
    }

    #[test]
    fn a_relayed_message_that_does_not_follow_resyncs_every_viewer() {
        let feed = PublicFeed::with_ring(8);
        feed.seed(view(5), (5, 0), 5);
        feed.relay(relayed(6));
        let mut joined = feed.join(Some((6, 0)));
        assert!(joined.backlog.is_empty());
        // Messages 7 and 8 never reach the relay (the stream lost them).
        feed.relay(relayed(9));
        let m = json(&joined.live.try_recv().expect("a message"));
        assert_eq!(
            (m["n"].as_u64(), m["resync"].as_bool()),
            (Some(9), Some(true))
        );
        assert_eq!(m["view"]["shoe"]["dealt"], 9);
        // No resumer is served across the gap.
        assert!(!feed.holds((6, 0)));
        assert_eq!(feed.oldest(), Some(((9, 0), 9)));
        feed.relay(relayed(10));
        let m = json(&joined.live.try_recv().expect("a message"));
        assert_eq!(
            (m["n"].as_u64(), m["resync"].as_bool()),
            (Some(10), Some(false))
        );
    }

    /// The result message `n` (id `n.0`) of `round`, signed with `sig` when given.
    fn relayed_result(n: u64, round: u64, sig: Option<&str>) -> Relayed {
        let result: RoundResult = serde_json::from_value(serde_json::json!({
            "round": round, "shoe": 1, "dealer_cards": [], "dealer_total": 0,
            "dealer_natural": false, "hands": [], "bets": [], "burned": []
        }))
        .expect("a result");
        let signed = sig.map(|s| Signed {
            payload: format!("{{\"round\": {round}}}"),
            sig: s.to_string(),
        });
        Relayed {
            seq: n,
            sub: 0,
            n,
            kind: "result",
            text: encode(
                n,
                0,
                n,
                0,
                Body::Result {
                    result: &result,
                    provisional: false,
                    signed: signed.as_ref(),
                },
            ),
            view: None,
            result: Some(result),
            signed,
        }
    }

    #[test]
    fn a_resync_view_carries_the_signed_statement_of_the_result_it_shows() {
        let feed = PublicFeed::with_ring(8);
        feed.seed(view(5), (5, 0), 5);
        // Before any result: nothing signed to carry.
        let m = json(&feed.join(None).backlog[0]);
        assert!(m.get("signed").is_none(), "{m}");
        feed.relay(relayed_result(6, 3, Some("ab")));
        let m = json(&feed.join(None).backlog[0]);
        assert_eq!(
            (
                m["resync"].as_bool(),
                m["view"]["last_result"]["round"].as_u64()
            ),
            (Some(true), Some(3))
        );
        assert_eq!(m["signed"]["sig"], "ab", "{m}");
        // A later view keeps it: the result it shows is the same.
        feed.relay(relayed(7));
        assert_eq!(json(&feed.join(None).backlog[0])["signed"]["sig"], "ab");
        // An unsigned result of the next round: the statement of the round before is not
        // passed off as its own.
        feed.relay(relayed_result(8, 4, None));
        let m = json(&feed.join(None).backlog[0]);
        assert_eq!(m["view"]["last_result"]["round"], 4);
        assert!(m.get("signed").is_none(), "{m}");
    }
}
