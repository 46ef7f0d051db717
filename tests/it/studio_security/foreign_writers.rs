//! Foreign writers are noise (issue #59): 10,000 messages the tables did not sign, from
//! every party's credential on the configuration `croupier studio nats-config` generates
//! (JetStream answers pointed at a table's subjects, and direct publishes on them) and from
//! an anonymous client on an open broker (junk, rows signed with another key, copies of
//! the table's own messages, forged bucket values): the table keeps publishing, each
//! table's viewers keep receiving within 10 s during the flood, after it and across a
//! restart of the attacked table, every row reaches the floor once and verified, and the
//! floor says the noise in a bounded number of alarms, never one per message.

use super::*;
use public_check::wall_ms;

/// Messages each attack sends.
const FLOOD: usize = 10_000;
/// The longest a viewer may wait for its table's next message, the flood notwithstanding
/// (the issue's bound: the demo tables make several a second).
const STILL_LIVE: Duration = Duration::from_secs(10);

/// The attacked table's subjects: its log, its public feed, its bucket key.
fn targets(table: &str) -> [String; 3] {
    [
        format!("croupier.{table}.log"),
        format!("croupier.{table}.public"),
        format!("$KV.croupier_tables.{table}"),
    ]
}

/// A studio under attack: its tables (`t1` attacked, `t2` beside it), a relay with a
/// viewer of each, the floor on its database.
struct Studio<'a> {
    dir: &'a Path,
    tables: Vec<(String, PathBuf, Option<Proc>)>,
    relay: Proc,
    viewers: Vec<(String, Viewer)>,
    floor_log: PathBuf,
    pool: sqlx::PgPool,
}

