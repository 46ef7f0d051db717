//! The studio on a real three-node JetStream cluster (issue #35): three tables of three
//! games publish with their streams and the bucket on three replicas, a relay serves
//! viewers and the floor ingests into PostgreSQL, while the test kills the node that leads
//! a table's stream (several times), then a node that leads nothing of it, and once stops
//! two nodes for 30 s so the cluster has no quorum.
//!
//! Every time: the tables deal on (their SQLite log is the truth), every party recovers
//! without being restarted, and at the end nothing is lost or doubled anywhere: each
//! table's log stream holds each row once, the floor holds every row once byte for byte,
//! and every relay viewer's messages are the log's public stream in order (with only
//! announced resyncs). The time from each node's death to delivery resuming, at the relay
//! viewers and at the floor, is printed as p50/p99 (docs/src/studio.md, "Studio on a cluster").

mod common;
#[path = "support/floor_check.rs"]
mod floor_check;
#[path = "support/nats.rs"]
mod nats;
#[path = "support/nats_cluster.rs"]
mod nats_cluster;
#[path = "support/pg.rs"]
mod pg;
#[path = "common/proc.rs"]
mod proc;
#[path = "support/public_check.rs"]
mod public_check;
#[path = "support/studio_table.rs"]
mod studio_table;

use async_nats::jetstream;
use croupier::broker::subjects;
use nats_cluster::Cluster;
use proc::{announced, spawn_args, Proc};
use public_check::{check_results, check_viewer_resyncing, get, lobby, wall_ms, Viewer};
use sqlx::PgPool;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use studio_table::Table;
use tokio::time::{sleep, timeout};

/// The three tables: id and game.
const TABLES: [(&str, &str); 3] = [
    ("ult", "ultimate"),
    ("dlx", "deluxe"),
    ("c21", "caribbean21"),
];

/// How many times the node leading a table's stream is killed.
const LEADER_KILLS: usize = 4;

/// Table `id` playing `game` with its streams on three replicas.
fn clustered_table(dir: &Path, id: &str, game: &str, urls: &str) -> Table {
    let t = Table::new(dir, id, urls);
    for cfg in [&t.demo, &t.idle] {
        let text = std::fs::read_to_string(cfg).expect("config");
        let text = text.replace("variant = \"deluxe\"", &format!("variant = \"{game}\""))
            + "replicas = 3\n";
        std::fs::write(cfg, text).expect("write config");
        croupier::table::TableConfig::load(cfg).expect("a valid clustered config");
    }
    t
}

