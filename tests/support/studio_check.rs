//! What every studio run must show at its end, and the measures taken on the way (the
//! studio on a cluster, `tests/it/studio_cluster.rs`, and under the nemesis,
//! `tests/it/nemesis.rs`): one checker over what was recorded — per table, the log stream
//! holds the log once from row 1, the public stream each message once, the floor every
//! row once byte for byte with its chain verified and no alarm, every relay viewer the
//! log's public stream in order with only announced resyncs — and the time delivery took
//! to resume after a fault.
#![allow(dead_code)]

use super::floor_check;
use super::public_check::{check_results, check_viewer_resyncing, get, wall_ms, Viewer};
use super::studio_table::Table;
use async_nats::jetstream;
use croupier::broker::subjects;
use sqlx::PgPool;
use std::path::Path;
use std::time::{Duration, Instant};
use tokio::time::sleep;

/// A client of the test's own, to ask the cluster who leads what.
pub async fn admin(urls: &str) -> jetstream::Context {
    let options = croupier::broker::connect::BrokerOptions {
        url: urls.into(),
        ..Default::default()
    };
    let client = croupier::broker::connect::connect(&options, "cluster-test")
        .await
        .expect("the test's client connects");
    jetstream::new(client)
}

/// The server name of the leader of stream `name`, once it has one.
pub async fn leader(js: &jetstream::Context, name: &str) -> String {
    let started = Instant::now();
    loop {
        if let Ok(mut stream) = js.get_stream(name).await {
            if let Ok(info) = stream.info().await {
                if let Some(l) = info.cluster.as_ref().and_then(|c| c.leader.clone()) {
                    return l;
                }
            }
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "stream {name} has a leader"
        );
        sleep(Duration::from_millis(200)).await;
    }
}

/// How many messages stream `name` holds, and its first sequence.
pub async fn stream_state(js: &jetstream::Context, name: &str) -> (u64, u64) {
    let started = Instant::now();
    loop {
        if let Ok(mut stream) = js.get_stream(name).await {
            if let Ok(info) = stream.info().await {
                return (info.state.messages, info.state.first_sequence);
            }
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "stream {name} answers"
        );
        sleep(Duration::from_millis(200)).await;
    }
}

/// The broker's side of the floor's ingest of `table`: the log stream's state and the
/// floor's durable consumer on it (what it delivered, what was acknowledged, what is
/// pending, who leads it), in words for a failure's message.
async fn floor_consumer_state(js: &jetstream::Context, table: &str) -> String {
    let name = subjects::stream(subjects::DEFAULT_LOG_STREAM, table);
    let Ok(mut stream) = js.get_stream(&name).await else {
        return format!("stream {name}: no answer");
    };
    let state = match stream.info().await {
        Ok(i) => format!(
            "stream {name}: {} messages, last {} (leader {:?})",
            i.state.messages,
            i.state.last_sequence,
            i.cluster.as_ref().and_then(|c| c.leader.clone())
        ),
        Err(e) => format!("stream {name}: {e}"),
    };
    let consumer = match stream
        .consumer_info(croupier::floor::DEFAULT_CONSUMER)
        .await
    {
        Ok(c) => format!(
            "consumer {}: delivered stream seq {}, acknowledged up to {}, {} pending, {} awaiting acknowledgement, {} waiting pulls (leader {:?})",
            c.name,
            c.delivered.stream_sequence,
            c.ack_floor.stream_sequence,
            c.num_pending,
            c.num_ack_pending,
            c.num_waiting,
            c.cluster.as_ref().and_then(|c| c.leader.clone())
        ),
        Err(e) => format!("consumer {}: {e}", croupier::floor::DEFAULT_CONSUMER),
    };
    format!("{state}; {consumer}")
}

/// The last commit time of `table`'s rows on the floor.
pub async fn floor_newest(pool: &PgPool, table: &str) -> i64 {
    sqlx::query_scalar("SELECT coalesce(max(at_ms), 0) FROM floor_events WHERE table_id = $1")
        .bind(table)
        .fetch_one(pool)
        .await
        .expect("floor newest")
}

/// Delivery times after one outage that started at `from_ms` (wall clock): for each
/// table, how long until a relay viewer received a message committed at or after it, and
/// until the floor stored such a row.
pub struct Resumed {
    /// Per table: until a relay viewer had such a message.
    pub relay_ms: Vec<u64>,
    /// Per table: until the floor stored such a row.
    pub floor_ms: Vec<u64>,
}

/// Waits until, for every table, a viewer has a message committed at or after `from_ms`
/// and the floor a row committed at or after it; fails past 90 s.
pub async fn resumed_after(
    from_ms: u64,
    viewers: &[(usize, Viewer)],
    pool: &PgPool,
    tables: &[Table],
    floor_log: &Path,
) -> Resumed {
    match resumed_within(from_ms, viewers, pool, tables, Duration::from_secs(90)).await {
        Ok(r) => r,
        Err(waiting) => panic!(
            "delivery resumes within 90 s ({waiting}); floor log: {}",
            std::fs::read_to_string(floor_log).unwrap_or_default()
        ),
    }
}

