//! The studio deployment end to end, with the real binaries and a real `nats-server`
//! (started here with JetStream on a free port and its own store, so it can be killed and
//! restarted): demo tables publish (`[publish]`), relays (`croupier relay`) serve remote
//! viewers over `/ws/public?table=ID`.
//!
//! What every viewer receives is checked message by message against each table's own log:
//! the public stream a log makes is computed from the table's database (the verified log
//! folded by `croupier::publish::fold`, numbered from 1, stamped with each row's commit
//! time), and a viewer's messages after its first (a resync view) must be exactly that
//! stream's next messages, byte for byte, to its end — in order, none missing, none
//! doubled. The results in it are checked against the settlements the table recorded.

#[allow(dead_code)] // the lobby test only reads a page
#[path = "support/cdp.rs"]
mod cdp;
mod common;
#[path = "support/nats.rs"]
mod nats;
#[path = "common/proc.rs"]
mod proc;
#[path = "support/public_check.rs"]
mod public_check;
#[path = "support/studio_table.rs"]
mod studio_table;

use croupier::store::Reader;
use croupier::web::client;
use futures::StreamExt;
use nats::Nats;
use proc::{announced, Proc};
use public_check::{check_results, check_viewer, get, lobby, state_at, wait_relayed, Viewer};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use studio_table::Table;
use tokio::time::{sleep, timeout};

fn spawn_relay(nats: &str, log: &Path, extra: &[&str]) -> std::process::Child {
    relay_command(nats, log, extra)
        .spawn()
        .expect("spawn the relay")
}

fn relay_command(nats: &str, log: &Path, extra: &[&str]) -> std::process::Command {
    let mut args = vec!["relay", "--nats", nats, "--bind", "127.0.0.1:0"];
    args.extend_from_slice(extra);
    let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_ref()).collect();
    proc::command_args(&args, log)
}

struct Studio {
    _dir: tempfile::TempDir,
    dir: PathBuf,
    nats: Nats,
    tables: Vec<Table>,
}

impl Studio {
    /// A broker and `ids` demo tables publishing to it, dealing.
    async fn start(ids: &[&str]) -> Option<Studio> {
        let bin = nats::nats_server()?;
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().to_path_buf();
        let nats = Nats::start(&bin, &path);
        let mut tables: Vec<Table> = ids
            .iter()
            .map(|id| Table::new(&path, id, &nats.url()))
            .collect();
        for t in &mut tables {
            t.start(true).await;
        }
        Some(Studio {
            _dir: dir,
            dir: path,
            nats,
            tables,
        })
    }

    async fn relay(&self, name: &str) -> Proc {
        self.relay_with(name, &[]).await
    }

    /// A relay with more arguments, once it lists every table.
    async fn relay_with(&self, name: &str, extra: &[&str]) -> Proc {
        self.relay_limited(name, extra, None).await
    }

    /// A relay with more arguments and, with `files`, that limit of open files.
    async fn relay_limited(&self, name: &str, extra: &[&str], files: Option<u64>) -> Proc {
        let log = self.dir.join(format!("{name}.log"));
        let keys = self.dir.join("table-keys.toml");
        studio_table::pin_keys(
            &keys,
            self.tables.iter().map(|t| (t.id.as_str(), t.db.as_path())),
        );
        let keys = keys.display().to_string();
        let mut args = vec!["--table-keys", keys.as_str()];
        args.extend_from_slice(extra);
        let mut command = relay_command(&self.nats.url(), &log, &args);
        if let Some(n) = files {
            proc::with_file_limit(&mut command, n);
        }
        let relay = announced(command.spawn().expect("spawn the relay")).await;
        for t in &self.tables {
            let started = Instant::now();
            while lobby(&relay.addr, &t.id).await.is_none() {
                assert!(
                    started.elapsed() < Duration::from_secs(30),
                    "{} reaches the lobby",
                    t.id
                );
                sleep(Duration::from_millis(100)).await;
            }
        }
        relay
    }

    /// Every table restarted without its demo players: the log stops growing; returns
    /// each table's expected stream and results once `relay` has all of it.
    async fn quiesce(&mut self, relay: &str) -> Vec<(Vec<String>, Vec<Value>)> {
        let mut out = Vec::new();
        for t in &mut self.tables {
            t.quiesce().await;
            let (stream, results) = t.expected().await;
            wait_relayed(relay, &t.id, stream.len()).await;
            out.push((stream, results));
        }
        out
    }
}