/// A client of the test's own, to ask the cluster who leads what.
async fn admin(urls: &str) -> jetstream::Context {
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
async fn leader(js: &jetstream::Context, name: &str) -> String {
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
async fn stream_state(js: &jetstream::Context, name: &str) -> (u64, u64) {
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

/// The last commit time of `table`'s rows on the floor.
async fn floor_newest(pool: &PgPool, table: &str) -> i64 {
    sqlx::query_scalar("SELECT coalesce(max(at_ms), 0) FROM floor_events WHERE table_id = $1")
        .bind(table)
        .fetch_one(pool)
        .await
        .expect("floor newest")
}

/// Delivery times after one outage that started at `from_ms` (wall clock): for each
/// table, how long until a relay viewer received a message committed at or after it, and
/// until the floor stored such a row.
struct Resumed {
    relay_ms: Vec<u64>,
    floor_ms: Vec<u64>,
}

/// Waits until, for every table, a viewer has a message committed at or after `from_ms`
/// and the floor a row committed at or after it.
async fn resumed_after(
    from_ms: u64,
    viewers: &[(usize, Viewer)],
    pool: &PgPool,
    tables: &[Table],
    floor_log: &Path,
) -> Resumed {
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
            return Resumed {
                relay_ms: relay_ms.into_iter().flatten().collect(),
                floor_ms: floor_ms.into_iter().flatten().collect(),
            };
        }
        assert!(
            started.elapsed() < Duration::from_secs(90),
            "delivery resumes within 90 s (relay {relay_ms:?}, floor {floor_ms:?}); floor log: {}",
            std::fs::read_to_string(floor_log).unwrap_or_default()
        );
        sleep(Duration::from_millis(50)).await;
    }
}

/// The p-th percentile (nearest rank) of `samples`.
fn percentile(samples: &[u64], p: f64) -> u64 {
    let mut s = samples.to_vec();
    s.sort_unstable();
    let rank = ((p / 100.0) * s.len() as f64).ceil() as usize;
    s[rank.clamp(1, s.len()) - 1]
}

/// Waits until `table` has dealt `more` rows past now: it deals on.
async fn deals_on(table: &Table, more: u64) {
    table.wait_rows(table.seq().await + more).await;
}

/// A table's `/readyz` reasons.
async fn ready_reasons(table: &Table) -> Vec<String> {
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

fn spawn_role(args: &[&str], log: &Path) -> std::process::Child {
    let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_ref()).collect();
    spawn_args(&args, log)
}

/// The relay and the floor, which must live through the whole test.
struct Parties {
    relay: Proc,
    floor: Proc,
    floor_log: PathBuf,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_three_node_cluster_loses_leaders_a_node_and_its_quorum_and_nothing_is_lost_or_doubled() {
    let Some((bin, db)) = pg::broker_and_db().await else {
        return;
    };
    timeout(Duration::from_secs(540), async {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut cluster = Cluster::start(&bin, dir.path(), 3);
        cluster.wait_healthy(Duration::from_secs(60)).await;
        let urls = cluster.urls();
        let js = admin(&urls).await;
        let pool = db.pool().await;

        let mut tables: Vec<Table> = TABLES
            .iter()
            .map(|(id, game)| clustered_table(dir.path(), id, game, &urls))
            .collect();
        for t in &mut tables {
            t.start(true).await;
        }
        for t in &tables {
            deals_on(t, 10).await;
        }
        let keys = dir.path().join("table-keys.toml");
        studio_table::pin_keys(&keys, tables.iter().map(|t| (t.id.as_str(), t.db.as_path())));
        let keys = keys.display().to_string();
        let floor_log = dir.path().join("floor.log");
        let parties = Parties {
            relay: announced(spawn_role(
                &["relay", "--nats", &urls, "--bind", "127.0.0.1:0", "--table-keys", &keys],
                &dir.path().join("relay.log"),
            ))
            .await,
            floor: announced(spawn_role(
                &["floor", "--nats", &urls, "--database", &db.url, "--table-keys", &keys],
                &floor_log,
            ))
            .await,
            floor_log,
        };
        for t in &tables {
            let started = Instant::now();
            while lobby(&parties.relay.addr, &t.id).await.is_none() {
                assert!(started.elapsed() < Duration::from_secs(30), "{} listed", t.id);
                sleep(Duration::from_millis(100)).await;
            }
        }
        let mut viewers = Vec::new();
        for (i, t) in tables.iter().enumerate() {
            for _ in 0..2 {
                viewers.push((i, Viewer::connect(&parties.relay.addr, &t.id, None).await));
            }
        }
        // Every stream and the bucket really are on three replicas.
        for t in &tables {
            for prefix in [subjects::DEFAULT_LOG_STREAM, subjects::DEFAULT_PUBLIC_STREAM] {
                let name = subjects::stream(prefix, &t.id);
                let info = js
                    .get_stream(&name)
                    .await
                    .expect("the stream exists")
                    .info()
                    .await
                    .expect("info")
                    .clone();
                assert_eq!(info.config.num_replicas, 3, "{name}: three replicas");
            }
        }
        let mut relay_samples = Vec::new();
        let mut floor_samples = Vec::new();

        // The node leading a table's stream dies, is brought back, and again for the
        // next table's (log and public streams in turn).
        for k in 0..LEADER_KILLS {
            let t = &tables[k % tables.len()];
            let prefix = if k % 2 == 0 {
                subjects::DEFAULT_LOG_STREAM
            } else {
                subjects::DEFAULT_PUBLIC_STREAM
            };
            let stream = subjects::stream(prefix, &t.id);
            let name = leader(&js, &stream).await;
            let node = cluster.index_of(&name).expect("a node of ours leads");
            let from = wall_ms();
            cluster.kill(node);
            eprintln!("killed {name}, the leader of {stream}");
            let r = resumed_after(from, &viewers, &pool, &tables, &parties.floor_log).await;
            eprintln!("  resumed: relay {:?} ms, floor {:?} ms", r.relay_ms, r.floor_ms);
            relay_samples.extend(r.relay_ms);
            floor_samples.extend(r.floor_ms);
            for t in &tables {
                deals_on(t, 5).await;
            }
            cluster.restart(node);
            cluster.wait_healthy(Duration::from_secs(60)).await;
        }

        // A node that leads none of the first table's streams.
        let leads: Vec<String> = [subjects::DEFAULT_LOG_STREAM, subjects::DEFAULT_PUBLIC_STREAM]
            .iter()
            .map(|p| subjects::stream(p, &tables[0].id))
            .collect();
        let mut leaders = Vec::new();
        for s in &leads {
            leaders.push(leader(&js, s).await);
        }
        let follower = (0..cluster.nodes.len())
            .find(|i| !leaders.contains(&cluster.nodes[*i].name))
            .expect("three nodes, two streams: one leads neither");
        let from = wall_ms();
        cluster.kill(follower);
        eprintln!("killed {}, a follower", cluster.nodes[follower].name);
        let r = resumed_after(from, &viewers, &pool, &tables, &parties.floor_log).await;
        eprintln!("  resumed: relay {:?} ms, floor {:?} ms", r.relay_ms, r.floor_ms);
        relay_samples.extend(r.relay_ms);
        floor_samples.extend(r.floor_ms);
        cluster.restart(follower);
        cluster.wait_healthy(Duration::from_secs(60)).await;

        // Two nodes down: no quorum for 30 s. The tables deal on and say their publisher
        // lags, never that they are alarmed.
        cluster.kill(0);
        cluster.kill(1);
        let quorum_lost = Instant::now();
        let mut lag_seen = vec![false; tables.len()];
        while quorum_lost.elapsed() < Duration::from_secs(30) {
            for (i, t) in tables.iter().enumerate() {
                let reasons = ready_reasons(t).await;
                assert!(
                    !reasons.iter().any(|r| r == "alarm"),
                    "{}: no alarm without quorum: {reasons:?}",
                    t.id
                );
                lag_seen[i] |= reasons.iter().any(|r| r == "publish_lag");
            }
            sleep(Duration::from_millis(500)).await;
        }
        for t in &tables {
            deals_on(t, 5).await;
        }
        assert!(
            lag_seen.iter().all(|s| *s),
            "every table said its publisher lags while the cluster had no quorum: {lag_seen:?}"
        );
        let from = wall_ms();
        cluster.restart(0);
        cluster.restart(1);
        let r = resumed_after(from, &viewers, &pool, &tables, &parties.floor_log).await;
        eprintln!(
            "quorum back after 30 s without: relay resumed {:?} ms, floor {:?} ms after the restarts",
            r.relay_ms, r.floor_ms
        );
        cluster.wait_healthy(Duration::from_secs(60)).await;

        // Every party recovered by itself: the tables catch up and say ready, the relay
        // and the floor are the same processes and still ready.
        for t in &tables {
            let started = Instant::now();
            loop {
                let (status, r) = get(&t.addr(), "/readyz").await;
                if status == 200 {
                    break;
                }
                assert!(
                    started.elapsed() < Duration::from_secs(60),
                    "{} ready again: {r}",
                    t.id
                );
                sleep(Duration::from_millis(200)).await;
            }
        }
        // The relay watches the bucket again once the cluster has its quorum back: within
        // the same minute as the tables (seen under load: a moment after them).
        let started = Instant::now();
        loop {
            let (status, r) = get(&parties.relay.addr, "/readyz").await;
            if status == 200 {
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "the relay is ready again: {r}"
            );
            sleep(Duration::from_millis(200)).await;
        }

        // The logs stop growing; then nothing may be missing or doubled anywhere.
        for t in &mut tables {
            t.quiesce().await;
        }
        for (i, t) in tables.iter().enumerate() {
            let want = t.rows().await;
            let (stream, results) = t.expected().await;
            check_results(&t.id, &stream, &results);
            // The broker: the log stream holds each row once, from the first.
            let started = Instant::now();
            loop {
                let (messages, first) =
                    stream_state(&js, &subjects::stream(subjects::DEFAULT_LOG_STREAM, &t.id))
                        .await;
                assert!(
                    messages <= want.len() as u64,
                    "{}: the log stream holds {messages} messages for {} rows: a row twice",
                    t.id,
                    want.len()
                );
                if messages == want.len() as u64 {
                    assert_eq!(first, 1, "{}: the log stream starts at row 1", t.id);
                    break;
                }
                assert!(
                    started.elapsed() < Duration::from_secs(60),
                    "{}: the log stream has {messages} of {} rows",
                    t.id,
                    want.len()
                );
                sleep(Duration::from_millis(200)).await;
            }
            let (public, _) =
                stream_state(&js, &subjects::stream(subjects::DEFAULT_PUBLIC_STREAM, &t.id))
                    .await;
            assert_eq!(
                public,
                stream.len() as u64,
                "{}: the public stream holds each message once",
                t.id
            );
            // The floor: every row once, byte for byte.
            floor_check::floor_holds_the_log(&pool, t, &parties.floor_log).await;
            // The relay's viewers: the log's public stream, in order, with only announced
            // resyncs.
            for (_, v) in viewers.iter().filter(|(vt, _)| *vt == i) {
                v.wait_for(stream.len()).await;
                check_viewer_resyncing(&t.id, &v.messages(), &stream);
            }
            assert!(want.len() > 100, "{}: a real session ({} rows)", t.id, want.len());
        }
        floor_check::every_row_verified_and_no_alarm(&pool).await;

        eprintln!(
            "REPORT node death to delivery resuming over {} kills ({} samples each): relay viewers p50 {} ms, p99 {} ms, max {} ms; floor p50 {} ms, p99 {} ms, max {} ms",
            LEADER_KILLS + 1,
            relay_samples.len(),
            percentile(&relay_samples, 50.0),
            percentile(&relay_samples, 99.0),
            relay_samples.iter().max().copied().unwrap_or(0),
            percentile(&floor_samples, 50.0),
            percentile(&floor_samples, 99.0),
            floor_samples.iter().max().copied().unwrap_or(0),
        );
        for t in &mut tables {
            t.stop();
        }
        assert!(parties.relay.terminate(), "the relay stops cleanly");
        assert!(parties.floor.terminate(), "the floor stops cleanly");
        drop(pool);
    })
    .await
    .expect("bounded");
}
