//! Studio security (issue #30), against a real `nats-server`:
//!
//! - the studio on the configuration `croupier studio nats-config` generates, over TLS
//!   with a test CA made here (server and client certificates): three tables, two relays
//!   and the floor each with its own nkey credential do their whole job — and every
//!   attack an outside tester ran is refused by the broker: an anonymous connection; the
//!   relay's credential reading any inbox or log subject, a log stream, or deleting the
//!   floor's consumer; one table's credential reading, consuming, changing or deleting
//!   another table's streams, its bucket key, or capturing its subjects in a new stream;
//! - on a broker *without* authentication, forged, replayed, high-numbered and malformed
//!   messages on a table's public subject, and a forged bucket value, are not served by
//!   the relay, which keeps serving the table's own messages with consecutive `n`; a
//!   table with no pinned key is not served until its key is pinned.

mod common;
#[path = "support/nats.rs"]
mod nats;
#[path = "support/pg.rs"]
mod pg;
#[path = "common/proc.rs"]
mod proc;
#[path = "support/public_check.rs"]
mod public_check;
#[path = "support/studio_table.rs"]
mod studio_table;

use async_nats::jetstream::{self, consumer, stream};
use croupier::broker::BrokerOptions;
use croupier::web::client;
use futures::StreamExt;
use proc::{announced, spawn_args, Proc};
use public_check::Viewer;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use tokio::time::{sleep, timeout};

/// The last lines of a log file.
fn tail(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(30)..].join("\n")
}

/// A `croupier` command run to its end; its stdout.
fn croupier(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_croupier"))
        .args(args)
        .output()
        .expect("run croupier");
    assert!(
        out.status.success(),
        "croupier {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// A test CA, and a server and a client certificate it signed, as PEM files in `dir`.
struct Pki {
    ca: PathBuf,
    server_cert: PathBuf,
    server_key: PathBuf,
    client_cert: PathBuf,
    client_key: PathBuf,
}

fn pki(dir: &Path) -> Pki {
    use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair, KeyUsagePurpose};
    let ca_key = KeyPair::generate().expect("CA key");
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let ca_cert = ca_params.self_signed(&ca_key).expect("CA");
    let issuer = Issuer::new(ca_params, &ca_key);
    let write = |name: &str, text: String| {
        let path = dir.join(name);
        std::fs::write(&path, text).expect("write pem");
        path
    };
    let server_key = KeyPair::generate().expect("server key");
    let server = CertificateParams::new(vec!["127.0.0.1".to_string(), "localhost".to_string()])
        .expect("server params")
        .signed_by(&server_key, &issuer)
        .expect("server cert");
    let client_key = KeyPair::generate().expect("client key");
    let client = CertificateParams::new(vec!["croupier-party".to_string()])
        .expect("client params")
        .signed_by(&client_key, &issuer)
        .expect("client cert");
    Pki {
        ca: write("ca.pem", ca_cert.pem()),
        server_cert: write("server.pem", server.pem()),
        server_key: write("server-key.pem", server_key.serialize_pem()),
        client_cert: write("client.pem", client.pem()),
        client_key: write("client-key.pem", client_key.serialize_pem()),
    }
}

/// `nats-server -c FILE`, killed when dropped.
struct Broker(Child);

impl Broker {
    fn start(bin: &Path, conf: &Path, port: u16, log: &Path) -> Broker {
        let child = Command::new(bin)
            .arg("-c")
            .arg(conf)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::from(std::fs::File::create(log).expect("log")))
            .spawn()
            .expect("spawn nats-server");
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "nats-server listens"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Broker(child)
    }
}

