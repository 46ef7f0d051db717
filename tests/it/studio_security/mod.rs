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

use crate::common;
use crate::nats;
use crate::pg;
use crate::proc;
use crate::public_check;
use crate::studio_table;

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

mod accounts;
mod credentials;
mod foreign_writers;
mod open_broker;
mod tls;

/// The last lines of a log file.
fn tail(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(30)..].join("\n")
}

/// A `croupier` command run to its end; its stdout.
fn croupier(args: &[&str]) -> String {
    let out = common::croupier(args, None);
    assert!(
        out.status.success(),
        "croupier {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
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
        let log = std::fs::File::create(log).expect("log");
        let args = ["-c".into(), conf.as_os_str().to_owned()];
        Broker(nats::spawn_listening_to(bin, &args, port, log.into()))
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
        ..Default::default()
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
