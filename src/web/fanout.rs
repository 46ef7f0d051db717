//! The `/ws/public` fan-out over plain TCP: shard tasks ([`SHARDS_PER_CORE`] per core) each own the
//! sockets of their share of the viewers and write every feed message to them as one
//! WebSocket frame encoded once ([`FeedMessage::frame`]), with a non-blocking write per
//! viewer.
//!
//! Why not a task per viewer: with 10,000 viewers on a 2-core machine the per-viewer task
//! (a wake-up, a broadcast receive, tungstenite framing into its own buffers, a flush) cost
//! about a fifth of the server's CPU per delivered message on top of the kernel's send
//! (about 13.6 against 11 µs), and its buffers half the server's memory (119 against 62 MB).
//! The latency is the kernel's: see docs/src/benchmarks.md, "Public stream load".
//!
//! What each viewer keeps (the guarantees of `/ws/public` are the same as with a task per
//! viewer):
//! - **Order, no silent gap.** A viewer's frames go out in order from its own queue. A
//!   socket that cannot take more keeps the rest queued and the shard waits for it to be
//!   writable, while the others go on. A queue that reaches [`QUEUE`] frames is dropped
//!   (except a frame already half written) and counted as lagging in `/metrics`; once the
//!   socket takes its backlog the viewer catches up from the feed's ring, or gets a
//!   `resync` view when the ring no longer covers what it missed. A slow viewer therefore
//!   holds a bounded amount of memory and never slows the others.
//! - **Its own reads.** A small reader task per viewer sleeps until the viewer sends
//!   something: pings are answered with pongs and a close with a close (both through the
//!   shard, between whole frames), a protocol violation closes the connection with the
//!   matching code (tungstenite's protocol context, see [`super::wsframe`]), an end of
//!   stream or an error removes it.
//!
//! TLS connections keep the per-viewer task (`streams::public_socket`): the shards write to
//! raw TCP sockets.

use super::feed::{Message as FeedMessage, PublicFeed};
use super::wsframe::{Step, ViewerReader};
use crate::metrics::{Feed, Metrics, Stream, SubscriberGuard};
use bytes::Bytes;
use std::collections::{HashMap, HashSet, VecDeque};
use std::future::poll_fn;
use std::io::{self, IoSlice};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::Poll;
use tokio::net::TcpStream;
use tokio::sync::broadcast::error::{RecvError, TryRecvError};
use tokio::sync::{broadcast, mpsc, oneshot};

/// Frames a viewer may have waiting for its socket before it is caught up from the ring
/// instead (the same allowance as the feed's broadcast, [`super::feed::LAG`]).
pub const QUEUE: usize = super::feed::LAG;
/// Viewers a shard writes to before it lets other tasks run (the table's own task among
/// them: a fan-out to thousands of viewers must not hold a core for tens of milliseconds).
const YIELD_EVERY: usize = 64;
/// Frames gathered into one `writev`.
const WRITEV: usize = 32;
/// Shards per core. Several per core, so the runtime's work stealing evens out a fan-out
/// over the cores: with one per core, the shard sharing its core with other work finished
/// each fan-out up to 1.5 times later than the other (10,000 viewers, 2 cores: p99 136–185
/// ms with 2 shards, 115–131 ms with 32). An idle shard costs a task and a receiver.
pub const SHARDS_PER_CORE: usize = 16;
/// Control messages a shard may have waiting (joins, pongs, closes).
const CONTROL: usize = 1024;
/// Viewers a shard is given before an idle one is woken for this feed. Each feed message
/// wakes every shard that has a viewer: a relay with 50 viewers of each of 50 tables woke
/// 32 shard tasks per message for one or two writes apiece. Filling shards to this many
/// first keeps one table's fan-out on a few tasks; past `FILL` viewers on every shard (a
/// single table's thousands) the least loaded takes the next, as before. Measured in
/// interleaved pairs: 62,500–79,300 messages per relay CPU second against 53,100–77,600
/// handed out in turn, the tail no worse — a gain within this VM's own variation
/// (docs/src/benchmarks.md, "Studio capacity").
pub const FILL: usize = 8;