impl Drop for Broker {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

async fn get(addr: &str, path: &str) -> (u16, Value) {
    let r = client::request_with(addr, "GET", path, None, &[], Duration::from_secs(10))
        .await
        .unwrap_or_else(|e| panic!("GET {path}: {e}"));
    (
        r.status,
        serde_json::from_str(&r.body).unwrap_or(Value::String(r.body)),
    )
}

/// The relay's lobby entry for `table`.
async fn lobby(relay: &str, table: &str) -> Option<Value> {
    let (_, tables) = get(relay, "/api/tables").await;
    tables
        .as_array()?
        .iter()
        .find(|t| t["table"] == table)
        .cloned()
}

/// `croupier relay` on `nats` serving the tables pinned in `keys`, on any free port.
fn relay_args(nats: &str, keys: &Path) -> Vec<String> {
    [
        "relay",
        "--nats",
        nats,
        "--bind",
        "127.0.0.1:0",
        "--table-keys",
    ]
    .into_iter()
    .map(str::to_string)
    .chain([keys.to_str().expect("utf-8").to_string()])
    .collect()
}

/// Waits until `relay` has relayed at least `n` messages of `table`; returns its `n`.
async fn wait_relayed(relay: &str, table: &str, n: u64) -> u64 {
    let started = Instant::now();
    loop {
        let last = lobby(relay, table)
            .await
            .map_or(0, |t| t["n"].as_u64().unwrap_or(0));
        if last >= n {
            return last;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "{table}: the relay {relay} has {last} of {n} messages"
        );
        sleep(Duration::from_millis(100)).await;
    }
}

/// A client of the broker as `party` (its credential from the studio directory), with a
/// short request timeout: a refused request is one that gets no answer.
async fn party(
    url: &str,
    studio: &Path,
    party: &str,
    inbox: &str,
    pki: Option<&Pki>,
) -> async_nats::Client {
    let options = BrokerOptions {
        url: url.to_string(),
        credentials: Some(croupier::studio::credential_path(studio, party)),
        tls_ca: pki.map(|p| p.ca.clone()),
        tls_cert: pki.map(|p| p.client_cert.clone()),
        tls_key: pki.map(|p| p.client_key.clone()),
        inbox_prefix: Some(inbox.to_string()),
    };
    let (options, addrs) =
        croupier::broker::connect::client_options(&options).expect("party options");
    options
        .request_timeout(Some(Duration::from_millis(1500)))
        .connect(addrs)
        .await
        .unwrap_or_else(|e| panic!("{party} connects: {e}"))
}

/// How many messages `sub` receives within `wait`.
async fn received(mut sub: async_nats::Subscriber, wait: Duration) -> usize {
    let mut n = 0;
    let deadline = tokio::time::Instant::now() + wait;
    while let Ok(Some(_)) = tokio::time::timeout_at(deadline, sub.next()).await {
        n += 1;
    }
    n
}

/// Writes table `id`'s configuration (a dealing demo table) publishing with `publish`
/// (extra `[publish]` lines).
fn table_config(dir: &Path, id: &str, url: &str, publish: &str) -> PathBuf {
    let path = studio_table::table_config(dir, id, url, true);
    let mut text = std::fs::read_to_string(&path).expect("config");
    text.push_str(publish);
    std::fs::write(&path, text).expect("config");
    croupier::table::TableConfig::load(&path).expect("a valid table config");
    path
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_generated_studio_over_tls_does_its_job_and_refuses_every_attack() {
    timeout(Duration::from_secs(300), async {
        let Some(bin) = nats::nats_server() else {
            return;
        };
        let Some(db) = pg::fresh().await else {
            return;
        };
        let dir = tempfile::tempdir().expect("tempdir");
        let dir = dir.path();
        let pki = pki(dir);
        let studio = dir.join("studio");
        let port = free_port();
        let ids = ["t1", "t2", "t3"];
        let listen = format!("127.0.0.1:{port}");
        let store = dir.join("js").display().to_string();
        let generate = |keys: &[String]| {
            let mut args = vec![
                "studio".to_string(),
                "nats-config".into(),
                "--tables".into(),
                ids.join(","),
                "--out".into(),
                studio.display().to_string(),
                "--listen".into(),
                listen.clone(),
                "--store-dir".into(),
                store.clone(),
                "--tls-cert".into(),
                pki.server_cert.display().to_string(),
                "--tls-key".into(),
                pki.server_key.display().to_string(),
                "--verify-clients-ca".into(),
                pki.ca.display().to_string(),
            ];
            for k in keys {
                args.push("--table-key".into());
                args.push(k.clone());
            }
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            croupier(&args)
        };
        generate(&[]);
        let conf = studio.join("nats-server.conf");
        let _broker = Broker::start(&bin, &conf, port, &dir.join("nats.log"));
        let url = format!("tls://127.0.0.1:{port}");
        let tls_flags = [
            "--tls-ca".to_string(),
            pki.ca.display().to_string(),
            "--tls-cert".into(),
            pki.client_cert.display().to_string(),
            "--tls-key".into(),
            pki.client_key.display().to_string(),
        ];
        let mut provision = vec![
            "studio".to_string(),
            "provision".into(),
            "--dir".into(),
            studio.display().to_string(),
            "--nats".into(),
            url.clone(),
        ];
        provision.extend(tls_flags.iter().cloned());
        let out = croupier(&provision.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(out.matches("created").count(), 10, "{out}");

        // The tables, each with its own credential, over TLS.
        let mut tables: Vec<Proc> = Vec::new();
        let mut keys = Vec::new();
        for id in ids {
            let publish = format!(
                "credentials = {:?}\ntls_ca = {:?}\ntls_cert = {:?}\ntls_key = {:?}\n",
                croupier::studio::credential_path(&studio, &croupier::studio::table_party(id))
                    .display()
                    .to_string(),
                pki.ca.display().to_string(),
                pki.client_cert.display().to_string(),
                pki.client_key.display().to_string(),
            );
            let cfg = table_config(dir, id, &url, &publish);
            tables.push(announced(proc::spawn_raw(&cfg, &dir.join(format!("{id}.log")))).await);
            let line = croupier(&["table-key", "--config", cfg.to_str().expect("utf-8")]);
            keys.push(line.trim().to_string());
        }
        // The keys pinned for the relays: the operator's step after the tables' first start.
        generate(&keys);
        let keys_file = studio.join("table-keys.toml").display().to_string();
        let mut relays = Vec::new();
        for name in ["relay-a", "relay-b"] {
            let mut args = vec![
                "relay".to_string(),
                "--nats".into(),
                url.clone(),
                "--bind".into(),
                "127.0.0.1:0".into(),
                "--credentials".into(),
                croupier::studio::credential_path(&studio, "relay")
                    .display()
                    .to_string(),
                "--table-keys".into(),
                keys_file.clone(),
            ];
            args.extend(tls_flags.iter().cloned());
            let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_ref()).collect();
            relays.push(announced(spawn_args(&args, &dir.join(format!("{name}.log")))).await);
        }
        let mut args = vec![
            "floor".to_string(),
            "--nats".into(),
            url.clone(),
            "--database".into(),
            db.url.clone(),
            "--credentials".into(),
            croupier::studio::credential_path(&studio, "floor")
                .display()
                .to_string(),
        ];
        args.extend(tls_flags.iter().cloned());
        let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_ref()).collect();
        let floor = spawn_args(&args, &dir.join("floor.log"));
        let _floor = announced(floor).await;

        // Every party does its job: both relays serve every table, a viewer of each gets
        // consecutive messages, the floor ingests every table's log.
        let mut viewers = Vec::new();
        for relay in &relays {
            for id in ids {
                wait_relayed(&relay.addr, id, 3).await;
                viewers.push((id, Viewer::connect(&relay.addr, id, None).await));
            }
            let (status, ready) = get(&relay.addr, "/readyz").await;
            assert_eq!(status, 200, "{ready}");
            assert_eq!(ready["refused"], serde_json::json!({}), "{ready}");
        }
        for (i, id) in ids.iter().enumerate() {
            let (_, key) = get(&relays[1].addr, &format!("/api/table-key?table={id}")).await;
            let (_, own) = get(&tables[i].addr, "/api/table-key").await;
            assert_eq!(
                key["key"], own["key"],
                "{id}: the relay's pinned key is the table's"
            );
        }
        let pool = db.pool().await;
        let started = Instant::now();
        loop {
            let counts: Vec<i64> = futures::future::join_all(ids.iter().map(|id| {
                sqlx::query_scalar::<_, i64>(
                    "SELECT count(*) FROM floor_events WHERE table_id = $1",
                )
                .bind(*id)
                .fetch_one(&pool)
            }))
            .await
            .into_iter()
            .map(|r| r.expect("count"))
            .collect();
            if counts.iter().all(|c| *c >= 20) {
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "the floor ingests every table: {counts:?}"
            );
            sleep(Duration::from_millis(200)).await;
        }

        // Anonymous: refused.
        let anonymous = BrokerOptions {
            url: url.clone(),
            tls_ca: Some(pki.ca.clone()),
            tls_cert: Some(pki.client_cert.clone()),
            tls_key: Some(pki.client_key.clone()),
            ..Default::default()
        };
        let (options, addrs) =
            croupier::broker::connect::client_options(&anonymous).expect("options");
        assert!(
            options.connect(addrs).await.is_err(),
            "an anonymous connection is refused"
        );

        // The relay's credential: no inbox but its own, no log subject, no log stream, no
        // consumer of the floor's.
        let admin = party(&url, &studio, "admin", "_INBOX.admin", Some(&pki)).await;
        let admin_js = jetstream::new(admin.clone());
        let relay = party(&url, &studio, "relay", "_INBOX.relay", Some(&pki)).await;
        let relay_js = jetstream::new(relay.clone());
        let all_inboxes = relay.subscribe("_INBOX.>").await.expect("subscribe");
        let logs = relay.subscribe("croupier.*.log").await.expect("subscribe");
        let own = relay
            .subscribe("_INBOX.relay.probe")
            .await
            .expect("subscribe");
        sleep(Duration::from_millis(200)).await;
        admin
            .publish("_INBOX.relay.probe", "control".into())
            .await
            .expect("publish");
        let (inboxes, logs, own) = tokio::join!(
            received(all_inboxes, Duration::from_secs(3)),
            received(logs, Duration::from_secs(3)),
            received(own, Duration::from_secs(3)),
        );
        assert_eq!(own, 1, "the relay's own inbox works (the control)");
        assert_eq!(inboxes, 0, "the relay reads no other party's replies");
        assert_eq!(logs, 0, "the relay reads no log row");
        assert!(relay_js.get_stream("CROUPIER_LOG_t1").await.is_err());
        assert!(relay_js
            .get_stream_no_info("CROUPIER_LOG_t1")
            .await
            .expect("handle")
            .get_raw_message(1)
            .await
            .is_err());
        assert!(relay_js
            .create_consumer_on_stream(
                consumer::pull::Config {
                    durable_name: Some("spy".into()),
                    ..Default::default()
                },
                "CROUPIER_LOG_t1",
            )
            .await
            .is_err());
        assert!(relay_js
            .delete_consumer_from_stream(croupier::floor::DEFAULT_CONSUMER, "CROUPIER_LOG_t1")
            .await
            .is_err());
        assert!(relay_js.delete_stream("CROUPIER_PUBLIC_t1").await.is_err());
        assert!(
            admin_js
                .get_stream("CROUPIER_LOG_t1")
                .await
                .expect("stream")
                .consumer_info(croupier::floor::DEFAULT_CONSUMER)
                .await
                .is_ok(),
            "the floor's consumer is still there"
        );

        // Table t1's credential against table t2.
        let t1 = party(&url, &studio, "table-t1", "_INBOX.table.t1", Some(&pki)).await;
        let t1_js = jetstream::new(t1.clone());
        let t2_log = t1.subscribe("croupier.t2.log").await.expect("subscribe");
        assert_eq!(
            received(t2_log, Duration::from_secs(2)).await,
            0,
            "t1 reads t2's rows"
        );
        assert!(
            t1_js.get_stream("CROUPIER_LOG_t2").await.is_err(),
            "STREAM.INFO"
        );
        assert!(
            t1_js
                .get_stream_no_info("CROUPIER_LOG_t2")
                .await
                .expect("handle")
                .get_raw_message(1)
                .await
                .is_err(),
            "MSG.GET"
        );
        assert!(
            t1_js
                .create_consumer_on_stream(
                    consumer::pull::Config {
                        durable_name: Some("spy".into()),
                        ..Default::default()
                    },
                    "CROUPIER_LOG_t2",
                )
                .await
                .is_err(),
            "CONSUMER.CREATE"
        );
        let mut changed = admin_js
            .get_stream("CROUPIER_PUBLIC_t2")
            .await
            .expect("stream")
            .cached_info()
            .config
            .clone();
        changed.subjects = vec!["croupier.t2.public".into(), "croupier.t1.public".into()];
        assert!(t1_js.update_stream(changed).await.is_err(), "STREAM.UPDATE");
        assert!(
            t1_js.delete_stream("CROUPIER_PUBLIC_t2").await.is_err(),
            "STREAM.DELETE"
        );
        assert!(
            t1_js
                .create_stream(stream::Config {
                    name: "CAPTURE".into(),
                    subjects: vec!["croupier.t2.floor".into()],
                    ..Default::default()
                })
                .await
                .is_err(),
            "STREAM.CREATE"
        );
        for subject in [
            "$KV.croupier_tables.t2",
            "croupier.t2.public",
            "croupier.t2.log",
        ] {
            let ack = t1_js
                .publish(subject, "{\"forged\":true}".into())
                .await
                .expect("sent");
            assert!(ack.await.is_err(), "t1 publishes on {subject}");
        }
        let info = admin_js
            .get_stream("CROUPIER_PUBLIC_t2")
            .await
            .expect("t2's stream is still there")
            .cached_info()
            .clone();
        assert_eq!(info.config.subjects, vec!["croupier.t2.public".to_string()]);
        let value = admin_js
            .get_key_value("croupier_tables")
            .await
            .expect("bucket")
            .get("t2")
            .await
            .expect("get")
            .expect("t2's view");
        assert!(!String::from_utf8_lossy(&value).contains("forged"));

        // What permissions cannot stop inside one account: a push consumer delivering one
        // stream into another table's log subject (the relay may create consumers on
        // the public streams), and a JetStream answer pointed at another table's public
        // subject. Such messages land in t2's streams; nothing signed by t2 is among
        // them, so t2's publisher passes over them and publishes every row, the relays
        // serve t2's own messages only, and the floor keeps t2's rows whole.
        let injector = relay_js
            .get_stream_no_info("CROUPIER_PUBLIC_t1")
            .await
            .expect("handle")
            .create_consumer(consumer::push::Config {
                deliver_subject: "croupier.t2.log".into(),
                deliver_policy: consumer::DeliverPolicy::New,
                ack_policy: consumer::AckPolicy::None,
                ..Default::default()
            })
            .await;
        assert!(injector.is_ok(), "the relay may create consumers on public streams");
        // JetStream's answers pointed at t2's subjects, while t2 publishes.
        for _ in 0..30 {
            relay
                .publish_with_reply(
                    "$JS.API.STREAM.INFO.CROUPIER_PUBLIC_t1",
                    "croupier.t2.log",
                    "".into(),
                )
                .await
                .expect("sent");
            t1.publish_with_reply(
                "$JS.API.STREAM.INFO.CROUPIER_PUBLIC_t1",
                "croupier.t2.public",
                "".into(),
            )
            .await
            .expect("sent");
            sleep(Duration::from_millis(100)).await;
        }
        t1.flush().await.expect("flush");
        relay.flush().await.expect("flush");
        // The injection lands: t2's log stream holds more messages than t2 has rows.
        let started = Instant::now();
        let acked = loop {
            let (_, t2_ready) = get(&tables[1].addr, "/readyz").await;
            let acked = t2_ready["publish"]["acked"].as_u64().expect("acked");
            let mut log = admin_js.get_stream("CROUPIER_LOG_t2").await.expect("t2's log");
            let held = log.info().await.expect("info").state.last_sequence;
            if held > acked + 10 {
                break acked;
            }
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "the injection reached t2's log stream: {held} messages for {acked} rows"
            );
            sleep(Duration::from_millis(200)).await;
        };
        // t2 publishes on, past the foreign messages.
        let started = Instant::now();
        let goal = acked + 10;
        loop {
            let (_, r) = get(&tables[1].addr, "/readyz").await;
            assert_ne!(r["publish"]["state"], "failed", "{r}");
            if r["publish"]["acked"].as_u64() >= Some(goal) {
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "t2 publishes past the injected messages: {r}"
            );
            sleep(Duration::from_millis(200)).await;
        }
        drop(injector);
        // The floor holds t2's rows 1..goal, each once, all verified: the junk is alarmed
        // as unreadable, never stored as a row.
        let started = Instant::now();
        loop {
            let rows: Vec<(i64, String)> = sqlx::query_as(
                "SELECT seq, verified FROM floor_events WHERE table_id = 't2' AND seq <= $1 ORDER BY seq",
            )
            .bind(goal as i64)
            .fetch_all(&pool)
            .await
            .expect("rows");
            if rows.len() as u64 == goal {
                assert!(
                    rows.iter().enumerate().all(|(i, (seq, v))| *seq == i as i64 + 1 && v == "ok"),
                    "t2's rows on the floor are whole"
                );
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "the floor has {} of t2's first {goal} rows; its log ends:\n{}",
                rows.len(),
                tail(&dir.join("floor.log"))
            );
            sleep(Duration::from_millis(200)).await;
        }

        // Through all of it, the studio went on: the viewers got consecutive messages.
        for relay in &relays {
            for id in ids {
                let n = lobby(&relay.addr, id).await.expect("listed")["n"]
                    .as_u64()
                    .expect("n");
                wait_relayed(&relay.addr, id, n + 2).await;
            }
        }
        sleep(Duration::from_millis(500)).await;
        for (id, v) in &viewers {
            assert!(
                v.assert_consecutive(id) >= 2,
                "{id}: the viewer got messages"
            );
        }
        for t in tables {
            assert!(t.terminate(), "a table stops cleanly");
        }
    })
    .await
    .expect("bounded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forged_replayed_and_malformed_messages_on_an_open_broker_are_not_served() {
    timeout(Duration::from_secs(240), async {
        let Some(bin) = nats::nats_server() else {
            return;
        };
        let dir = tempfile::tempdir().expect("tempdir");
        let dir = dir.path();
        let broker = nats::Nats::start(&bin, dir);
        let mut t1 = studio_table::Table::new(dir, "t1", &broker.url());
        let mut t2 = studio_table::Table::new(dir, "t2", &broker.url());
        t1.start(true).await;
        t2.start(true).await;
        let keys = dir.join("table-keys.toml");
        // Only t1 is pinned at first.
        studio_table::pin_keys(&keys, [("t1", t1.db.as_path())]);
        let args = relay_args(&broker.url(), &keys);
        let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_ref()).collect();
        let relay = announced(spawn_args(&args, &dir.join("relay.log"))).await;
        let n = wait_relayed(&relay.addr, "t1", 3).await;
        let viewer = Viewer::connect(&relay.addr, "t1", None).await;

        // An attacker on the open broker.
        let attacker = async_nats::connect(broker.url()).await.expect("connect");
        let js = jetstream::new(attacker.clone());
        let public = js.get_stream("CROUPIER_PUBLIC_t1").await.expect("stream");
        let last = public
            .get_raw_message(public.cached_info().state.last_sequence)
            .await
            .expect("the last message");
        let real: Value = serde_json::from_slice(&last.payload).expect("json");
        let sig = last
            .headers
            .get(croupier::broker::subjects::HEADER_SIG)
            .expect("the table signs")
            .as_str()
            .to_string();
        let with_sig = |payload: String, sig: &str| {
            let mut headers = async_nats::HeaderMap::new();
            headers.insert(croupier::broker::subjects::HEADER_SIG, sig);
            (payload, headers)
        };
        // 1. A forged result with the real message's signature; 2. a forged view with a
        // high sequence; 3. messages missing required fields; 4. a replay of the table's
        // own last message (a valid signature, a number already served).
        let mut forged_result = real.clone();
        forged_result["type"] = "result".into();
        forged_result["n"] = (real["n"].as_u64().expect("n") + 1).into();
        forged_result["result"] = serde_json::json!({"round": 1, "forged": true});
        let mut high = real.clone();
        high["seq"] = 1_000_000_000u64.into();
        high["n"] = 1_000_000_000u64.into();
        let sends = vec![
            with_sig(forged_result.to_string(), &sig),
            with_sig(high.to_string(), "00"),
            with_sig("{\"type\":\"view\",\"seq\":5}".into(), &sig),
            with_sig("not json at all".into(), "zz"),
            // Without its Nats-Msg-Id, or the broker would drop it as a duplicate.
            with_sig(String::from_utf8_lossy(&last.payload).into_owned(), &sig),
        ];
        let mut attack_end = 0;
        for (payload, headers) in sends {
            let ack = js
                .publish_with_headers("croupier.t1.public", headers, payload.into())
                .await
                .expect("sent")
                .await
                .expect("stored: the broker is open");
            attack_end = attack_end.max(ack.sequence);
        }
        // A forged bucket value, unsigned: a relay started now must not seed from it.
        let mut forged_view = real.clone();
        forged_view["resync"] = true.into();
        forged_view["n"] = 999_999u64.into();
        attacker
            .publish("$KV.croupier_tables.t1", forged_view.to_string().into())
            .await
            .expect("sent");

        // The table publishes on past the foreign messages; the relay serves its messages
        // only, consecutive. It is judged once it has read past them: at the number of a
        // message of the table's stored after them (a relay behind the stream — under load
        // — would otherwise be judged before it reached them).
        let started = Instant::now();
        let past = loop {
            let mut stream = js.get_stream("CROUPIER_PUBLIC_t1").await.expect("stream");
            let last = stream.info().await.expect("info").state.last_sequence;
            if last > attack_end {
                let m = stream
                    .get_raw_message(last)
                    .await
                    .expect("the last message");
                if let Some(n) = serde_json::from_slice::<Value>(&m.payload)
                    .ok()
                    .and_then(|v| v["n"].as_u64())
                {
                    break n;
                }
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "the table publishes past the attack"
            );
            sleep(Duration::from_millis(100)).await;
        };
        let after = wait_relayed(&relay.addr, "t1", past.max(n + 12)).await;
        assert!(
            after < 1_000,
            "the forged high number was not served: {after}"
        );
        let (_, ready) = get(&relay.addr, "/readyz").await;
        let refused = &ready["refused"]["t1"];
        assert!(refused["unsigned"].as_u64() >= Some(4), "{ready}");
        assert!(refused["stale"].as_u64() >= Some(1), "the replay: {ready}");
        assert_eq!(
            ready["ready"], true,
            "forgeries do not take the relay out: {ready}"
        );
        assert_eq!(ready["unpinned"], serde_json::json!(["t2"]), "{ready}");
        let metrics = client::request_with(
            &relay.addr,
            "GET",
            "/metrics",
            None,
            &[],
            Duration::from_secs(5),
        )
        .await
        .expect("metrics")
        .body;
        // The series exists from the start at 0: the forged message must have counted.
        let unsigned = metrics
            .lines()
            .find_map(|l| {
                l.strip_prefix("croupier_relay_refused_total{table=\"t1\",reason=\"unsigned\"} ")
            })
            .and_then(|v| v.trim().parse::<f64>().ok());
        assert!(
            unsigned.is_some_and(|n| n >= 1.0),
            "the unsigned message was counted ({unsigned:?}): {metrics}"
        );
        let served = viewer.assert_consecutive("t1");
        assert!(
            served >= 8,
            "the viewer got the table's messages ({served})"
        );
        for m in viewer.values() {
            assert!(
                !m.to_string().contains("forged"),
                "a forged message reached a viewer: {m}"
            );
        }
        let (_, table_ready) = get(&t1.addr(), "/readyz").await;
        assert_eq!(
            table_ready["publish"]["state"], "publishing",
            "{table_ready}"
        );

        // A second relay, started after the forged bucket value and messages: it seeds
        // from nothing forged and serves consecutive messages too.
        let fresh = announced(spawn_args(&args, &dir.join("fresh.log"))).await;
        let m = wait_relayed(&fresh.addr, "t1", after).await;
        let late = Viewer::connect(&fresh.addr, "t1", None).await;
        wait_relayed(&fresh.addr, "t1", m + 5).await;
        sleep(Duration::from_millis(300)).await;
        let first = &late.values()[0];
        assert!(
            first["n"].as_u64() < Some(999_999),
            "not the forged snapshot: {first}"
        );
        late.assert_consecutive("t1");

        // t2 is not served until its key is pinned; then it is, without a restart.
        let (status, _) = get(&relay.addr, "/api/table-key?table=t2").await;
        assert_eq!(status, 404);
        assert!(
            lobby(&relay.addr, "t2").await.is_none(),
            "t2 is not served unpinned"
        );
        studio_table::pin_keys(&keys, [("t1", t1.db.as_path()), ("t2", t2.db.as_path())]);
        wait_relayed(&relay.addr, "t2", 3).await;
        let t2_viewer = Viewer::connect(&relay.addr, "t2", None).await;
        let k = lobby(&relay.addr, "t2").await.expect("listed")["n"]
            .as_u64()
            .expect("n");
        wait_relayed(&relay.addr, "t2", k + 3).await;
        sleep(Duration::from_millis(300)).await;
        t2_viewer.assert_consecutive("t2");
        t1.stop();
        t2.stop();
    })
    .await
    .expect("bounded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_and_password_in_the_url_are_used_and_never_logged() {
    timeout(Duration::from_secs(120), async {
        let Some(bin) = nats::nats_server() else {
            return;
        };
        let dir = tempfile::tempdir().expect("tempdir");
        let port = free_port();
        let store = dir.path().join("js");
        let mut server = Command::new(&bin)
            .args([
                "-js",
                "-a",
                "127.0.0.1",
                "--user",
                "tbla",
                "--pass",
                "tbla-pw",
                "-p",
            ])
            .arg(port.to_string())
            .arg("-sd")
            .arg(&store)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("nats-server");
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "nats-server listens"
            );
            sleep(Duration::from_millis(20)).await;
        }
        let url = format!("nats://tbla:tbla-pw@127.0.0.1:{port}");
        let cfg = table_config(dir.path(), "t1", &url, "");
        let log = dir.path().join("t1.log");
        let table = announced(proc::spawn_raw(&cfg, &log)).await;
        // The broker requires the user: the table publishes only if it used it.
        let started = Instant::now();
        loop {
            let (_, r) = get(&table.addr, "/readyz").await;
            if r["publish"]["state"] == "publishing" && r["publish"]["acked"].as_u64() > Some(5) {
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "the table publishes with the URL's user: {r}"
            );
            sleep(Duration::from_millis(200)).await;
        }
        assert!(table.terminate(), "stops cleanly");
        let text = std::fs::read_to_string(&log).expect("log");
        assert!(
            text.contains("tbla:***@127.0.0.1"),
            "shown redacted: {text}"
        );
        assert!(!text.contains("tbla-pw"), "the password is logged: {text}");
        let _ = server.kill();
        let _ = server.wait();
    })
    .await
    .expect("bounded");
}

