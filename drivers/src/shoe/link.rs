//! The link task: open the port, run a session until the link drops, wait, reopen.
//!
//! A read of 0 bytes, a read error (EIO when a USB adapter is unplugged) or, for
//! `croupier-v1`, a heartbeat timeout ends a session. Reopening backs off exponentially
//! to a cap, and the backoff only resets after a session proved healthy, so a port that
//! opens and dies at once cannot spin the CPU.

use std::sync::Arc;
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::mpsc;
use tokio::time::{sleep, sleep_until, Instant};
use tokio_util::codec::{FramedRead, FramedWrite};
use tracing::{debug, info, warn};

use super::backoff::Backoff;
use super::config::ShoeConfig;
use super::port::open_port;
use super::stats::Stats;
use super::ShoeCommand;
use crate::event::{FaultKind, ShoeEvent};
use crate::proto::v1::host::{HostSession, Outcome};
use crate::proto::v1::{Body, Frame, V1Codec};
use crate::proto::{Decoded, ShoeCodec};

/// A session this long counts as healthy even if the shoe said nothing (line dialects
/// are silent between cards).
const HEALTHY_AFTER: Duration = Duration::from_secs(2);

/// How long the port gets, once the heartbeat's deadline has passed, to deliver what it
/// holds before the link is judged down: the port is read before the heartbeat is judged
/// late (issue #59 item 5). After the process was not running (stopped, a starved
/// machine), the heartbeats of an external shoe wait in the port, but the first turn
/// of the runtime may see the timer and not yet the port (`epoll_wait` returns `EINTR`
/// after a stop); a shoe simulated in this very process was stopped too and sends its
/// heartbeat once it runs again.
const STALL_GRACE: Duration = Duration::from_millis(500);

/// A timer this much later than its deadline means the process was not running for a
/// while (a timer's ordinary lateness is a few milliseconds): the grace starts again.
const LATE: Duration = Duration::from_millis(50);

/// Everything the link task owns.
pub(crate) struct Link {
    pub(crate) config: ShoeConfig,
    pub(crate) codec: ShoeCodec,
    pub(crate) events: mpsc::Sender<ShoeEvent>,
    pub(crate) commands: mpsc::UnboundedReceiver<ShoeCommand>,
    pub(crate) stats: Arc<Stats>,
}

/// How a session ended.
enum End {
    /// The link dropped; reopen.
    Down { reason: String, healthy: bool },
    /// Nobody is listening any more; stop.
    Stopped,
}

pub(crate) async fn run(mut link: Link) {
    let port = link.config.port.display().to_string();
    let mut backoff = Backoff::new(
        Duration::from_millis(link.config.reconnect_initial_ms),
        Duration::from_millis(link.config.reconnect_max_ms),
    );
    // Outlives sessions so a frame retransmitted after a reconnect is still a duplicate.
    let mut host = HostSession::new();
    let mut ever_up = false;
    let mut reported_down = false;
    loop {
        match open_port(&link.config) {
            Ok(stream) => {
                info!(%port, dialect = link.config.dialect.name(), "shoe port open");
                if ever_up {
                    Stats::bump(&link.stats.reconnects);
                }
                ever_up = true;
                // Stale commands (a lamp state from before the drop) must not replay.
                while link.commands.try_recv().is_ok() {}
                if !emit(&link.events, ShoeEvent::Connected { port: port.clone() }).await {
                    return;
                }
                match session(&mut link, &mut host, stream).await {
                    End::Stopped => return,
                    End::Down { reason, healthy } => {
                        warn!(%port, %reason, "shoe link down");
                        if healthy {
                            backoff.reset();
                        }
                        reported_down = true;
                        if !emit(&link.events, ShoeEvent::Disconnected { reason }).await {
                            return;
                        }
                    }
                }
            }
            Err(error) => {
                debug!(%port, %error, "cannot open shoe port");
                if !reported_down {
                    reported_down = true;
                    let reason = format!("cannot open {port}: {error}");
                    warn!("{reason}");
                    if !emit(&link.events, ShoeEvent::Disconnected { reason }).await {
                        return;
                    }
                }
            }
        }
        tokio::select! {
            () = sleep(backoff.next_wait()) => {}
            () = link.events.closed() => return,
        }
    }
}

async fn emit(events: &mpsc::Sender<ShoeEvent>, event: ShoeEvent) -> bool {
    events.send(event).await.is_ok()
}

