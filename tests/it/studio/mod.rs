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
use crate::cdp;
use crate::common;
use crate::mid_round;
use crate::nats;
use crate::proc;
use crate::public_check;
use crate::seals;
use crate::studio_table;
use crate::wallet_bots;
use crate::wallet_server;

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

mod broker;
mod relays;
mod restore_wallet;
mod timeline;

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

// A scenario's `async move` block takes only the fields it names (Rust 2021's precise
// capture) unless the type has a Drop of its own: without this, a scenario that never names
// the directory or the broker would drop them as it starts.
impl Drop for Studio {
    fn drop(&mut self) {}
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

/// Runs `scenario` on a studio of the tables `ids` (skipped without `nats-server`), all of
/// it within `secs` seconds.
async fn in_studio<F, Fut>(ids: &[&str], secs: u64, scenario: F)
where
    F: FnOnce(Studio) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    timeout(Duration::from_secs(secs), async {
        if let Some(studio) = Studio::start(ids).await {
            scenario(studio).await;
        }
    })
    .await
    .expect("bounded");
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

/// The last row on table `id`'s log stream (a fork notice is not one).
async fn last_row(js: &async_nats::jetstream::Context, id: &str) -> Value {
    let mut s = js
        .get_stream(format!("CROUPIER_LOG_{id}"))
        .await
        .expect("log stream");
    let mut seq = s.info().await.expect("info").state.last_sequence;
    loop {
        let m = s.get_raw_message(seq).await.expect("message");
        let v = serde_json::from_slice::<Value>(&m.payload).expect("json");
        if v.get("seq").is_some() {
            return v;
        }
        seq -= 1;
    }
}
