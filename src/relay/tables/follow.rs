//! Filling one table's feed from its public stream: an ephemeral pull consumer of the
//! relay's own, its heartbeat watched so a consumer lost with a broker node is made again
//! within seconds (a missed one first judged by `heartbeat`: a consumer not lost is kept), each message checked for the table's signature and its number before
//! the feed relays it. Apart from discovery and history, since this is the relay's path
//! for every message.

use super::heartbeat::{self, Kept, Missed};
use super::progress;
use super::{Incoming, Refusal, RelayedTable, RETRY};
use crate::broker::subjects;
use crate::trust::wire;
use crate::web::feed::{Message, Relayed};
use async_nats::jetstream::consumer::pull::MessagesErrorKind;
use async_nats::jetstream::{consumer, Context};
use futures::StreamExt;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;
use tracing::warn;

/// The broker's idle heartbeat on a table's pull: two missed, and the consumer is judged
/// (`heartbeat`), and made again if lost.
const HEARTBEAT: Duration = Duration::from_secs(1);
/// How long each pull request waits on the broker. Long, because nats-server 2.9 drops a
/// pull that expired without a word when a message comes before its expiry timer has run
/// (`consumer.go`, `nextWaiting`: the 408 is sent only for a pull through an account
/// import), and async-nats, never told, sends no other: the capacity runs' "no pull of
/// the relay's" misses, one per 10 s pull on a loaded machine. A pull is renewed at half
/// its batch anyway; its expiry only matters to a quiet table, and `heartbeat` pulls anew
/// when one is dropped all the same.
const PULL_EXPIRES: Duration = Duration::from_secs(300);
/// The broker removes a relay's consumer this long after the relay stops pulling.
const CONSUMER_INACTIVE: Duration = Duration::from_secs(30);
/// How long setting up a pull may take (its subscription, through the client's own queue):
/// the client awaits it without a bound, and a nemesis run under load saw one table's
/// follower fall silent for minutes after a request timed out, its other table's going on.
const PULL_SETUP: Duration = Duration::from_secs(5);

/// Follows `table`'s public stream into its feed, for ever (its view from `bucket` first,
/// if that could not be read when the table was found).
pub(super) async fn follow(
    js: Context,
    table: String,
    stream: String,
    relayed: Arc<RelayedTable>,
    ring: usize,
    bucket: String,
) {
    loop {
        if relayed.unseeded.load(Ordering::Relaxed) && relayed.source.feed.last().is_none() {
            if let Err(e) = relayed.seed(&js, &bucket, &table).await {
                relayed.follow_failed(&table);
                warn!(table, error = %e, "relay: the bucket's view still cannot be read; trying again");
                tokio::time::sleep(RETRY).await;
                continue;
            }
            relayed.unseeded.store(false, Ordering::Relaxed);
        }
        if let Err(e) = follow_once(&js, &table, &stream, &relayed, ring).await {
            relayed.restarts.fetch_add(1, Ordering::Relaxed);
            relayed.follow_failed(&table);
            warn!(table, error = %e, "following the public stream failed; resuming");
        }
        tokio::time::sleep(RETRY).await;
    }
}