/// As `resumed_after`, for at most `within`; past it, what had arrived (per table, the
/// relay's and the floor's delay, `None` where nothing had) for the caller to tell.
pub async fn resumed_within(
    from_ms: u64,
    viewers: &[(usize, Viewer)],
    pool: &PgPool,
    tables: &[Table],
    within: Duration,
) -> Result<Resumed, String> {
    let started = Instant::now();
    let mut relay_ms = vec![None; tables.len()];
    let mut floor_ms = vec![None; tables.len()];
    loop {
        for (t, v) in viewers {
            if relay_ms[*t].is_some() {
                continue;
            }
            let arrived = v.arrivals().into_iter().find(|(_, text)| {
                serde_json::from_str::<serde_json::Value>(text)
                    .ok()
                    .and_then(|m| m["at_ms"].as_u64())
                    .is_some_and(|at| at >= from_ms)
            });
            if let Some((at, _)) = arrived {
                relay_ms[*t] = Some(at.saturating_sub(from_ms));
            }
        }
        for (i, t) in tables.iter().enumerate() {
            if floor_ms[i].is_none() && floor_newest(pool, &t.id).await >= from_ms as i64 {
                floor_ms[i] = Some(wall_ms().saturating_sub(from_ms));
            }
        }
        if relay_ms.iter().chain(&floor_ms).all(Option::is_some) {
            return Ok(Resumed {
                relay_ms: relay_ms.into_iter().flatten().collect(),
                floor_ms: floor_ms.into_iter().flatten().collect(),
            });
        }
        if started.elapsed() >= within {
            return Err(format!("relay {relay_ms:?}, floor {floor_ms:?}"));
        }
        sleep(Duration::from_millis(50)).await;
    }
}

/// The broker's side of `table`'s delivery, in words for a failure's message: its log
/// stream and the floor's consumer on it (`floor_consumer_state`), and its public stream
/// with its leader and replicas.
pub async fn broker_state(js: &jetstream::Context, table: &str) -> String {
    let name = subjects::stream(subjects::DEFAULT_PUBLIC_STREAM, table);
    let public = match js.get_stream(&name).await {
        Ok(mut stream) => match stream.info().await {
            Ok(i) => format!(
                "stream {name}: last {} (leader {:?}, replicas {:?})",
                i.state.last_sequence,
                i.cluster.as_ref().and_then(|c| c.leader.clone()),
                i.cluster.as_ref().map(|c| c
                    .replicas
                    .iter()
                    .map(|r| format!("{} current {} offline {}", r.name, r.current, r.offline))
                    .collect::<Vec<_>>())
            ),
            Err(e) => format!("stream {name}: {e}"),
        },
        Err(e) => format!("stream {name}: {e}"),
    };
    format!("{}; {public}", floor_consumer_state(js, table).await)
}

/// The p-th percentile (nearest rank) of `samples`.
pub fn percentile(samples: &[u64], p: f64) -> u64 {
    let mut s = samples.to_vec();
    s.sort_unstable();
    let rank = ((p / 100.0) * s.len() as f64).ceil() as usize;
    s[rank.clamp(1, s.len()) - 1]
}

/// Waits until `table` has dealt `more` rows past now: it deals on.
pub async fn deals_on(table: &Table, more: u64) {
    table.wait_rows(table.seq().await + more).await;
}

/// A table's `/readyz` reasons.
pub async fn ready_reasons(table: &Table) -> Vec<String> {
    let (_, r) = get(&table.addr(), "/readyz").await;
    r["reasons"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// Waits (at most 60 s) until `table`'s stream `prefix` holds `want` messages, failing at
/// once on more (a message stored twice); returns its first sequence.
async fn stream_holds(js: &jetstream::Context, table: &str, prefix: &str, want: usize) -> u64 {
    let name = subjects::stream(prefix, table);
    let started = Instant::now();
    loop {
        let (messages, first) = stream_state(js, &name).await;
        assert!(
            messages <= want as u64,
            "{table}: {name} holds {messages} messages for {want}: one twice"
        );
        if messages == want as u64 {
            return first;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "{table}: {name} holds {messages} of {want} messages"
        );
        sleep(Duration::from_millis(200)).await;
    }
}

/// Once the tables' logs have stopped growing (`Table::quiesce`): nothing missing or
/// doubled anywhere — the broker's streams, the floor, every viewer (`viewers` pairs a
/// table's index with a viewer of it).
pub async fn nothing_lost_or_doubled(
    js: &jetstream::Context,
    pool: &PgPool,
    tables: &[Table],
    viewers: &[(usize, Viewer)],
    floor_log: &Path,
) {
    for (i, t) in tables.iter().enumerate() {
        let want = t.rows().await;
        let (stream, results) = t.expected().await;
        check_results(&t.id, &stream, &results);
        // The broker: the log stream holds each row once, from the first.
        let first = stream_holds(js, &t.id, subjects::DEFAULT_LOG_STREAM, want.len()).await;
        assert_eq!(first, 1, "{}: the log stream starts at row 1", t.id);
        // The public stream likewise. The publisher sends a batch's log and public
        // messages at once, each stream one message in flight, so a row's last public
        // messages may still be on their way when its log message is in (a 20-minute
        // soak's check found the public stream one short and looked only once).
        stream_holds(js, &t.id, subjects::DEFAULT_PUBLIC_STREAM, stream.len()).await;
        // The floor: every row once, byte for byte.
        floor_check::floor_holds_the_log_telling(pool, t, floor_log, async || {
            floor_consumer_state(js, &t.id).await
        })
        .await;
        // The relay's viewers: the log's public stream, in order, with only announced
        // resyncs.
        for (_, v) in viewers.iter().filter(|(vt, _)| *vt == i) {
            v.wait_for(stream.len()).await;
            check_viewer_resyncing(&t.id, &v.messages(), &stream);
        }
        assert!(
            want.len() > 100,
            "{}: a real session ({} rows)",
            t.id,
            want.len()
        );
    }
    floor_check::every_row_verified_and_no_alarm(pool).await;
}