/// Waits until every viewer has everything, then checks each.
async fn check_all(
    studio: &Studio,
    expected: &[(Vec<String>, Vec<Value>)],
    viewers: &[(usize, Vec<&Viewer>)],
) {
    for (t, group) in viewers {
        let (stream, results) = &expected[*t];
        let id = &studio.tables[*t].id;
        check_results(id, stream, results);
        for v in group {
            v.wait_for(stream.len()).await;
        }
    }
    for (t, group) in viewers {
        let (stream, _) = &expected[*t];
        for v in group {
            check_viewer(&studio.tables[*t].id, &v.messages(), stream);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_tables_one_relay_every_viewer_gets_its_tables_log() {
    timeout(Duration::from_secs(240), async {
        let Some(mut studio) = Studio::start(&["alpha", "beta"]).await else {
            return;
        };
        let relay = studio.relay("relay").await;
        let mut viewers = Vec::new();
        for t in &studio.tables {
            for _ in 0..3 {
                viewers.push((
                    t.id.clone(),
                    Viewer::connect(&relay.addr, &t.id, None).await,
                ));
            }
        }
        // A viewer of the table's own feed, to compare the results it shows.
        let own =
            tokio_tungstenite::connect_async(format!("ws://{}/ws/public", studio.tables[0].addr()))
                .await
                .expect("the table's own /ws/public")
                .0;
        let own_got = Arc::new(Mutex::new(Vec::<String>::new()));
        let into = Arc::clone(&own_got);
        let own_task = tokio::spawn(async move {
            let mut own = own;
            while let Some(Ok(m)) = own.next().await {
                if let Ok(t) = m.into_text() {
                    into.lock().expect("lock").push(t.to_string());
                }
            }
        });
        for t in &studio.tables {
            let now = t.seq().await;
            t.wait_rows(now + 120).await;
        }
        let (status, unknown) = get(&relay.addr, "/ws/public?table=nobody").await;
        assert_eq!(status, 404, "{unknown}");
        assert_eq!(unknown["error"]["code"], "not_found");
        own_task.abort();
        let expected = studio.quiesce(&relay.addr).await;
        let groups: Vec<(usize, Vec<&Viewer>)> = (0..2)
            .map(|i| {
                (
                    i,
                    viewers
                        .iter()
                        .filter(|(id, _)| *id == studio.tables[i].id)
                        .map(|(_, v)| v)
                        .collect(),
                )
            })
            .collect();
        check_all(&studio, &expected, &groups).await;
        // The table's own feed showed the same results as the relay's stream.
        let results = |texts: &[String]| -> Vec<Value> {
            texts
                .iter()
                .map(|t| serde_json::from_str::<Value>(t).expect("json"))
                .filter(|m| m["type"] == "result")
                .map(|m| serde_json::json!([m["round"], m["status"], m["result"]]))
                .collect()
        };
        let own_results = results(&own_got.lock().expect("lock"));
        let relayed = results(&expected[0].0);
        assert!(!own_results.is_empty());
        for r in &own_results {
            assert!(
                relayed.contains(r),
                "the table showed {r}, the relay did not"
            );
        }
        // The lobby: every table, its game and state.
        let (_, lobby) = get(&relay.addr, "/api/tables").await;
        let listed: Vec<&str> = lobby
            .as_array()
            .expect("array")
            .iter()
            .map(|t| t["table"].as_str().expect("id"))
            .collect();
        assert_eq!(listed, ["alpha", "beta"]);
        assert_eq!(lobby[0]["variant"], "deluxe");
        assert_eq!(lobby[0]["state"], "open");
        let (status, ready) = get(&relay.addr, "/readyz").await;
        assert_eq!(status, 200, "{ready}");
    })
    .await
    .expect("bounded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_broker_killed_mid_session_loses_nothing() {
    timeout(Duration::from_secs(240), async {
        let Some(mut studio) = Studio::start(&["alpha", "beta"]).await else {
            return;
        };
        let relay = studio.relay("relay").await;
        let mut viewers = Vec::new();
        for (i, t) in studio.tables.iter().enumerate() {
            viewers.push((i, Viewer::connect(&relay.addr, &t.id, None).await));
            viewers.push((i, Viewer::connect(&relay.addr, &t.id, None).await));
        }
        for t in &studio.tables {
            let now = t.seq().await;
            t.wait_rows(now + 40).await;
        }
        studio.nats.kill();
        // The tables deal on; their readiness says the publisher lags (not a lock).
        let table = &studio.tables[0];
        let started = Instant::now();
        loop {
            let (_, r) = get(&table.addr(), "/readyz").await;
            let reasons = r["reasons"].as_array().cloned().unwrap_or_default();
            if reasons.iter().any(|x| x == "publish_lag") {
                assert!(!reasons.iter().any(|x| x == "alarm"), "{r}");
                assert_ne!(r["publish"]["state"], "publishing", "{r}");
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "publish_lag: {r}"
            );
            sleep(Duration::from_millis(100)).await;
        }
        let before = table.seq().await;
        table.wait_rows(before + 20).await;
        sleep(Duration::from_secs(2)).await;
        studio.nats.restart();
        for t in &studio.tables {
            let now = t.seq().await;
            t.wait_rows(now + 40).await;
        }
        let expected = studio.quiesce(&relay.addr).await;
        let groups: Vec<(usize, Vec<&Viewer>)> = (0..2)
            .map(|i| {
                (
                    i,
                    viewers
                        .iter()
                        .filter(|(t, _)| *t == i)
                        .map(|(_, v)| v)
                        .collect(),
                )
            })
            .collect();
        check_all(&studio, &expected, &groups).await;
        let (status, r) = get(&studio.tables[0].addr(), "/readyz").await;
        assert_eq!(status, 200, "caught up: {r}");
        assert_eq!(r["publish"]["lag"], 0, "{r}");
    })
    .await
    .expect("bounded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_table_killed_while_the_broker_is_down_resumes_exactly() {
    timeout(Duration::from_secs(240), async {
        let Some(mut studio) = Studio::start(&["alpha"]).await else {
            return;
        };
        let relay = studio.relay("relay").await;
        let viewer = Viewer::connect(&relay.addr, "alpha", None).await;
        let now = studio.tables[0].seq().await;
        studio.tables[0].wait_rows(now + 40).await;
        studio.nats.kill();
        let now = studio.tables[0].seq().await;
        studio.tables[0].wait_rows(now + 30).await;
        studio.tables[0].kill();
        sleep(Duration::from_secs(1)).await;
        studio.nats.restart();
        studio.tables[0].start(true).await;
        let now = studio.tables[0].seq().await;
        studio.tables[0].wait_rows(now + 40).await;
        let expected = studio.quiesce(&relay.addr).await;
        check_all(&studio, &expected, &[(0, vec![&viewer])]).await;
    })
    .await
    .expect("bounded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn viewers_of_a_killed_relay_resume_on_another_with_their_last_id() {
    timeout(Duration::from_secs(240), async {
        let Some(mut studio) = Studio::start(&["alpha"]).await else {
            return;
        };
        let first = studio.relay("relay-1").await;
        let second = studio.relay("relay-2").await;
        let viewers = [
            Viewer::connect(&first.addr, "alpha", None).await,
            Viewer::connect(&first.addr, "alpha", None).await,
        ];
        let now = studio.tables[0].seq().await;
        studio.tables[0].wait_rows(now + 60).await;
        first.kill();
        // Each viewer reconnects to the other relay with the last id it has.
        let mut resumed = Vec::new();
        for v in &viewers {
            let last = v.last_id().expect("messages before the kill");
            sleep(Duration::from_millis(300)).await;
            resumed.push(Viewer::connect(&second.addr, "alpha", Some(&last)).await);
        }
        let now = studio.tables[0].seq().await;
        studio.tables[0].wait_rows(now + 60).await;
        let expected = studio.quiesce(&second.addr).await;
        let (stream, _) = &expected[0];
        for (before, after) in viewers.iter().zip(&resumed) {
            after.wait_for(stream.len()).await;
            let after = after.messages();
            let resumed_first: Value = serde_json::from_str(&after[0]).expect("json");
            assert_eq!(
                resumed_first["resync"], false,
                "resumed, not resynced: {resumed_first}"
            );
            let mut all = before.messages();
            all.extend(after);
            check_viewer("alpha", &all, stream);
        }
    })
    .await
    .expect("bounded");
}

/// The table's own work does not depend on how many remote viewers there are: it holds
/// one broker connection whatever the viewers, none of them reaches it, and it publishes
/// each message once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn remote_viewers_never_reach_the_table() {
    timeout(Duration::from_secs(240), async {
        let Some(studio) = Studio::start(&["alpha"]).await else {
            return;
        };
        let relay = studio.relay("relay").await;
        let table = &studio.tables[0];
        let pid = table.proc.as_ref().expect("running").child.id();
        let sockets = || {
            std::fs::read_dir(format!("/proc/{pid}/fd"))
                .expect("fds")
                .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
                .filter(|l| l.to_string_lossy().starts_with("socket:"))
                .count()
        };
        let metric = |text: &str, name: &str| -> f64 {
            text.lines()
                .find(|l| l.starts_with(name))
                .and_then(|l| l.rsplit(' ').next())
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("{name} in /metrics"))
        };
        let scrape = |addr: String| async move {
            client::request_with(&addr, "GET", "/metrics", None, &[], Duration::from_secs(10))
                .await
                .expect("metrics")
                .body
        };
        let before = sockets();
        let published_before = metric(
            &scrape(table.addr()).await,
            "croupier_publish_messages_total",
        );
        let mut viewers = Vec::new();
        for _ in 0..300 {
            viewers.push(Viewer::connect(&relay.addr, "alpha", None).await);
        }
        let now = table.seq().await;
        table.wait_rows(now + 30).await;
        let relay_metrics = scrape(relay.addr.clone()).await;
        assert_eq!(
            metric(
                &relay_metrics,
                "croupier_relay_viewers{table=\"alpha\",stream=\"public_ws\"}"
            ),
            300.0
        );
        let after = sockets();
        assert!(
            after <= before + 2,
            "the table's sockets grew from {before} to {after} with 300 remote viewers"
        );
        let table_metrics = scrape(table.addr()).await;
        assert_eq!(
            metric(&table_metrics, "croupier_subscribers{stream=\"public_ws\"}"),
            0.0,
            "no remote viewer is the table's subscriber"
        );
        // Each row went out once on each subject: messages = rows + public messages, not
        // multiplied by viewers.
        let published =
            metric(&table_metrics, "croupier_publish_messages_total") - published_before;
        let (stream, _) = table.expected().await;
        let rows = table.seq().await as f64;
        assert!(
            published <= rows + stream.len() as f64,
            "published {published} for {rows} rows and {} public messages",
            stream.len()
        );
        drop(viewers);
    })
    .await
    .expect("bounded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_viewer_older_than_the_relays_ring_is_served_from_the_stream() {
    timeout(Duration::from_secs(240), async {
        let Some(mut studio) = Studio::start(&["alpha"]).await else {
            return;
        };
        // A relay that keeps only 8 messages per table in memory.
        let relay = studio.relay_with("small", &["--ring", "8"]).await;
        let viewer = Viewer::connect(&relay.addr, "alpha", None).await;
        viewer.wait_for(1).await;
        let now = studio.tables[0].seq().await;
        studio.tables[0].wait_rows(now + 10).await;
        let before = viewer.messages();
        drop(viewer);
        let last: Value = serde_json::from_str(before.last().expect("messages")).expect("json");
        let last_n = last["n"].as_u64().expect("n");
        // Away for far more than 8 messages; the table then goes quiet, so what the viewer
        // missed is fixed: the stream's messages after its id, then the ring's.
        let now = studio.tables[0].seq().await;
        studio.tables[0].wait_rows(now + 60).await;
        let expected = studio.quiesce(&relay.addr).await;
        let (stream, _) = &expected[0];
        assert!(
            last_n + 8 < stream.len() as u64,
            "the viewer's id left the ring"
        );
        let resumed = Viewer::connect(&relay.addr, "alpha", last["id"].as_str()).await;
        resumed.wait_for(stream.len()).await;
        let after = resumed.messages();
        let first: Value = serde_json::from_str(&after[0]).expect("json");
        assert_eq!(
            first["resync"], false,
            "served from the stream, not resynced: {first}"
        );
        assert_eq!(first["n"].as_u64(), Some(last_n + 1));
        let mut all = before;
        all.extend(after);
        check_viewer("alpha", &all, stream);
    })
    .await
    .expect("bounded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn viewers_of_a_relay_just_started_get_the_state_at_their_number_then_what_follows() {
    timeout(Duration::from_secs(240), async {
        let Some(mut studio) = Studio::start(&["alpha"]).await else {
            return;
        };
        // The stream holds far more than the relay's ring before the relay starts.
        let now = studio.tables[0].seq().await;
        studio.tables[0].wait_rows(now + 30).await;
        let log = studio.dir.join("fresh.log");
        let keys = studio.dir.join("table-keys.toml");
        studio_table::pin_keys(&keys, [("alpha", studio.tables[0].db.as_path())]);
        let keys = keys.display().to_string();
        let relay = announced(spawn_relay(
            &studio.nats.url(),
            &log,
            &["--ring", "8", "--table-keys", &keys],
        ))
        .await;
        // Viewers from the first moment the relay knows the table, while it may not have
        // read the stream yet: the first ones join on the bucket's view, and what follows
        // must follow it, whenever the stream is read.
        let url = format!("ws://{}/ws/public?table=alpha", relay.addr);
        let started = Instant::now();
        let mut viewers = Vec::new();
        while viewers.len() < 8 {
            match tokio_tungstenite::connect_async(url.as_str()).await {
                Ok(_) if viewers.is_empty() => {
                    // Known now: connect as fast as possible.
                    for _ in 0..8 {
                        viewers.push(Viewer::connect(&relay.addr, "alpha", None).await);
                    }
                }
                _ => {
                    assert!(
                        started.elapsed() < Duration::from_secs(30),
                        "the relay knows alpha"
                    );
                    sleep(Duration::from_millis(1)).await;
                }
            }
        }
        let now = studio.tables[0].seq().await;
        studio.tables[0].wait_rows(now + 10).await;
        let expected = studio.quiesce(&relay.addr).await;
        let (stream, _) = &expected[0];
        for v in &viewers {
            v.wait_for(stream.len()).await;
        }
        for v in &viewers {
            check_viewer("alpha", &v.messages(), stream);
        }
    })
    .await
    .expect("bounded");
}

/// The guide's repair for a damaged database (docs/src/alarms.md) — restore the backup and its `.anchor` —
/// with the broker, a relay and a viewer attached (issue #31). The restored table begins a
/// new timeline, finds that the broker holds rows it lost, and publishes nothing; its
/// readiness and panel say why. After the operator's `croupier timeline continue`, it
/// publishes its log after the last row both histories share: the relay and the viewer
/// follow it without a gap, and the broker keeps the superseded rows beside the new ones.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restored_table_publishes_nothing_until_the_operator_continues_its_timeline() {
    use croupier::store::{Record, TimelineCause};
    timeout(Duration::from_secs(300), async {
        let Some(mut studio) = Studio::start(&["alpha"]).await else {
            return;
        };
        let relay = studio.relay("relay").await;
        let viewer = Viewer::connect(&relay.addr, "alpha", None).await;
        let now = studio.tables[0].seq().await;
        studio.tables[0].wait_rows(now + 20).await;
        let backup = studio.dir.join("alpha-backup.db");
        let cfg = studio.tables[0].demo.display().to_string();
        let out = common::croupier(&["backup", backup.to_str().expect("utf-8"), "--config", &cfg], None);
        assert!(out.status.success(), "{}", common::text(&out));
        let backed = Reader::open(&backup).await.expect("backup").log("alpha").await.expect("log").len() as u64;
        // The table deals on, and its publisher puts the tail the restore will lose on
        // the broker.
        studio.tables[0].wait_rows(backed + 40).await;
        let table = &mut studio.tables[0];
        table.stop();
        let nats = async_nats::connect(studio.nats.url()).await.expect("nats");
        let js = async_nats::jetstream::new(nats);
        // The log stream's last row (a fork notice is not one).
        let last_row = |js: async_nats::jetstream::Context| async move {
            let mut s = js.get_stream("CROUPIER_LOG_alpha").await.expect("log stream");
            let mut seq = s.info().await.expect("info").state.last_sequence;
            loop {
                let m = s.get_raw_message(seq).await.expect("message");
                let v = serde_json::from_slice::<Value>(&m.payload).expect("json");
                if v.get("seq").is_some() {
                    return v;
                }
                seq -= 1;
            }
        };
        let started = Instant::now();
        while last_row(js.clone()).await["seq"] != table.seq().await {
            // The quiet twin publishes what the demo table left.
            assert!(started.elapsed() < Duration::from_secs(30), "the tail reaches the broker");
            table.start(false).await;
            sleep(Duration::from_millis(1500)).await;
            table.stop();
        }
        let lost_head = table.seq().await;
        let broker_head = last_row(js.clone()).await;
        assert_eq!(broker_head["seq"], lost_head);

        // The restore, as the guide tells it: the backup and its anchor over the live ones.
        for ext in ["-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{ext}", table.db.display()));
        }
        std::fs::copy(&backup, &table.db).expect("restore");
        std::fs::copy(
            croupier::store::anchor::path_for(&backup),
            croupier::store::anchor::path_for(&table.db),
        )
        .expect("restore the anchor");
        table.start(false).await;
        let log = Reader::open(&table.db).await.expect("reader").log("alpha").await.expect("log");
        let row = &log[backed as usize];
        assert!(
            matches!(&row.record, Record::Timeline { cause: TimelineCause::Restored { backup_seq, .. }, .. } if *backup_seq == backed),
            "the row after the backup's last begins a restored timeline: {:?}",
            row.record
        );
        // Not ready, and says why; nothing of the restored log reaches the broker.
        let started = Instant::now();
        let ready = loop {
            let (status, r) = get(&table.addr(), "/readyz").await;
            if r["reasons"].as_array().is_some_and(|a| a.iter().any(|x| x == "publish_stopped")) {
                assert_eq!(status, 503, "{r}");
                break r;
            }
            assert!(started.elapsed() < Duration::from_secs(30), "publish_stopped: {r}");
            sleep(Duration::from_millis(200)).await;
        };
        let stopped = ready["publish"]["stopped"].as_str().expect("why");
        assert!(stopped.starts_with("timeline_fork"), "{stopped}");
        assert!(stopped.contains("croupier timeline continue"), "{stopped}");
        sleep(Duration::from_secs(2)).await;
        assert_eq!(last_row(js.clone()).await, broker_head, "nothing published over the broker's history");
        // It said so on its log subject, signed, for the floor (a notice, not a row).
        let mut s = js.get_stream("CROUPIER_LOG_alpha").await.expect("log stream");
        let last = s.info().await.expect("info").state.last_sequence;
        let notice = s.get_raw_message(last).await.expect("notice");
        let notice: Value = serde_json::from_slice(&notice.payload).expect("json");
        assert_eq!(notice["notice"], "fork", "{notice}");
        assert!(notice["detail"].as_str().is_some_and(|d| d.starts_with("timeline_fork")), "{notice}");
        table.stop();

        // The operator keeps the restored log.
        let idle = table.idle.display().to_string();
        let out = common::croupier(&["timeline", "continue", "--config", &idle], None);
        assert!(out.status.success(), "{}", common::text(&out));
        let said = common::text(&out);
        assert!(said.contains(&format!("published after row {backed}")), "{said}");
        let log = Reader::open(&table.db).await.expect("reader").log("alpha").await.expect("log");
        let Some(Record::Timeline { cause: TimelineCause::Continued { superseded, common_seq, .. }, .. }) = log.last().map(|r| &r.record) else {
            panic!("a continued timeline: {:?}", log.last());
        };
        assert_eq!((superseded.seq, *common_seq), (lost_head, backed));
        // Twice is nothing new.
        let again = common::croupier(&["timeline", "continue", "--config", &idle], None);
        assert!(again.status.success() && common::text(&again).contains("already continues"), "{}", common::text(&again));

        // What the lost rows moved in the wallet, read back from the broker's superseded
        // rows in chain order (the folding itself: `publish::branch` unit tests).
        let lost = common::croupier(&["timeline", "lost", "--config", &idle, "--json"], None);
        assert!(lost.status.success(), "{}", common::text(&lost));
        let lost: Value = serde_json::from_slice(&lost.stdout).expect("json");
        assert_eq!(lost["common_seq"].as_u64(), Some(backed), "{lost}");
        assert_eq!(lost["last_seq"].as_u64(), Some(lost_head), "{lost}");
        assert!(lost["moves"].is_array(), "{lost}");

        // The new timeline deals and is published; the relay's viewer follows.
        table.start(true).await;
        let now = table.seq().await;
        table.wait_rows(now + 30).await;
        table.stop();
        table.start(false).await;
        let mut rows = table.seq().await;
        loop {
            sleep(Duration::from_millis(1500)).await;
            let now = table.seq().await;
            if now == rows {
                break;
            }
            rows = now;
        }
        let started = Instant::now();
        loop {
            let (status, r) = get(&table.addr(), "/readyz").await;
            if status == 200 && r["publish"]["lag"] == 0 {
                break;
            }
            assert!(started.elapsed() < Duration::from_secs(30), "caught up: {r}");
            sleep(Duration::from_millis(200)).await;
        }
        // The viewer's state is the restored log's, reached without a gap.
        let (stream, _) = table.expected().await;
        let expected = state_at(&stream).expect("a view");
        let started = Instant::now();
        loop {
            let got = viewer.messages();
            if state_at(&got).as_ref() == Some(&expected) {
                let ns: Vec<u64> = got
                    .iter()
                    .map(|t| serde_json::from_str::<Value>(t).expect("json")["n"].as_u64().expect("n"))
                    .collect();
                assert!(ns.windows(2).all(|w| w[1] == w[0] + 1), "consecutive numbers: {ns:?}");
                let branch = got
                    .iter()
                    .map(|t| serde_json::from_str::<Value>(t).expect("json"))
                    .filter(|m| m["resync"] == true)
                    .count();
                assert_eq!(branch, 2, "the first view and the branch's resync view");
                break;
            }
            assert!(started.elapsed() < Duration::from_secs(30), "the viewer follows the new timeline");
            sleep(Duration::from_millis(200)).await;
        }
        let (_, relay_ready) = get(&relay.addr, "/readyz").await;
        assert_eq!(relay_ready["refused"]["alpha"], Value::Null, "nothing refused: {relay_ready}");
        // What the viewer saved checks out, across the restore, which it names: not a cut
        // log, and not nothing (exit 3).
        let saved = studio.dir.join("viewer-history.jsonl");
        std::fs::write(&saved, viewer.messages().join("\n")).expect("save");
        let checked = common::croupier(&["verify-results", saved.to_str().expect("utf-8")], None);
        let said = common::text(&checked);
        assert_eq!(checked.status.code(), Some(3), "{said}");
        assert!(said.contains("TIMELINE CHANGE") && !said.contains("FAILED"), "{said}");

        // The broker keeps both histories: the superseded rows under the old timeline,
        // then the restored log's rows after the common one, marked with their branch.
        let mut s = js.get_stream("CROUPIER_LOG_alpha").await.expect("log stream");
        let last = s.info().await.expect("info").state.last_sequence;
        let mut held = Vec::new();
        for seq in 1..=last {
            let m = s.get_raw_message(seq).await.expect("message");
            held.push(serde_json::from_slice::<Value>(&m.payload).expect("json"));
        }
        let log = Reader::open(&table.db).await.expect("reader").log("alpha").await.expect("log");
        let Some(Record::Timeline { id: branch, .. }) = log.iter().rev().map(|r| &r.record).find(|r| matches!(r, Record::Timeline { .. })) else {
            panic!("the continue row");
        };
        let superseded = held.iter().filter(|m| m["branch"] == "" && m["seq"].as_u64() > Some(backed)).count() as u64;
        assert_eq!(superseded, lost_head - backed, "every superseded row is kept");
        let on_branch: Vec<&Value> = held.iter().filter(|m| m["branch"] == branch.as_str()).collect();
        assert_eq!(on_branch.len(), log.len() - backed as usize, "every row after the common one, once");
        for (m, row) in on_branch.iter().zip(&log[backed as usize..]) {
            assert_eq!((m["seq"].as_u64(), m["hash"].as_str()), (Some(row.seq), Some(row.hash.as_str())));
        }
    })
    .await
    .expect("bounded");
}

/// A second table configured with an id that already publishes (its own database and
/// key) publishes nothing and says why; the first table's history on the broker is
/// untouched (issue #31).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_table_with_the_same_id_publishes_nothing() {
    timeout(Duration::from_secs(180), async {
        let Some(studio) = Studio::start(&["alpha"]).await else {
            return;
        };
        let now = studio.tables[0].seq().await;
        studio.tables[0].wait_rows(now + 20).await;
        let twin_dir = studio.dir.join("twin");
        std::fs::create_dir_all(&twin_dir).expect("dir");
        let mut twin = Table::new(&twin_dir, "alpha", &studio.nats.url());
        twin.start(true).await;
        let started = Instant::now();
        let ready = loop {
            let (status, r) = get(&twin.addr(), "/readyz").await;
            if r["reasons"]
                .as_array()
                .is_some_and(|a| a.iter().any(|x| x == "publish_stopped"))
            {
                assert_eq!(status, 503, "{r}");
                break r;
            }
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "publish_stopped: {r}"
            );
            sleep(Duration::from_millis(200)).await;
        };
        let stopped = ready["publish"]["stopped"].as_str().expect("why");
        assert!(stopped.starts_with("timeline_foreign"), "{stopped}");
        twin.wait_rows(10).await;
        // Every row on the broker is the first table's own.
        let nats = async_nats::connect(studio.nats.url()).await.expect("nats");
        let js = async_nats::jetstream::new(nats);
        let mut s = js
            .get_stream("CROUPIER_LOG_alpha")
            .await
            .expect("log stream");
        let last = s.info().await.expect("info").state.last_sequence;
        let reader = Reader::open(&studio.tables[0].db).await.expect("reader");
        let log = reader.log("alpha").await.expect("log");
        let mut notices = 0;
        for seq in 1..=last {
            let m = s.get_raw_message(seq).await.expect("message");
            let row: Value = serde_json::from_slice(&m.payload).expect("json");
            if row["notice"] == "fork" {
                // The twin's word that it stopped, for the floor: not a row.
                assert!(
                    row["detail"]
                        .as_str()
                        .is_some_and(|d| d.starts_with("timeline_foreign")),
                    "{row}"
                );
                notices += 1;
                continue;
            }
            let i = row["seq"].as_u64().expect("seq") as usize - 1;
            assert_eq!(
                row["hash"].as_str(),
                Some(log[i].hash.as_str()),
                "row {} on the broker is the first table's",
                i + 1
            );
        }
        assert_eq!(notices, 1, "the twin said it stopped");
        twin.stop();
    })
    .await
    .expect("bounded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_relay_says_ready_only_once_it_knows_every_table_in_the_bucket() {
    timeout(Duration::from_secs(180), async {
        let Some(studio) = Studio::start(&["alpha", "beta"]).await else {
            return;
        };
        // A first relay sees both tables publish: they are in the bucket.
        let _first = studio.relay("relay-1").await;
        let keys = studio.dir.join("table-keys.toml").display().to_string();
        for attempt in 0..3 {
            let log = studio.dir.join(format!("relay-late-{attempt}.log"));
            let relay = announced(spawn_relay(
                &studio.nats.url(),
                &log,
                &["--table-keys", keys.as_str()],
            ))
            .await;
            let started = Instant::now();
            loop {
                let (status, _) = get(&relay.addr, "/readyz").await;
                if status == 200 {
                    break;
                }
                assert!(started.elapsed() < Duration::from_secs(30), "ready in time");
                sleep(Duration::from_millis(5)).await;
            }
            // The moment it says ready, it serves every table.
            for t in &studio.tables {
                assert!(
                    lobby(&relay.addr, &t.id).await.is_some(),
                    "ready, yet {} is unknown (attempt {attempt})",
                    t.id
                );
            }
        }
    })
    .await
    .expect("bounded");
}

/// Issue #32 items 10 and 11: a relay's page has the table's CSP and frame headers; under
/// a hard limit of 256 open files its viewers are capped (503) before they take the
/// descriptors its health checks need; and the memory a storm of 2,000 viewers took is
/// given back once they leave (before: 31 → 41 MB kept).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_relay_caps_its_viewers_frames_nothing_and_gives_a_storms_memory_back() {
    timeout(Duration::from_secs(300), async {
        let Some(studio) = Studio::start(&["alpha"]).await else {
            return;
        };
        let relay = studio.relay("relay-roomy").await;
        let page = client::request_with(
            &relay.addr,
            "GET",
            "/public?table=alpha",
            None,
            &[],
            Duration::from_secs(10),
        )
        .await
        .expect("page");
        assert_eq!(page.status, 200);
        let header = |name: &str| {
            page.headers
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
                .unwrap_or_default()
        };
        assert!(header("content-security-policy").contains("frame-ancestors 'none'"));
        assert_eq!(header("x-frame-options"), "DENY");

        // The storm: 2,000 viewers, then none.
        let pid = relay.child.id();
        sleep(Duration::from_secs(2)).await;
        let before = proc::rss_kb(pid);
        let mut viewers = Vec::new();
        for _ in 0..20 {
            let batch: Vec<_> = (0..100)
                .map(|_| {
                    let addr = relay.addr.clone();
                    tokio::spawn(
                        async move { proc::raw_upgrade(&addr, "/ws/public?table=alpha").await },
                    )
                })
                .collect();
            for v in batch {
                let (status, s) = v.await.expect("viewer task");
                assert_eq!(status, 101);
                viewers.push(s);
            }
        }
        proc::assert_storm_memory_given_back(pid, before, viewers).await;

        // 256 open files: the viewers are capped, the health checks still answer.
        let tight = studio.relay_limited("relay-tight", &[], Some(256)).await;
        let (mut held, mut refused) = (Vec::new(), 0);
        for _ in 0..300 {
            match proc::raw_upgrade(&tight.addr, "/ws/public?table=alpha").await {
                (101, s) => held.push(s),
                (503, _) => refused += 1,
                (other, _) => panic!("a viewer got {other}"),
            }
        }
        assert!(
            refused > 0 && !held.is_empty(),
            "{} held, {refused} refused",
            held.len()
        );
        assert!(held.len() < 256, "{} viewers under 256 files", held.len());
        for path in ["/healthz", "/readyz", "/metrics"] {
            let (status, _) = get(&tight.addr, path).await;
            assert_eq!(status, 200, "{path} with {} viewers", held.len());
        }
    })
    .await
    .expect("bounded");
}

/// The relay's lobby page at `/` (issue #34 item 4): every table it serves, with its game,
/// state and round, linking to its public page; a table that stopped publishing is shown
/// as not live, never as open. In Chromium, at a phone's size, with axe-core.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_relay_lobby_lists_every_table_and_never_shows_a_stopped_one_as_open() {
    if !cdp::chromium_present() {
        return;
    }
    timeout(Duration::from_secs(240), async {
        let Some(mut studio) = Studio::start(&["alpha", "beta"]).await else {
            return;
        };
        let relay = studio.relay("relay-1").await;
        let step = Duration::from_secs(30);
        let browser = cdp::Browser::launch().await;
        // A table is quiet after 10 s without news here (the page's default is 60 s).
        let page = browser
            .page(&format!("http://{}/?quiet=10", relay.addr), 390, 844)
            .await;
        let badge = |id: &str| {
            format!(
                "(document.querySelector('tr[data-table=\"{id}\"] .state') || {{}}).textContent"
            )
        };
        for id in ["alpha", "beta"] {
            page.wait_for(&format!("{} === 'Open'", badge(id)), step)
                .await;
        }
        let row = page.text("tr[data-table=\"alpha\"]").await;
        assert!(row.contains("Deluxe Blackjack"), "{row}");
        let href = page
            .eval("document.querySelector('tr[data-table=\"alpha\"] a').getAttribute('href')")
            .await;
        assert_eq!(href, "/public?table=alpha");
        // The JSON behind it says how long each table has been quiet.
        let alpha = lobby(&relay.addr, "alpha").await.expect("listed");
        assert!(alpha["quiet_ms"].as_u64() < Some(10_000), "{alpha}");
        // Nothing wider than the phone: every column is on the screen.
        for (w, h) in [(1280, 800), (844, 390), (390, 844)] {
            page.call(
                "Emulation.setDeviceMetricsOverride",
                serde_json::json!({"width": w, "height": h, "deviceScaleFactor": 1, "mobile": false}),
            )
            .await;
            let fits = page
                .eval(
                    "new Promise(r => requestAnimationFrame(() => r(\
                     document.documentElement.scrollWidth <= window.innerWidth && \
                     [...document.querySelectorAll('td')].every(td => \
                       td.getBoundingClientRect().right <= window.innerWidth + 0.5))))",
                )
                .await;
            assert_eq!(fits, true, "the lobby fits {w}x{h}");
        }

        page.eval(include_str!("support/axe/axe.min.js")).await;
        let violations = page
            .eval(
                "axe.run(document, {resultTypes: ['violations']}).then(r => r.violations \
                 .filter(v => ['moderate', 'serious', 'critical'].includes(v.impact)) \
                 .map(v => v.id + ': ' + v.help))",
            )
            .await;
        assert_eq!(violations, serde_json::json!([]), "axe-core");

        // Beta's table process dies: the relay hears nothing more from it, and the lobby
        // stops showing it as open; alpha deals on and stays open.
        studio.tables[1].kill();
        page.wait_for(&format!("{} === 'No news — not live'", badge("beta")), step)
            .await;
        page.wait_for(&format!("{} === 'Open'", badge("alpha")), step)
            .await;
        page.screenshot(&cdp::artifacts().join("lobby-390x844.png"))
            .await;
        let beta = lobby(&relay.addr, "beta").await.expect("still listed");
        assert!(beta["quiet_ms"].as_u64() >= Some(10_000), "{beta}");
        assert_eq!(
            beta["state"], "open",
            "its last view said open: the page is what tells"
        );
    })
    .await
    .expect("bounded");
}