impl Studio<'_> {
    /// The table `id`'s address.
    fn addr(&self, id: &str) -> String {
        let (_, _, p) = self.tables.iter().find(|t| t.0 == id).expect("table");
        p.as_ref().expect("running").addr.clone()
    }

    /// Waits until every viewer got a message newer than `since` (wall ms), at most
    /// [`STILL_LIVE`] after `since`.
    async fn every_viewer_hears_after(&self, since: u64, what: &str) {
        for (id, v) in &self.viewers {
            loop {
                if v.arrivals().last().is_some_and(|(at, _)| *at > since) {
                    break;
                }
                assert!(
                    wall_ms() < since + STILL_LIVE.as_millis() as u64,
                    "{id}: no message for {STILL_LIVE:?} {what}"
                );
                sleep(Duration::from_millis(50)).await;
            }
        }
    }

    /// The longest wait between two messages of each viewer from `from` (wall ms) on.
    fn longest_waits(&self, from: u64) -> Vec<(String, u64)> {
        self.viewers
            .iter()
            .map(|(id, v)| {
                let times: Vec<u64> = v.arrivals().iter().map(|(at, _)| *at).collect();
                let longest = times
                    .windows(2)
                    .filter(|w| w[1] >= from)
                    .map(|w| w[1] - w[0].max(from))
                    .max()
                    .unwrap_or(u64::MAX);
                (id.clone(), longest)
            })
            .collect()
    }

    /// Restarts table `id` (SIGTERM, then the same configuration again).
    async fn restart(&mut self, id: &str) {
        let (_, cfg, p) = self.tables.iter_mut().find(|t| t.0 == id).expect("table");
        assert!(p.take().expect("running").terminate(), "{id} stops cleanly");
        *p = Some(announced(proc::spawn_raw(cfg, &self.dir.join(format!("{id}.log")))).await);
    }

    /// The table's publisher in `/readyz`.
    async fn publisher(&self, id: &str) -> Value {
        get(&self.addr(id), "/readyz").await.1["publish"].clone()
    }

    /// Every claim of the issue's test, once the flood is over: the attacked table
    /// published throughout, its viewers heard it within [`STILL_LIVE`] during and after
    /// the flood and after a restart, every viewer's numbers are consecutive, the floor
    /// holds every row once and verified with at most a few `unsigned` alarms and no
    /// other, and the relay served nothing the tables did not sign.
    async fn holds_through(&mut self, flood_began: u64, attacked: &str) {
        self.every_viewer_hears_after(wall_ms(), "after the flood")
            .await;
        for (id, longest) in self.longest_waits(flood_began) {
            assert!(
                longest <= STILL_LIVE.as_millis() as u64,
                "{id}: a viewer waited {longest} ms for a message during the flood"
            );
        }
        let publisher = self.publisher(attacked).await;
        assert_eq!(publisher["state"], "publishing", "{publisher}");
        assert!(publisher.get("stopped").is_none(), "{publisher}");

        // Across a restart of the attacked table: it reads on from its own record.
        let before = wall_ms();
        self.restart(attacked).await;
        self.every_viewer_hears_after(wall_ms(), "after the attacked table's restart")
            .await;
        let publisher = self.publisher(attacked).await;
        assert_ne!(publisher["state"], "failed", "{publisher}");
        for (id, v) in &self.viewers {
            v.assert_consecutive(id);
        }
        // The floor: every row of every table once, verified; the noise said in a few
        // alarms, never one per message.
        let ids: Vec<String> = self.tables.iter().map(|t| t.0.clone()).collect();
        for id in &ids {
            let started = Instant::now();
            loop {
                let (_, ready) = get(&self.addr(id), "/readyz").await;
                let acked = ready["publish"]["acked"].as_u64().unwrap_or(0) as i64;
                let rows: Vec<(i64, String)> = sqlx::query_as(
                    "SELECT seq, verified FROM floor_events WHERE table_id = $1 AND seq <= $2 ORDER BY seq",
                )
                .bind(id)
                .bind(acked)
                .fetch_all(&self.pool)
                .await
                .expect("rows");
                if acked > 0 && rows.len() as i64 == acked {
                    assert!(
                        rows.iter()
                            .enumerate()
                            .all(|(i, (seq, v))| *seq == i as i64 + 1 && v == "ok"),
                        "{id}: every row once, in order, verified"
                    );
                    break;
                }
                assert!(
                    started.elapsed() < Duration::from_secs(90),
                    "the floor holds {} of {id}'s first {acked} rows; its log ends:\n{}",
                    rows.len(),
                    tail(&self.floor_log)
                );
                sleep(Duration::from_millis(250)).await;
            }
        }
        let alarms: Vec<(String, String, String)> =
            sqlx::query_as("SELECT table_id, kind, detail FROM floor_alarms ORDER BY id")
                .fetch_all(&self.pool)
                .await
                .expect("alarms");
        let minutes = (wall_ms() - flood_began) / 60_000 + 2;
        let noise = alarms.iter().filter(|a| a.1 == "unsigned").count() as u64;
        assert!(
            noise <= minutes * ids.len() as u64,
            "{noise} noise alarms in {minutes} minute(s): {alarms:?}"
        );
        assert!(
            alarms.iter().all(|a| a.1 == "unsigned"),
            "no alarm but the noise: {alarms:?}"
        );
        eprintln!(
            "attacked {attacked}: {} foreign messages passed over by its publisher; {noise} floor alarm(s); restart at {before}",
            self.publisher(attacked).await["foreign"]
        );
    }
}