#[test]
fn a_password_in_the_url_is_never_logged_and_an_exposed_credential_stops_the_table() {
    let dir = tempfile::tempdir().expect("tempdir");
    let creds = dir.path().join("t.nk");
    std::fs::write(
        &creds,
        "SUAIBDPBAUTWCWBKIO6XHQNINK5FWJW4OHLXC3HQ2KFE4PEJUA44CNHTC4\n",
    )
    .expect("write");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&creds, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let cfg = table_config(
        dir.path(),
        "t1",
        "nats://127.0.0.1:1",
        &format!("credentials = {:?}\n", creds.display().to_string()),
    );
    let out = Command::new(env!("CARGO_BIN_EXE_croupier"))
        .args(["check-config", cfg.to_str().expect("utf-8")])
        .output()
        .expect("check-config");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("chmod 600"), "{err}");
    let out = Command::new(env!("CARGO_BIN_EXE_croupier"))
        .args(["run", "--config", cfg.to_str().expect("utf-8")])
        .output()
        .expect("run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("chmod 600"), "{err}");

    // A user and password in the URL: used (a refused connection is the broker's answer,
    // not a silent anonymous one) and never written to the log.
    let cfg = table_config(dir.path(), "t2", "nats://tbla:tbla-pw@127.0.0.1:1", "");
    let mut child = Command::new(env!("CARGO_BIN_EXE_croupier"))
        .args(["run", "--config", cfg.to_str().expect("utf-8")])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run");
    std::thread::sleep(Duration::from_secs(3));
    let _ = child.kill();
    let out = child.wait_with_output().expect("output");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("tbla:***@127.0.0.1:1"),
        "the URL is shown redacted: {err}"
    );
    assert!(!err.contains("tbla-pw"), "the password is logged: {err}");
}