/// The fan-out: hands each new viewer to a shard.
#[derive(Clone)]
pub struct Fanout {
    shards: Arc<[mpsc::Sender<Control>]>,
    /// Viewers on each shard (raised on a join here, lowered by the shard on a removal).
    counts: Arc<[Arc<AtomicUsize>]>,
    ids: Arc<AtomicU64>,
}

/// What a shard is told besides the feed's messages.
enum Control {
    /// A new viewer, resuming after `after` (`None`: from a resync view).
    Join {
        id: u64,
        stream: Arc<TcpStream>,
        after: Option<(u64, u32)>,
        gone: oneshot::Sender<()>,
    },
    /// A control frame to send between whole frames (a pong).
    Send { id: u64, frame: Bytes },
    /// Send this close frame instead of anything still queued, then drop the viewer.
    Close { id: u64, frame: Bytes },
    /// The viewer's connection ended.
    Gone { id: u64 },
}

impl Fanout {
    /// Starts `shards` shard tasks on `feed` (call inside a runtime); they end when the
    /// feed's task does.
    pub fn start(feed: &PublicFeed, metrics: &Arc<Metrics>, shards: usize) -> Fanout {
        let (shards, counts): (Vec<_>, Vec<_>) = (0..shards.max(1))
            .map(|_| {
                let (tx, rx) = mpsc::channel(CONTROL);
                let count = Arc::new(AtomicUsize::new(0));
                let shard = Shard {
                    feed: feed.clone(),
                    metrics: Arc::clone(metrics),
                    viewers: HashMap::new(),
                    blocked: HashSet::new(),
                    count: Arc::clone(&count),
                };
                tokio::spawn(shard.run(rx));
                (tx, count)
            })
            .unzip();
        Fanout {
            shards: shards.into(),
            counts: counts.into(),
            ids: Arc::new(AtomicU64::new(0)),
        }
    }

    /// [`SHARDS_PER_CORE`] shards per core the runtime may use.
    pub fn shards_for_this_machine() -> usize {
        SHARDS_PER_CORE * std::thread::available_parallelism().map_or(1, |n| n.get())
    }

    /// Takes over an upgraded `/ws/public` connection: `read` is what the viewer sent
    /// after its handshake that the HTTP server already read.
    pub async fn add(&self, stream: TcpStream, read: Bytes, after: Option<(u64, u32)>) {
        let stream = Arc::new(stream);
        let id = self.ids.fetch_add(1, Ordering::Relaxed);
        let chosen = pick(self.counts.iter().map(|c| c.load(Ordering::Relaxed)));
        self.counts[chosen].fetch_add(1, Ordering::Relaxed);
        let shard = &self.shards[chosen];
        let (gone, gone_rx) = oneshot::channel();
        let join = Control::Join {
            id,
            stream: Arc::clone(&stream),
            after,
            gone,
        };
        // A shard only ends with the feed, i.e. when the service stops.
        if shard.send(join).await.is_ok() {
            tokio::spawn(read_viewer(id, stream, read, shard.clone(), gone_rx));
        } else {
            self.counts[chosen].fetch_sub(1, Ordering::Relaxed);
        }
    }
}

/// The shard for the next viewer, from the shards' viewer counts in order: the least
/// loaded of those already serving someone while it has fewer than [`FILL`], else the
/// first idle one, else the least loaded of all (the first of equals).
fn pick(counts: impl Iterator<Item = usize>) -> usize {
    let mut busy: Option<(usize, usize)> = None;
    let mut idle = None;
    for (i, n) in counts.enumerate() {
        if n == 0 {
            idle = idle.or(Some(i));
        } else if busy.is_none_or(|(_, m)| n < m) {
            busy = Some((i, n));
        }
    }
    match (busy, idle) {
        (Some((i, n)), _) if n < FILL => i,
        (_, Some(i)) => i,
        (Some((i, _)), None) => i,
        (None, None) => 0,
    }
}