/// On the generated configuration: every other party's credential (table t2's, the
/// relay's, the floor's) aims 10,000 JetStream answers at t1's subjects (any client names
/// any reply subject) and publishes 10,000 messages on them directly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_foreign_messages_from_every_party_never_stop_a_table() {
    timeout(Duration::from_secs(420), async {
        let Some((bin, db)) = pg::broker_and_db().await else {
            return;
        };
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path();
        let studio = dir.join("studio");
        let port = nats::free_port();
        let ids = ["t1", "t2"];
        let listen = format!("127.0.0.1:{port}");
        let store = dir.join("js").display().to_string();
        let generate = |keys: &[String]| {
            let mut args: Vec<String> = [
                "studio",
                "nats-config",
                "--tables",
                &ids.join(","),
                "--out",
                &studio.display().to_string(),
                "--listen",
                &listen,
                "--store-dir",
                &store,
            ]
            .map(str::to_string)
            .to_vec();
            for k in keys {
                args.extend(["--table-key".to_string(), k.clone()]);
            }
            croupier(&args.iter().map(String::as_str).collect::<Vec<_>>());
        };
        generate(&[]);
        let _broker = Broker::start(
            &bin,
            &studio.join("nats-server.conf"),
            port,
            &dir.join("nats.log"),
        );
        let url = format!("nats://127.0.0.1:{port}");
        let studio_arg = studio.display().to_string();
        croupier(&["studio", "provision", "--dir", &studio_arg, "--nats", &url]);
        let mut tables = Vec::new();
        let mut keys = Vec::new();
        for id in ids {
            let credential =
                croupier::studio::credential_path(&studio, &croupier::studio::table_party(id));
            let cfg = table_config(
                dir,
                id,
                &url,
                &format!(
                    "credentials = {:?}\njs_api_prefix = {:?}\n",
                    credential.display().to_string(),
                    croupier::studio::grants::STUDIO_API
                ),
            );
            let p = announced(proc::spawn_raw(&cfg, &dir.join(format!("{id}.log")))).await;
            keys.push(
                croupier(&["table-key", "--config", cfg.to_str().expect("utf-8")])
                    .trim()
                    .to_string(),
            );
            tables.push((id.to_string(), cfg, Some(p)));
        }
        generate(&keys);
        let keys_file = studio.join("table-keys.toml");
        let credential = |party: &str| {
            croupier::studio::credential_path(&studio, party)
                .display()
                .to_string()
        };
        let mut relay_args = relay_args(&url, &keys_file);
        relay_args.extend(["--credentials".to_string(), credential("relay")]);
        let relay_args: Vec<&std::ffi::OsStr> = relay_args.iter().map(|a| a.as_ref()).collect();
        let relay = announced(spawn_args(&relay_args, &dir.join("relay.log"))).await;
        let floor_log = dir.join("floor.log");
        let keys_arg = keys_file.display().to_string();
        let floor_credential = credential("floor");
        let floor_args = [
            "floor",
            "--nats",
            &url,
            "--database",
            &db.url,
            "--table-keys",
            &keys_arg,
            "--credentials",
            &floor_credential,
            "--js-api-prefix",
            croupier::studio::grants::STUDIO_API,
        ];
        let floor_args: Vec<&std::ffi::OsStr> = floor_args.iter().map(|a| a.as_ref()).collect();
        let _floor = announced(spawn_args(&floor_args, &floor_log)).await;
        let mut viewers = Vec::new();
        for id in ids {
            wait_relayed(&relay.addr, id, 3).await;
            viewers.push((id.to_string(), Viewer::connect(&relay.addr, id, None).await));
        }
        let mut studio_under = Studio {
            dir,
            tables,
            relay,
            viewers,
            floor_log,
            pool: db.pool().await,
        };

        let flood_began = wall_ms();
        // Each party asks what its grants allow — under the studio's API (its account's
        // import on the generated configuration) and under the default prefix — with t1's
        // subjects as the reply subject.
        let studio_api = croupier::studio::grants::STUDIO_API;
        let asks = [
            ("table-t2", "_INBOX.table.t2", "STREAM.INFO.CROUPIER_LOG_t2"),
            ("relay", "_INBOX.relay", "STREAM.INFO.CROUPIER_PUBLIC_t1"),
            ("floor", "_INBOX.floor", "STREAM.INFO.CROUPIER_LOG_t1"),
        ];
        let targets = targets("t1");
        for (name, inbox, allowed) in asks {
            let client = party(&url, &studio, name, inbox, None).await;
            for i in 0..FLOOD {
                let api = if i % 2 == 0 { studio_api } else { "$JS.API" };
                client
                    .publish_with_reply(
                        format!("{api}.{allowed}"),
                        targets[i % 3].clone(),
                        "".into(),
                    )
                    .await
                    .expect("sent");
            }
            for i in 0..FLOOD {
                // Refused by the grants (each a permissions violation), or stored.
                let _ = client
                    .publish(targets[i % 3].clone(), format!("{{\"forged\":{i}}}").into())
                    .await;
            }
            let _ = client.flush().await;
            studio_under
                .every_viewer_hears_after(wall_ms(), &format!("during {name}'s flood"))
                .await;
        }
        studio_under.holds_through(flood_began, "t1").await;
        let _ = &studio_under.relay;
    })
    .await
    .expect("within its time");
}

