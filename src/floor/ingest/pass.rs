//! One pass over a table's log stream: its durable pull consumer fetched from, what it
//! failed to deliver read from the stream itself (a hole after a crash, or a consumer
//! left starved), each row's signature checked, and the batch committed with the new
//! head in one transaction before the one acknowledgement. Apart from the discovery, since
//! this is the path every row takes.

use super::batch_check::{branch_points, check};
use super::quiet::Quiet;
use super::{broker, Followed, IngestStats, PassError, BATCH};
use crate::broker::noise::Noise;
use crate::broker::subjects;
use crate::floor::chain::Alarm;
use crate::floor::db::{DbError, FloorDb};
use crate::trust::wire;
use async_nats::jetstream::{self, consumer, stream::Stream, Context};
use futures::StreamExt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tracing::warn;

/// How long a caught-up table's pull waits for its next row.
const IDLE: Duration = Duration::from_secs(3);
/// How long a pull of what the stream holds may go unanswered before the pass starts
/// again (the consumer made again, on whichever node now leads it).
const FETCH_DEADLINE: Duration = Duration::from_secs(3);
/// Idle looks in a row that find the stream ahead of what the consumer delivered before
/// the floor reads the stream itself (`pass`).
const STARVED_LOOKS: u32 = 2;
/// Messages read from the stream itself per batch while the consumer delivers nothing
/// (one request each).
const DIRECT_BATCH: u64 = 200;