/// Answers what a viewer sends until its connection ends or the shard drops it.
async fn read_viewer(
    id: u64,
    stream: Arc<TcpStream>,
    read: Bytes,
    shard: mpsc::Sender<Control>,
    mut gone: oneshot::Receiver<()>,
) {
    let mut reader = ViewerReader::new(&read);
    // It may share the HTTP server's read buffer: not kept for the connection's life.
    drop(read);
    loop {
        let reply = match reader.step(&stream) {
            Step::Reply(frame) => Control::Send { id, frame },
            Step::Close(frame) => Control::Close { id, frame },
            Step::More => {
                tokio::task::yield_now().await;
                continue;
            }
            Step::Gone => {
                let _ = shard.send(Control::Gone { id }).await;
                return;
            }
            Step::Wait => {
                tokio::select! {
                    _ = &mut gone => return,
                    ready = stream.readable() => {
                        if ready.is_err() {
                            let _ = shard.send(Control::Gone { id }).await;
                            return;
                        }
                    }
                }
                continue;
            }
        };
        let closing = matches!(reply, Control::Close { .. });
        // Waiting here is the back-pressure on a viewer that floods pings.
        if shard.send(reply).await.is_err() || closing {
            return;
        }
    }
}

/// One frame waiting for a viewer's socket.
struct Frame {
    bytes: Bytes,
    /// The feed message it carries (`None`: a control frame).
    key: Option<(u64, u32)>,
}

/// A viewer as its shard sees it.
struct Viewer {
    stream: Arc<TcpStream>,
    queue: VecDeque<Frame>,
    /// Bytes of the queue's first frame already written.
    written: usize,
    /// The newest feed message queued or written: older ones are not sent again.
    last: Option<(u64, u32)>,
    /// The newest feed message written whole.
    sent: Option<(u64, u32)>,
    /// Messages were dropped: catch up from the ring once the queue is written.
    behind: bool,
    /// A close frame is queued: drop the viewer once it is written.
    closing: bool,
    /// Dropped with the viewer, which ends its reader task.
    _gone: oneshot::Sender<()>,
    _counted: SubscriberGuard,
}

/// How far a viewer's queue got.
enum Flushed {
    /// All written.
    Done,
    /// The socket takes no more for now.
    Blocked,
    /// The close frame went out: drop the viewer.
    Closed,
}

impl Viewer {
    /// Queues `m` unless the viewer already has it or is behind; drops the queue when it
    /// is full (the viewer then catches up from the ring). `true` when that happened.
    fn push(&mut self, m: &FeedMessage) -> bool {
        if self.behind || self.closing || self.last.is_some_and(|l| m.key() <= l) {
            return false;
        }
        if self.queue.len() >= QUEUE {
            self.drop_queue();
            self.behind = true;
            return true;
        }
        self.queue.push_back(Frame {
            bytes: m.frame.clone(),
            key: Some(m.key()),
        });
        self.last = Some(m.key());
        false
    }

    /// Drops every queued frame but one already half written (it must be finished, or the
    /// stream is corrupt).
    fn drop_queue(&mut self) {
        let keep = usize::from(self.written > 0);
        self.queue.truncate(keep);
        self.last = self.queue.front().and_then(|f| f.key).or(self.sent);
    }