/// On an open broker, an anonymous client publishes 10,000 messages on t1's subjects:
/// junk, rows of t1's signed with another key (a would-be twin), copies of t1's own last
/// messages (valid signatures, numbers already served) and forged bucket values.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_anonymous_messages_on_an_open_broker_never_stop_a_table() {
    timeout(Duration::from_secs(420), async {
        let Some((bin, db)) = pg::broker_and_db().await else {
            return;
        };
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path();
        let broker = nats::Nats::start(&bin, dir);
        let url = broker.url();
        let mut tables = Vec::new();
        let mut table_dbs = Vec::new();
        for id in ["t1", "t2"] {
            let cfg = studio_table::table_config(dir, id, &url, true);
            let p = announced(proc::spawn_raw(&cfg, &dir.join(format!("{id}.log")))).await;
            table_dbs.push((id, dir.join(format!("{id}.db"))));
            tables.push((id.to_string(), cfg, Some(p)));
        }
        let keys = dir.join("table-keys.toml");
        studio_table::pin_keys(&keys, table_dbs.iter().map(|(id, db)| (*id, db.as_path())));
        let args = relay_args(&url, &keys);
        let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_ref()).collect();
        let relay = announced(spawn_args(&args, &dir.join("relay.log"))).await;
        let floor_log = dir.join("floor.log");
        let keys_arg = keys.display().to_string();
        let floor_args = ["floor", "--nats", &url, "--database", &db.url, "--table-keys", &keys_arg];
        let floor_args: Vec<&std::ffi::OsStr> = floor_args.iter().map(|a| a.as_ref()).collect();
        let _floor = announced(spawn_args(&floor_args, &floor_log)).await;
        let mut viewers = Vec::new();
        for id in ["t1", "t2"] {
            wait_relayed(&relay.addr, id, 3).await;
            viewers.push((id.to_string(), Viewer::connect(&relay.addr, id, None).await));
        }
        let mut studio_under = Studio {
            dir,
            tables,
            relay,
            viewers,
            floor_log,
            pool: db.pool().await,
        };

        let attacker = async_nats::connect(&url).await.expect("anonymous");
        let js = jetstream::new(attacker.clone());
        // t1's own last messages on each stream, to copy: valid proofs, old numbers.
        let mut copies = Vec::new();
        for stream in ["CROUPIER_LOG_t1", "CROUPIER_PUBLIC_t1"] {
            let s = js.get_stream(stream).await.expect("stream");
            let m = s
                .get_raw_message(s.cached_info().state.last_sequence)
                .await
                .expect("the table's last message");
            copies.push((m.subject.to_string(), m.headers.clone(), m.payload.clone()));
        }
        // A would-be twin: rows of t1 signed with another key.
        let twin = croupier::trust::TableKeys::from_secrets([42; 32], [0; 32]);
        let flood_began = wall_ms();
        let targets = targets("t1");
        for i in 0..FLOOD {
            match i % 4 {
                0 => {
                    attacker
                        .publish(targets[i % 3].clone(), format!("junk {i}").into())
                        .await
                        .expect("sent");
                }
                1 => {
                    let row = format!(
                        r#"{{"table":"t1","seq":{},"at_ms":1,"kind":"input","hash":"{:064x}","timeline":"twin","branch":"","record":{{}}}}"#,
                        i + 1,
                        i
                    );
                    let sig = croupier::trust::wire::sign(&twin, croupier::trust::wire::LOG, "t1", row.as_bytes());
                    let mut headers = async_nats::HeaderMap::new();
                    headers.insert(croupier::broker::subjects::HEADER_SIG, sig.as_str());
                    attacker
                        .publish_with_headers(targets[0].clone(), headers, row.into())
                        .await
                        .expect("sent");
                }
                2 => {
                    let (subject, headers, payload) = &copies[i / 4 % 2];
                    attacker
                        .publish_with_headers(subject.clone(), headers.clone(), payload.clone())
                        .await
                        .expect("sent");
                }
                _ => {
                    attacker
                        .publish(targets[2].clone(), format!("{{\"view\":{{\"name\":\"forged {i}\"}},\"n\":1}}").into())
                        .await
                        .expect("sent");
                }
            }
            if i % 2_500 == 2_499 {
                attacker.flush().await.expect("flush");
                studio_under.every_viewer_hears_after(wall_ms(), "during the flood").await;
            }
        }
        attacker.flush().await.expect("flush");
        studio_under.holds_through(flood_began, "t1").await;
        // The floor and the relay never showed a forged value.
        let (_, tables) = get(&studio_under.relay.addr, "/api/tables").await;
        assert!(!tables.to_string().contains("forged"), "{tables}");
        let foreign = studio_under.publisher("t1").await["foreign"].as_u64().unwrap_or(0);
        eprintln!("t1's publisher passed over {foreign} foreign messages since its restart");
    })
    .await
    .expect("within its time");
}