async fn session<S>(link: &mut Link, host: &mut HostSession, stream: S) -> End
where
    S: AsyncRead + AsyncWrite,
{
    let v1 = matches!(link.codec, ShoeCodec::V1(_));
    let heartbeat = v1.then(|| link.config.heartbeat_timeout());
    let started = Instant::now();
    let mut heard = false;
    let (read, write) = tokio::io::split(stream);
    let mut frames = FramedRead::new(read, link.codec.clone());
    let mut replies = FramedWrite::new(write, V1Codec::new());
    // Far enough away to never fire for line dialects, which have no heartbeat.
    let far = Duration::from_secs(86_400 * 365);
    let mut deadline = Instant::now() + heartbeat.unwrap_or(far);
    // The deadline passed: the port has [`STALL_GRACE`] to deliver before the verdict.
    let mut judging = false;
    let down = |reason: String, heard: bool| End::Down {
        reason,
        healthy: heard || started.elapsed() >= HEALTHY_AFTER,
    };
    loop {
        let outcome = tokio::select! {
            // What the port sent is read before any deadline is judged: after the process
            // was not running (stopped, starved), the heartbeats wait in the port's buffer
            // and must count (issue #32 item 2).
            biased;
            next = frames.next() => match next {
                None => return down("the port returned end of file (device gone)".into(), heard),
                Some(Err(error)) => return down(format!("read error: {error}"), heard),
                Some(Ok(decoded)) => {
                    let outcome = handle(&link.stats, host, decoded, v1);
                    if !matches!(outcome.event, Some(ShoeEvent::Fault(_))) {
                        heard = true;
                        judging = false;
                        deadline = Instant::now() + heartbeat.unwrap_or(far);
                    }
                    outcome
                }
            },
            () = sleep_until(deadline) => {
                // The port is read before the heartbeat is judged late: once the deadline
                // passed, the port gets a grace of its own, and again whenever the timer
                // fired late (this process was not running: the silence was ours, not the
                // shoe's). Only a grace the process ran through, with nothing read, is the
                // shoe's silence.
                let late = Instant::now().saturating_duration_since(deadline);
                if !judging || late > LATE {
                    if late > LATE {
                        warn!(late_ms = late.as_millis() as u64, "the shoe link's timer fired late: this process was not running; reading what the port holds before judging the heartbeat");
                    }
                    judging = true;
                    deadline = Instant::now() + STALL_GRACE;
                    continue;
                }
                let ms = heartbeat.unwrap_or(far).as_millis();
                return down(format!("no valid frame for {ms} ms (heartbeat timeout)"), heard);
            }
            command = link.commands.recv() => match command {
                None => return End::Stopped,
                Some(command) if v1 => Outcome { reply: Some(command_frame(command)), ..Outcome::default() },
                Some(command) => {
                    debug!(?command, "dialect has no back channel; command dropped");
                    Outcome::default()
                }
            },
            () = link.events.closed() => return End::Stopped,
        };
        if let Some(reply) = outcome.reply {
            if reply.body == Body::Nak {
                Stats::bump(&link.stats.naks);
            }
            if let Err(error) = replies.send(reply).await {
                return down(format!("write error: {error}"), heard);
            }
        }
        if let Some(event) = outcome.event {
            if !emit(&link.events, event).await {
                return End::Stopped;
            }
        }
    }
}

fn command_frame(command: ShoeCommand) -> Frame {
    match command {
        ShoeCommand::Lamp(lamp) => Frame::new(0, Body::Lamp(lamp)),
        ShoeCommand::RequestStatus => Frame::new(0, Body::StatusRequest),
    }
}

fn handle(stats: &Stats, host: &mut HostSession, decoded: Decoded, v1: bool) -> Outcome {
    match decoded {
        Decoded::Frame(frame) => {
            Stats::bump(&stats.frames);
            let outcome = host.on_frame(frame);
            if outcome.duplicate {
                Stats::bump(&stats.duplicates);
                debug!(seq = frame.seq, "duplicate frame suppressed");
            }
            outcome
        }
        Decoded::Item(item) => {
            Stats::bump(&stats.frames);
            Outcome {
                event: Some(item.into()),
                ..Outcome::default()
            }
        }
        Decoded::Fault(fault) => {
            stats.reject(fault.kind);
            warn!(%fault, "shoe sent a bad frame");
            // Only croupier-v1 can ask for a retransmit, and a frame cut off by a
            // disconnect has nobody to ask: the shoe resends it after the reconnect.
            if v1 && fault.kind != FaultKind::Truncated {
                host.on_fault(fault)
            } else {
                Outcome {
                    event: Some(ShoeEvent::Fault(fault)),
                    ..Outcome::default()
                }
            }
        }
    }
}