    /// Writes as much of the queue as the socket takes, then catches up if behind.
    fn flush(&mut self, feed: &PublicFeed) -> io::Result<Flushed> {
        loop {
            while !self.queue.is_empty() {
                let mut slices = [IoSlice::new(&[]); WRITEV];
                let mut count = 0;
                for (i, f) in self.queue.iter().take(WRITEV).enumerate() {
                    let from = if i == 0 { self.written } else { 0 };
                    slices[i] = IoSlice::new(&f.bytes[from..]);
                    count += 1;
                }
                match send(&self.stream, &slices[..count]) {
                    Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                    Ok(n) => self.consume(n),
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(Flushed::Blocked),
                    Err(e) => return Err(e),
                }
            }
            if self.closing {
                return Ok(Flushed::Closed);
            }
            if !self.behind {
                return Ok(Flushed::Done);
            }
            // Everything it missed goes at once (it is reading again), not against QUEUE:
            // the messages after `last`, or a resync view, which is taken even when
            // `last` claims more (a client resuming from an id this process never issued).
            self.behind = false;
            for m in feed.missed(self.last) {
                self.queue.push_back(Frame {
                    bytes: m.frame.clone(),
                    key: Some(m.key()),
                });
                self.last = Some(m.key());
            }
        }
    }

    /// `n` bytes were written from the front of the queue.
    fn consume(&mut self, mut n: usize) {
        while let Some(front) = self.queue.front() {
            let left = front.bytes.len() - self.written;
            if n < left {
                self.written += n;
                return;
            }
            n -= left;
            self.written = 0;
            if let Some(key) = front.key {
                self.sent = Some(key);
            }
            self.queue.pop_front();
        }
    }
}