/// One pass from the database's head, until it fails (the follower then starts another).
pub(super) async fn pass(
    js: &Context,
    db: &FloorDb,
    followed: &Followed,
    stats: &IngestStats,
    backoff: &mut Duration,
    taken: &AtomicU64,
    noise: &mut Noise,
) -> Result<(), PassError> {
    let (durable, stream_name, table) = (
        followed.durable.as_str(),
        followed.stream.as_str(),
        followed.table.as_str(),
    );
    followed.keys.get(table).ok_or(PassError::Unpinned)?;
    let stream = js.get_stream(stream_name).await.map_err(broker)?;
    // The consumer, or none where the broker does not answer for it while it answers for
    // the stream: a consumer whose replicas cannot elect a leader (a loaded three-node
    // cluster, a node dead: "JetStream system temporarily unavailable" for over 90 s, the
    // stream led all along). The pass then reads the stream itself from the database's
    // head, as it reads a hole, and ends at the stream's end with the consumer's error,
    // so the next pass (after the follower's backoff) asks for the consumer again. The
    // database's head is the floor's position either way; the consumer only delivers.
    let (consumer, unanswered) = match stream
        .get_or_create_consumer(durable, crate::broker::streams::floor_consumer(durable))
        .await
    {
        Ok(consumer) => (Some::<consumer::PullConsumer>(consumer), String::new()),
        Err(e) => (None, e.to_string()),
    };
    let mut at = db.position(table).await?;
    // The stream sequence of the last message handled. Not the row's `seq`: a stream
    // may hold messages nobody meant for it (any client with a JetStream grant can point
    // an API answer at any subject), and a branch publishes row numbers again, so the
    // two drift apart; until the first batch the row's `seq` is the lower bound.
    let mut stream_head = at.head.seq;
    match &consumer {
        Some(consumer) => {
            // What the floor took before: the consumer's acknowledged floor.
            taken.store(
                consumer.cached_info().ack_floor.stream_sequence,
                Ordering::Relaxed,
            );
            *backoff = Duration::from_millis(250);
        }
        None => {
            taken.store(stream_head, Ordering::Relaxed);
            warn!(%table, error = %unanswered, from = stream_head + 1, "floor: the consumer does not answer; reading the stream itself");
        }
    }
    // Idle looks in a row that found the stream holding more than the floor took while
    // the consumer delivered nothing.
    let mut starved = 0u32;
    let mut quiet = Quiet::new(std::time::Instant::now());
    loop {
        if let Some(heard) = noise.due(std::time::Instant::now()) {
            // The table's own subject written to by someone else: said with its number.
            let alarm = Alarm {
                seq: heard.last,
                kind: "unsigned",
                detail: format!(
                    "table {table}: {} message(s) on its log stream not signed with its pinned key (stream sequences {}..={}) passed over: someone else writes to the table's subject",
                    heard.count, heard.first, heard.last
                ),
            };
            warn!(%table, seq = alarm.seq, kind = alarm.kind, detail = %alarm.detail, "FLOOR ALARM");
            db.raise(table, &alarm).await?;
            stats.alarmed(alarm.kind);
        }
        let mut messages = match &consumer {
            Some(consumer) => {
                pulled(
                    consumer.fetch().max_messages(BATCH).messages(),
                    FETCH_DEADLINE,
                )
                .await?
            }
            None => Vec::new(),
        };
        // Read from the stream itself up to this sequence, the consumer being starved.
        let mut direct: Option<u64> = None;
        // What the stream itself gave (read ahead of the consumer, around it, or a hole).
        let mut ahead = Vec::new();
        if consumer.is_none() {
            // No consumer: the stream itself, a batch at a time, to its end.
            if db.position(table).await?.head != at.head {
                return Err(PassError::Db(DbError::HeadMoved(table.to_string())));
            }
            ahead = read_stream(
                &stream,
                stream_head + 1..stream_head + 1 + DIRECT_BATCH,
                true,
            )
            .await?;
            let Some((upto, _)) = ahead.last() else {
                return Err(broker(format!(
                    "the consumer {durable} does not answer ({unanswered}); the stream itself read to its end"
                )));
            };
            direct = Some(*upto);
        }
        if let (Some(consumer), true) = (&consumer, messages.is_empty()) {
            // Caught up: wait for the next row (woken as soon as one arrives).
            messages = pulled(
                consumer.batch().max_messages(1).expires(IDLE).messages(),
                IDLE + FETCH_DEADLINE,
            )
            .await?;
            if messages.is_empty() {
                // Nothing delivered: the stream may have been deleted and made again
                // (a broker that lost its store), which leaves this consumer delivering
                // nothing for ever. A consumer that is gone starts a new pass, which
                // makes it again on the new stream.
                // The lookup answers with the stream's info: one request, not two.
                let fresh = js.get_stream(stream_name).await.map_err(broker)?;
                let (created, last) = {
                    let info = fresh.cached_info();
                    (info.created, info.state.last_sequence)
                };
                if created != stream.cached_info().created {
                    return Err(broker(format!("stream {stream_name} was made again")));
                }
                consumer_alive(&fresh, durable).await?;
                if last <= stream_head {
                    starved = 0;
                    // The broker says caught up; the stream itself is asked below when
                    // the pass has been quiet for long enough (`quiet`).
                    if !quiet.probe_due(std::time::Instant::now()) {
                        taken.store(stream_head, Ordering::Relaxed);
                        continue;
                    }
                } else {
                    // The stream holds more and the consumer delivered none of it. Once
                    // is a race (a row stored as the pull expired); twice in a row, the
                    // consumer is stuck (seen in tests/it/studio_cluster.rs under load,
                    // after the cluster lost its quorum: the floor idle for 90 s with
                    // 1,428 rows waiting). The rows are read from the stream itself, as
                    // a hole is; the consumer's own delivery of them later is passed over
                    // (rows at or below the head).
                    starved += 1;
                    if starved < STARVED_LOOKS {
                        continue;
                    }
                    // A second floor on this database shares the consumer and took
                    // them: follow it from the database, as after a commit it won.
                    if db.position(table).await?.head != at.head {
                        return Err(PassError::Db(DbError::HeadMoved(table.to_string())));
                    }
                    let upto = last.min(stream_head + DIRECT_BATCH);
                    warn!(%table, from = stream_head + 1, upto, last, "floor: the consumer delivers nothing while the stream holds more; reading them from the stream");
                    direct = Some(upto);
                }
            }
        }
        starved = 0;
        // The first message the consumer delivered that was not looked at before. Not
        // simply the first delivered: a redelivery at or below the head may come first,
        // and the hole before a new one must still be read from the stream.
        let mut first_new = None;
        for m in &messages {
            let seq = m.info().map_err(broker)?.stream_sequence;
            if seq > stream_head {
                first_new = Some(seq);
                break;
            }
        }
        // Nothing new from the consumer for a while, whatever the broker says about the
        // stream: the stream itself is read (see `quiet`).
        let now = std::time::Instant::now();
        if direct.is_none() && first_new.is_none() && quiet.probe_due(now) {
            ahead = read_stream(
                &stream,
                stream_head + 1..stream_head + 1 + DIRECT_BATCH,
                true,
            )
            .await?;
            if !ahead.is_empty() && db.position(table).await?.head != at.head {
                return Err(PassError::Db(DbError::HeadMoved(table.to_string())));
            }
            if quiet.probed(now, !ahead.is_empty()) {
                warn!(%table, from = stream_head + 1, quiet_s = super::quiet::NO_PROGRESS.as_secs(), "floor: nothing new delivered while the stream itself holds more; reading it from the stream");
            }
            if ahead.is_empty() && messages.is_empty() {
                taken.store(stream_head, Ordering::Relaxed);
                continue;
            }
            direct = ahead.last().map(|(seq, _)| *seq);
        }
        // Delivered earlier but never acknowledged (lost in a crash or an outage): read
        // them from the stream itself, so a consumer's hole is not taken for a gap.
        if ahead.is_empty() {
            let first = match (direct, first_new) {
                (Some(upto), _) => upto + 1,
                (None, Some(first)) => first,
                (None, None) => stream_head + 1,
            };
            ahead = read_stream(&stream, stream_head + 1..first, false).await?;
        }
        // Only what the table signed goes on to the chain check; the rest is noise,
        // counted once (messages at or below the head were looked at before). The
        // signatures of a fetch are checked together (`wire::verify_claims`).
        let key = followed.keys.get(table).ok_or(PassError::Unpinned)?;
        let mut fetched = Vec::with_capacity(messages.len() + ahead.len());
        for (seq, m) in ahead {
            let claim = subjects::claim(wire::LOG, table, &m.payload, &m.headers);
            fetched.push((seq, m.payload.to_vec(), claim));
        }
        for m in &messages {
            let seq = m.info().map_err(broker)?.stream_sequence;
            let claim = m
                .headers
                .as_ref()
                .and_then(|h| subjects::claim(wire::LOG, table, &m.payload, h));
            fetched.push((seq, m.payload.to_vec(), claim));
        }
        let claims: Vec<&wire::Claim> = fetched.iter().filter_map(|f| f.2.as_ref()).collect();
        let mut held_up = wire::verify_claims(&key, &claims).into_iter();
        let looked_at = fetched
            .iter()
            .map(|f| f.0)
            .max()
            .unwrap_or(0)
            .max(stream_head);
        let mut bodies = Vec::with_capacity(fetched.len());
        for (seq, payload, claim) in fetched {
            let signed = claim.is_some() && held_up.next().unwrap_or(false);
            if signed {
                bodies.push((seq, payload));
            } else if seq > stream_head {
                noise.heard(seq);
            }
        }
        let from_stream_head = stream_head;
        let held = db
            .history_hashes(table, &branch_points(&at, &bodies))
            .await?;
        let from = at.clone();
        let (batch, to) = check(table, at.clone(), stream_head, &bodies, &held);
        stream_head = looked_at;
        // Read from the stream itself: everything up to `upto` was looked at, if missing.
        stream_head = stream_head.max(direct.unwrap_or(0));
        if to.head != from.head || !batch.alarms.is_empty() {
            db.commit(table, from.head, &to, stream_head, &batch)
                .await?;
            stats
                .rows
                .fetch_add(batch.rows.len() as u64, Ordering::Relaxed);
            for a in &batch.alarms {
                stats.alarmed(a.kind);
                warn!(%table, seq = a.seq, kind = a.kind, detail = %a.detail, "FLOOR ALARM");
            }
            at = to;
        }
        if stream_head > from_stream_head {
            quiet.moved(std::time::Instant::now());
        }
        taken.store(stream_head, Ordering::Relaxed);
        // Only now, after the commit: one acknowledgement covers every earlier message.
        if let Some(last) = messages.last() {
            last.ack().await.map_err(broker)?;
        }
    }
}