/// A relay that starts on a quiet table seeds its feed from the bucket's view; replays of
/// the table's own messages — the one the view was taken at and an older one, validly
/// signed — are then stale, refused and counted, never a second seed nor kept. Before, the
/// relay took every message up to the seed as its ring's back-fill for as long as it ran:
/// the replays were neither served nor counted, and each was kept in memory.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_relay_seeded_from_a_quiet_table_refuses_replays_as_stale() {
    timeout(Duration::from_secs(180), async {
        let Some(bin) = nats::nats_server() else {
            return;
        };
        let dir = tempfile::tempdir().expect("tempdir");
        let dir = dir.path();
        let broker = nats::Nats::start(&bin, dir);
        let mut t1 = studio_table::Table::new(dir, "t1", &broker.url());
        t1.start(true).await;
        let keys = dir.join("table-keys.toml");
        studio_table::pin_keys(&keys, [("t1", t1.db.as_path())]);
        let attacker = async_nats::connect(broker.url()).await.expect("connect");
        let js = jetstream::new(attacker);
        let started = Instant::now();
        loop {
            let info = js
                .get_stream("CROUPIER_PUBLIC_t1")
                .await
                .map(|s| s.cached_info().state.messages);
            if info.is_ok_and(|m| m >= 6) {
                break;
            }
            assert!(started.elapsed() < Duration::from_secs(60), "t1 publishes");
            sleep(Duration::from_millis(100)).await;
        }
        // Quiet from here: the bucket's view is the table's last word.
        t1.stop();
        let public = js.get_stream("CROUPIER_PUBLIC_t1").await.expect("stream");
        let last_seq = public.cached_info().state.last_sequence;
        let replays: Vec<_> = [last_seq, last_seq - 2]
            .into_iter()
            .map(|seq| {
                let public = public.clone();
                async move { public.get_raw_message(seq).await.expect("a message") }
            })
            .collect();
        let replays = futures::future::join_all(replays).await;
        let last_n = serde_json::from_slice::<Value>(&replays[0].payload).expect("json")["n"]
            .as_u64()
            .expect("n");

        let args = relay_args(&broker.url(), &keys);
        let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_ref()).collect();
        let relay = announced(spawn_args(&args, &dir.join("relay.log"))).await;
        assert_eq!(wait_relayed(&relay.addr, "t1", last_n).await, last_n);
        let viewer = Viewer::connect(&relay.addr, "t1", None).await;
        let js2 = jetstream::new(async_nats::connect(broker.url()).await.expect("connect"));
        for m in &replays {
            let mut headers = async_nats::HeaderMap::new();
            let sig = m
                .headers
                .get(croupier::broker::subjects::HEADER_SIG)
                .expect("the table signs");
            headers.insert(croupier::broker::subjects::HEADER_SIG, sig.as_str());
            // Without its Nats-Msg-Id, or the broker would drop it as a duplicate.
            js2.publish_with_headers("croupier.t1.public", headers, m.payload.clone())
                .await
                .expect("sent")
                .await
                .expect("stored");
        }
        let started = Instant::now();
        loop {
            let (_, ready) = get(&relay.addr, "/readyz").await;
            if ready["refused"]["t1"]["stale"].as_u64() >= Some(2) {
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "both replays are stale: {ready}"
            );
            sleep(Duration::from_millis(100)).await;
        }
        sleep(Duration::from_millis(300)).await;
        assert_eq!(
            lobby(&relay.addr, "t1").await.expect("listed")["n"].as_u64(),
            Some(last_n),
            "nothing new was served"
        );
        assert_eq!(viewer.values().len(), 1, "the viewer got its resync only");
    })
    .await
    .expect("bounded");
}
