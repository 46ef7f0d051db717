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

use crate::floor_check;
use crate::nats_cluster;
use crate::pg;
use crate::proc;
use crate::public_check;
use crate::studio_check;
use crate::studio_table;

use croupier::broker::subjects;
use nats_cluster::Cluster;
use proc::{announced, spawn_args, Proc};
use public_check::{get, lobby, wall_ms, Viewer};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use studio_check::{admin, deals_on, leader, percentile, ready_reasons, resumed_after};
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

fn spawn_role(args: &[&str], log: &Path) -> std::process::Child {
    let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_ref()).collect();
    spawn_args(&args, log)
}

/// A healthy three-node cluster under `dir`: it, its client URLs and a JetStream client.
async fn three_nodes(bin: &Path, dir: &Path) -> (Cluster, String, async_nats::jetstream::Context) {
    let cluster = Cluster::start(bin, dir, 3);
    cluster.wait_healthy(Duration::from_secs(60)).await;
    let urls = cluster.urls();
    let js = admin(&urls).await;
    (cluster, urls, js)
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
        let (mut cluster, urls, js) = three_nodes(&bin, dir.path()).await;
        let pool = db.pool().await;

        let mut tables: Vec<Table> = TABLES
            .iter()
            .map(|(id, game)| Table::clustered(dir.path(), id, game, &urls))
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
        studio_check::nothing_lost_or_doubled(&js, &pool, &tables, &viewers, &parties.floor_log).await;

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

/// The floor's consumer without a leader while its stream has one: the floor reads the
/// stream itself. A loaded suite saw the floor's consumer of one table's log answer "JetStream
/// system temporarily unavailable" (503, 10008) for over 90 s after a node died, the stream
/// answering all along, and the floor stalled until the node came back (its stall alarm
/// raised at 60 s). Here the consumer is made on one replica, and its node killed: the
/// stream keeps two of its three, the consumer none. The floor must go on storing the
/// table's rows, every one once, no alarm.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_floor_reads_the_stream_itself_while_its_consumer_has_no_leader() {
    let Some((bin, db)) = pg::broker_and_db().await else {
        return;
    };
    timeout(Duration::from_secs(300), async {
        let dir = tempfile::tempdir().expect("tempdir");
        let (mut cluster, urls, js) = three_nodes(&bin, dir.path()).await;
        let pool = db.pool().await;
        let mut table = Table::clustered(dir.path(), "dlx", "deluxe", &urls);
        table.start(true).await;
        deals_on(&table, 10).await;
        // The floor's consumer, made before the floor on a single replica (the floor
        // finds it and follows it).
        let stream_name = subjects::stream(subjects::DEFAULT_LOG_STREAM, &table.id);
        let stream = js.get_stream(&stream_name).await.expect("the log stream");
        let mut config = croupier::broker::streams::floor_consumer(croupier::floor::DEFAULT_CONSUMER);
        config.num_replicas = 1;
        let mut consumer = stream.create_consumer(config).await.expect("the floor's consumer");
        let info = consumer.info().await.expect("the consumer's info");
        let node = info.cluster.as_ref().and_then(|c| c.leader.clone()).expect("a node holds the consumer");
        let node = cluster.index_of(&node).expect("a node of ours");
        let keys = dir.path().join("table-keys.toml");
        studio_table::pin_keys(&keys, [(table.id.as_str(), table.db.as_path())]);
        let keys = keys.display().to_string();
        let floor_log = dir.path().join("floor.log");
        let floor = announced(spawn_role(
            &["floor", "--nats", &urls, "--database", &db.url, "--table-keys", &keys],
            &floor_log,
        ))
        .await;
        let stored = floor_stored_after(&pool, &table.id, wall_ms(), Duration::from_secs(60)).await;
        eprintln!("the floor follows: {stored:?} ms");

        // The consumer's one node dies; the stream elects among the other two, if it must.
        let from = wall_ms();
        cluster.kill(node);
        eprintln!("killed {}, the consumer's only node", cluster.nodes[node].name);
        match floor_stored_after(&pool, &table.id, from, Duration::from_secs(60)).await {
            Some(ms) => eprintln!("  the floor stores rows again after {ms} ms"),
            None => panic!(
                "{}\n{}\nthe floor stores a row committed after its consumer's node died, within 60 s",
                studio_check::broker_state(&js, "dlx").await,
                std::fs::read_to_string(&floor_log).unwrap_or_default()
            ),
        }
        deals_on(&table, 20).await;
        let stored = floor_stored_after(&pool, &table.id, wall_ms(), Duration::from_secs(60)).await;
        assert!(stored.is_some(), "the floor keeps up with its consumer's node down");
        eprintln!("  and keeps up: {stored:?} ms");

        // Every row once, byte for byte, and nothing alarmed, with the node still down;
        // then back, the floor still whole.
        table.quiesce().await;
        floor_check::floor_holds_the_log(&pool, &table, &floor_log).await;
        floor_check::every_row_verified_and_no_alarm(&pool).await;
        cluster.restart(node);
        cluster.wait_healthy(Duration::from_secs(60)).await;
        table.stop();
        assert!(floor.terminate(), "the floor stops cleanly");
        drop(pool);
    })
    .await
    .expect("bounded");
}

/// How long after `from_ms` (wall clock) the floor stored a row of `table` committed at or
/// after it; `None` past `within`.
async fn floor_stored_after(
    pool: &sqlx::PgPool,
    table: &str,
    from_ms: u64,
    within: Duration,
) -> Option<u64> {
    let started = Instant::now();
    while started.elapsed() < within {
        if studio_check::floor_newest(pool, table).await >= from_ms as i64 {
            return Some(wall_ms().saturating_sub(from_ms));
        }
        sleep(Duration::from_millis(50)).await;
    }
    None
}