/// Writes `slices` without blocking: `sendmsg(2)`, which (unlike `writev`) skips the VFS
/// layer on the way to TCP, about a tenth of the kernel's cost per write here.
fn send(stream: &TcpStream, slices: &[IoSlice<'_>]) -> io::Result<usize> {
    use std::os::fd::AsRawFd;
    stream.try_io(tokio::io::Interest::WRITABLE, || {
        // SAFETY: an all-zero `msghdr` is valid (no address, no control data).
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        // `IoSlice` is ABI-compatible with `iovec` (guaranteed on Unix); the kernel only
        // reads through it.
        msg.msg_iov = slices.as_ptr() as *mut libc::iovec;
        msg.msg_iovlen = slices.len() as _;
        // SAFETY: the descriptor is the stream's own and stays open for the call; `msg`
        // points to `slices`, which outlive it.
        let n = unsafe {
            libc::sendmsg(
                stream.as_raw_fd(),
                &msg,
                libc::MSG_NOSIGNAL | libc::MSG_DONTWAIT,
            )
        };
        // `n` is -1 or a byte count no larger than the slices.
        usize::try_from(n).map_err(|_| io::Error::last_os_error())
    })
}

/// One shard: its viewers and the ones whose sockets are full.
struct Shard {
    feed: PublicFeed,
    metrics: Arc<Metrics>,
    viewers: HashMap<u64, Viewer>,
    blocked: HashSet<u64>,
    /// Its entry in [`Fanout`]'s counts.
    count: Arc<AtomicUsize>,
}

/// What woke a shard.
enum Wake {
    Control(Option<Control>),
    Live(Result<Arc<FeedMessage>, RecvError>),
    Writable(Vec<u64>),
}

impl Shard {
    /// Serves the shard's viewers until the feed or the fan-out ends. A shard without
    /// viewers holds no live receiver, so the feed's messages wake only the shards that
    /// have someone to write them to (a viewer joining catches up from the ring first).
    async fn run(mut self, mut control: mpsc::Receiver<Control>) {
        let mut live: Option<broadcast::Receiver<Arc<FeedMessage>>> = None;
        loop {
            if self.viewers.is_empty() {
                live = None;
            }
            let wake = tokio::select! {
                c = control.recv() => Wake::Control(c),
                m = recv(live.as_mut()) => Wake::Live(m),
                ids = writable(&self.viewers, &self.blocked) => Wake::Writable(ids),
            };
            match wake {
                Wake::Control(Some(c)) => {
                    // Subscribed before the joining viewer reads the ring: a message
                    // published in between comes both ways and is sent once (by key).
                    if matches!(c, Control::Join { .. }) && live.is_none() {
                        live = Some(self.feed.subscribe());
                    }
                    self.control(c)
                }
                Wake::Control(None) | Wake::Live(Err(RecvError::Closed)) => return,
                Wake::Live(Ok(m)) => {
                    let Some(live) = live.as_mut() else {
                        continue;
                    };
                    // Everything already published goes out together: one write per
                    // viewer for a burst.
                    let mut batch = vec![m];
                    let mut lagged = false;
                    gather(live, &mut batch, &mut lagged);
                    let lagged = self.publish(batch, live, lagged).await;
                    if lagged {
                        self.all_behind().await;
                    }
                }
                Wake::Live(Err(RecvError::Lagged(_))) => self.all_behind().await,
                Wake::Writable(ids) => {
                    for id in ids {
                        self.blocked.remove(&id);
                        self.flush(id);
                    }
                }
            }
        }
    }

    fn control(&mut self, c: Control) {
        match c {
            Control::Join {
                id,
                stream,
                after,
                gone,
            } => {
                // `missed(None)` is a resync view: what a new viewer starts from.
                let v = Viewer {
                    stream,
                    queue: VecDeque::new(),
                    written: 0,
                    last: after,
                    sent: after,
                    // A new viewer starts as one that missed everything after `after`.
                    behind: true,
                    closing: false,
                    _gone: gone,
                    _counted: self.metrics.subscriber(Stream::PublicWs),
                };
                self.viewers.insert(id, v);
                self.flush(id);
            }
            Control::Send { id, frame } => {
                if let Some(v) = self.viewers.get_mut(&id) {
                    // A viewer that does not read its pongs gets no more of them.
                    if v.queue.len() < QUEUE && !v.closing {
                        v.queue.push_back(Frame {
                            bytes: frame,
                            key: None,
                        });
                    }
                }
                if !self.blocked.contains(&id) {
                    self.flush(id);
                }
            }
            Control::Close { id, frame } => {
                if let Some(v) = self.viewers.get_mut(&id) {
                    v.drop_queue();
                    v.behind = false;
                    v.closing = true;
                    v.queue.push_back(Frame {
                        bytes: frame,
                        key: None,
                    });
                }
                if !self.blocked.contains(&id) {
                    self.flush(id);
                }
            }
            Control::Gone { id } => self.remove(id),
        }
    }

    /// Writes what `id` has queued; drops it when its connection failed or it closed.
    fn flush(&mut self, id: u64) {
        let Some(v) = self.viewers.get_mut(&id) else {
            return;
        };
        match v.flush(&self.feed) {
            Ok(Flushed::Done) => {}
            Ok(Flushed::Blocked) => {
                self.blocked.insert(id);
            }
            Ok(Flushed::Closed) | Err(_) => self.remove(id),
        }
    }

    fn remove(&mut self, id: u64) {
        if self.viewers.remove(&id).is_some() {
            self.count.fetch_sub(1, Ordering::Relaxed);
        }
        self.blocked.remove(&id);
    }

    /// Queues `batch` for every viewer and writes it to those whose sockets take it.
    /// Messages published meanwhile join the batch for the viewers not yet written to, and
    /// a further pass takes them to the ones that were (a burst costs one write per viewer
    /// where it can, and never waits for a whole pass). `true` when the shard's receiver
    /// fell behind (`lagged` in, or while gathering).
    async fn publish(
        &mut self,
        mut batch: Vec<Arc<FeedMessage>>,
        live: &mut broadcast::Receiver<Arc<FeedMessage>>,
        mut lagged: bool,
    ) -> bool {
        let ids: Vec<u64> = self.viewers.keys().copied().collect();
        loop {
            let start = batch.len();
            for (i, id) in ids.iter().enumerate() {
                if i > 0 && i % YIELD_EVERY == 0 {
                    tokio::task::yield_now().await;
                    gather(live, &mut batch, &mut lagged);
                }
                let Some(v) = self.viewers.get_mut(id) else {
                    continue;
                };
                let mut overflowed = false;
                for m in &batch {
                    overflowed |= v.push(m);
                }
                if overflowed {
                    self.metrics.lagged(Feed::Public);
                }
                if !self.blocked.contains(id) {
                    self.flush(*id);
                }
            }
            if batch.len() == start || lagged {
                return lagged;
            }
            // The viewers early in the pass have only the first messages.
            batch.drain(..start);
        }
    }

    /// The shard itself fell behind the feed: every viewer catches up from the ring.
    async fn all_behind(&mut self) {
        let ids: Vec<u64> = self.viewers.keys().copied().collect();
        for (i, id) in ids.into_iter().enumerate() {
            if i > 0 && i % YIELD_EVERY == 0 {
                tokio::task::yield_now().await;
            }
            let Some(v) = self.viewers.get_mut(&id) else {
                continue;
            };
            if v.closing {
                continue;
            }
            self.metrics.lagged(Feed::Public);
            v.drop_queue();
            v.behind = true;
            if !self.blocked.contains(&id) {
                self.flush(id);
            }
        }
    }
}

/// The next live message, or never without a receiver.
async fn recv(
    live: Option<&mut broadcast::Receiver<Arc<FeedMessage>>>,
) -> Result<Arc<FeedMessage>, RecvError> {
    match live {
        Some(live) => live.recv().await,
        None => std::future::pending().await,
    }
}

/// Adds what has been published since to `batch` (up to [`WRITEV`] messages); `lagged`
/// when the receiver fell behind.
fn gather(
    live: &mut broadcast::Receiver<Arc<FeedMessage>>,
    batch: &mut Vec<Arc<FeedMessage>>,
    lagged: &mut bool,
) {
    while !*lagged && batch.len() < WRITEV {
        match live.try_recv() {
            Ok(m) => batch.push(m),
            Err(TryRecvError::Lagged(_)) => *lagged = true,
            // Empty, or closed: the next `recv` reports it.
            Err(_) => return,
        }
    }
}

/// Resolves with the blocked viewers whose sockets take writes again (never, when none is
/// blocked); the others are woken for.
async fn writable(viewers: &HashMap<u64, Viewer>, blocked: &HashSet<u64>) -> Vec<u64> {
    poll_fn(|cx| {
        let ready: Vec<u64> = blocked
            .iter()
            .filter(|id| {
                viewers
                    .get(id)
                    .is_some_and(|v| v.stream.poll_write_ready(cx).is_ready())
            })
            .copied()
            .collect();
        if ready.is_empty() {
            Poll::Pending
        } else {
            Poll::Ready(ready)
        }
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::{pick, FILL};

    /// Hands `viewers` out one by one and returns each shard's count.
    fn hand_out(shards: usize, viewers: usize) -> Vec<usize> {
        let mut counts = vec![0; shards];
        for _ in 0..viewers {
            let i = pick(counts.iter().copied());
            counts[i] += 1;
        }
        counts
    }

    #[test]
    fn a_shard_fills_before_the_next_is_woken() {
        let counts = hand_out(32, 50);
        let used: Vec<usize> = counts.iter().copied().filter(|&n| n > 0).collect();
        assert_eq!(used.len(), 50_usize.div_ceil(FILL), "{counts:?}");
        assert!(used.iter().all(|&n| n <= FILL), "{counts:?}");
    }

    #[test]
    fn past_full_shards_the_least_loaded_takes_the_next() {
        let counts = hand_out(32, 10_000);
        let (min, max) = (counts.iter().min(), counts.iter().max());
        assert_eq!((min, max), (Some(&312), Some(&313)), "{counts:?}");
    }

    #[test]
    fn a_shard_emptied_by_departures_is_refilled_before_an_idle_one() {
        // Two busy shards, one nearly empty after viewers left: it takes the next.
        let i = pick([FILL, 1, FILL, 0].into_iter());
        assert_eq!(i, 1);
        // All busy ones full: the first idle one.
        assert_eq!(pick([FILL, FILL, 0, 0].into_iter()), 2);
        // None at all: the first.
        assert_eq!(pick([0, 0].into_iter()), 0);
    }
}