async fn follow_once(
    js: &Context,
    table: &str,
    stream_name: &str,
    relayed: &RelayedTable,
    ring: usize,
) -> Result<(), String> {
    // `get_stream` brings the stream's description: no second request for it.
    let stream = js
        .get_stream(stream_name)
        .await
        .map_err(|e| e.to_string())?;
    let state = stream.cached_info().state.clone();
    *relayed.stream.lock().unwrap_or_else(|e| e.into_inner()) = Some(stream.clone());
    let feed = &relayed.source.feed;
    let tail = state.last_sequence.saturating_sub(ring as u64 - 1);
    // `seeded`: the feed holds only the bucket's view, after message `n`; the stream's
    // messages up to it fill the ring (sent to no one), the ones after it are relayed.
    let (start, mut seeded) = match feed.last() {
        Some(_) if feed.oldest().is_some() => {
            (relayed.stream_seq.load(Ordering::Relaxed) + 1, None)
        }
        // The bucket's view may be older than the ring's worth of messages at the stream's
        // end (the table puts it at most once a second): read from it, so the messages
        // after it are relayed, not skipped with a resync. A message's stream sequence is
        // never below its `n` (other writers only add), so the seed's own is at or after
        // sequence `n`.
        Some((_, n)) => (tail.min(n.max(1)), Some(n)),
        None => (tail, None),
    };
    let start = start.max(state.first_sequence).max(1);
    // An ephemeral consumer of our own rather than the client's ordered consumer: that
    // one notices a consumer lost with a broker node only after two missed heartbeats of
    // 15 s each, so viewers of a table whose consumer lived on a dead node waited over a
    // minute (tests/it/studio_cluster.rs). Here a heartbeat missed for `HEARTBEAT * 2` (unless
    // `heartbeat::judge` finds the consumer not lost), or a message out of the
    // consumer's order, ends this pass and the next starts after the last message taken.
    let consumer = stream
        .create_consumer(consumer::pull::Config {
            filter_subject: subjects::public(table),
            deliver_policy: consumer::DeliverPolicy::ByStartSequence {
                start_sequence: start,
            },
            ack_policy: consumer::AckPolicy::None,
            replay_policy: consumer::ReplayPolicy::Instant,
            inactive_threshold: CONSUMER_INACTIVE,
            num_replicas: 1,
            memory_storage: true,
            ..Default::default()
        })
        .await
        .map_err(|e| e.to_string())?;
    let mut messages = pull(&consumer).await?;
    relayed.following(table);
    let mut early = Vec::new();
    let mut delivered = 0u64;
    // A missed heartbeat judged not a lost consumer, nothing taken since: a second one
    // gives the consumer up.
    let mut judged_late = false;
    loop {
        let next = match tokio::time::timeout(progress::NO_PROGRESS, messages.next()).await {
            Ok(Some(next)) => next,
            Ok(None) => break,
            // Nothing delivered for a while: the consumer's heartbeats are its own word,
            // so the stream itself is asked whether it holds more (`progress`).
            Err(_) => {
                let taken = relayed.stream_seq.load(Ordering::Relaxed);
                let Some(held) = progress::held_after(&stream, taken).await else {
                    continue;
                };
                match tokio::time::timeout(progress::DELIVER_WITHIN, messages.next()).await {
                    Ok(Some(next)) => next,
                    Ok(None) => break,
                    Err(_) => {
                        return Err(format!(
                            "the stream holds message {held}, which the consumer did not deliver in {:?}: making it again",
                            progress::NO_PROGRESS + progress::DELIVER_WITHIN
                        ))
                    }
                }
            }
        };
        let message = match next {
            Ok(message) => message,
            Err(e) if e.kind() == MessagesErrorKind::MissingHeartbeat => {
                if judged_late {
                    return Err("missed idle heartbeat twice with nothing delivered between".into());
                }
                match heartbeat::judge(&consumer, &mut messages, delivered).await {
                    Missed::Waiting(message) => {
                        relayed.kept(table, Kept::RelayLate, "a message was waiting");
                        *message
                    }
                    Missed::Kept(Kept::NoPull, said) => {
                        // async-nats still counts on a pull the broker no longer holds
                        // (the capacity runs: every such miss, and no new pull in the next
                        // two seconds), so the relay pulls anew on the same consumer. Nothing
                        // is on its way to the old pull's inbox: the broker delivered no
                        // more than was taken.
                        relayed.kept(table, Kept::NoPull, &format!("{said}; pulling anew"));
                        messages = pull(&consumer).await?;
                        judged_late = true;
                        continue;
                    }
                    Missed::Kept(why, said) => {
                        relayed.kept(table, why, &said);
                        judged_late = true;
                        continue;
                    }
                    Missed::Lost(why) => return Err(why),
                }
            }
            Err(e) => return Err(e.to_string()),
        };
        judged_late = false;
        let info = message.info().map_err(|e| e.to_string())?;
        if info.consumer_sequence != delivered + 1 {
            return Err(format!(
                "the consumer skipped from delivery {delivered} to {}",
                info.consumer_sequence
            ));
        }
        delivered = info.consumer_sequence;
        relayed.received.fetch_add(1, Ordering::Relaxed);
        let seq = info.stream_sequence;
        relayed.stream_seq.store(seq, Ordering::Relaxed);
        if !relayed.signed(
            table,
            wire::PUBLIC,
            &message.payload,
            message.headers.as_ref(),
        ) {
            relayed.refuse(table, Refusal::Unsigned, seq, "no valid signature");
            continue;
        }
        let r = match parse(&message.payload) {
            Ok(r) => r,
            Err(e) => {
                relayed.refuse(table, Refusal::Malformed, seq, &e);
                continue;
            }
        };
        match seeded {
            Some(seed) if r.n <= seed => {
                early.push(Arc::new(Message::new(r.seq, r.sub, r.kind, r.text)));
                // Only the last `ring` of them can fill the ring.
                if early.len() >= 2 * ring {
                    early.drain(..early.len() - ring);
                }
                if r.n == seed {
                    if !feed.backfill(std::mem::take(&mut early)) {
                        warn!(table, n = seed, "the stream's message does not match the bucket's view: the ring starts after it");
                    }
                    // The seed is reached once: from here on a number already served is
                    // stale (a replay of the table's own message, issue #32), never a
                    // second backfill nor kept in `early` for ever.
                    seeded = None;
                }
            }
            _ => {
                // Past the seed without meeting it (the stream no longer holds it): the
                // ring starts after it, and nothing older is kept.
                if seeded.take().is_some() && !early.is_empty() {
                    warn!(table, "the stream's messages do not reach the bucket's view: the ring starts after it");
                    early.clear();
                }
                let last = feed.last().map_or(0, |(_, n)| n);
                if last > 0 && r.n <= last {
                    relayed.refuse(table, Refusal::Stale, seq, "a number already served");
                    continue;
                }
                if last > 0 && r.n > last + 1 {
                    relayed.refuse(table, Refusal::Gap, seq, "messages missing: a resync");
                }
                feed.relay(r);
                relayed.heard_now();
            }
        }
    }
    Err("the stream's consumer ended".into())
}

/// A pull on `consumer`, its heartbeat watched; set up within `PULL_SETUP`.
async fn pull(consumer: &consumer::PullConsumer) -> Result<consumer::pull::Stream, String> {
    let setup = consumer
        .stream()
        .heartbeat(HEARTBEAT)
        .expires(PULL_EXPIRES)
        .messages();
    match tokio::time::timeout(PULL_SETUP, setup).await {
        Ok(pulled) => pulled.map_err(|e| e.to_string()),
        Err(_) => Err(format!("the pull was not set up within {PULL_SETUP:?}")),
    }
}

/// A published message as the feed takes it.
pub(super) fn parse(payload: &[u8]) -> Result<Relayed, String> {
    let text = std::str::from_utf8(payload).map_err(|e| e.to_string())?;
    let m: Incoming = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let kind = match m.kind.as_str() {
        "view" => "view",
        "result" => "result",
        "final" => "final",
        other => return Err(format!("unknown message type {other:?}")),
    };
    Ok(Relayed {
        seq: m.seq,
        sub: m.sub,
        n: m.n,
        kind,
        text: text.to_string(),
        view: m.view,
        result: m.result,
        signed: m.signed,
    })
}