/// Every message of one pull, or a broker error once `deadline` has passed without them.
/// Each pull is bounded: a request the consumer's leader took and then died with (a
/// broker node lost in a cluster) is never answered, and the client's `fetch` has no
/// deadline of its own, so without one the table's ingest would stall for good.
async fn pulled<E: std::fmt::Display>(
    pull: impl std::future::Future<Output = Result<consumer::pull::Batch, E>>,
    deadline: Duration,
) -> Result<Vec<jetstream::Message>, PassError> {
    let all = async {
        let mut batch = pull.await.map_err(broker)?;
        let mut messages = Vec::new();
        while let Some(m) = batch.next().await {
            messages.push(m.map_err(broker)?);
        }
        Ok(messages)
    };
    tokio::time::timeout(deadline, all)
        .await
        .unwrap_or_else(|_| {
            Err(broker(format!(
                "no answer to a pull within {deadline:?}: the consumer's leader may have changed"
            )))
        })
}

/// Whether the durable consumer still exists on `stream`.
async fn consumer_alive(stream: &Stream, durable: &str) -> Result<(), PassError> {
    stream
        .consumer_info(durable)
        .await
        .map(|_| ())
        .map_err(|e| broker(format!("the consumer {durable}: {e}")))
}

/// What the stream itself holds of `seqs`, read one by one. A message it does not hold is
/// left out and the read goes on (a hole: the chain check reports what is missing as a
/// gap), or, with `to_its_end`, ends the read: reading ahead of the consumer, the first
/// message missing is taken for the stream's end (unless something was deleted there; the
/// consumer's delivery of what follows then fills the hole, as after a crash).
async fn read_stream(
    stream: &Stream,
    seqs: std::ops::Range<u64>,
    to_its_end: bool,
) -> Result<Vec<(u64, jetstream::message::StreamMessage)>, PassError> {
    let mut out = Vec::new();
    for seq in seqs {
        match stream.get_raw_message(seq).await {
            Ok(m) => out.push((seq, m)),
            Err(e) if e.kind() == jetstream::stream::RawMessageErrorKind::NoMessageFound => {
                if to_its_end {
                    break;
                }
            }
            Err(e) => return Err(broker(e)),
        }
    }
    Ok(out)
}
