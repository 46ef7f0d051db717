//! A table of the studio deployment for the broker tests (`tests/it/studio/`,
//! `tests/it/floor/`): the real binary on the default config with `[publish]` on, as a demo
//! table and its quiet twin (the same table with no demo players), which the tests start
//! at the end so the log stops growing and the publisher can catch up.
#![allow(dead_code)]

use super::proc::{announced, command_args, Proc};
use croupier::table::TableConfig;
use std::path::{Path, PathBuf};

/// A change to a table's command before it starts.
pub type Prepare = Box<dyn Fn(&mut std::process::Command) + Send + Sync>;

/// One table: its two configurations, its database, its log file and, while it runs, the
/// process.
pub struct Table {
    pub id: String,
    pub demo: PathBuf,
    pub idle: PathBuf,
    pub db: PathBuf,
    pub log: PathBuf,
    pub proc: Option<Proc>,
    /// Applied to its command before each start (a network namespace, say).
    pub prepare: Option<Prepare>,
}

/// Writes table `id`'s configuration under `dir`: fast demo pace, a one-second dispute
/// window (so `final` messages come too), publishing to `nats`.
pub fn table_config(dir: &Path, id: &str, nats: &str, demo: bool) -> PathBuf {
    let db = dir.join(format!("{id}.db"));
    let text = croupier::table::config::DEFAULT_TOML
        .replace("id = \"table-1\"", &format!("id = \"{id}\""))
        .replace(
            "path = \"data/croupier.db\"",
            &format!("path = {:?}", db.display().to_string()),
        )
        .replace("bind = \"127.0.0.1:8080\"", "bind = \"127.0.0.1:0\"")
        .replace("pace_ms = 400", "pace_ms = 25")
        .replace("players = true", &format!("players = {demo}"))
        .replace("window_seconds = 5", "window_seconds = 1")
        + &format!("\n[publish]\nnats_url = \"{nats}\"\nmax_lag = 5\n");
    let path = dir.join(format!("{id}-{}.toml", if demo { "demo" } else { "idle" }));
    std::fs::write(&path, text).expect("write config");
    TableConfig::load(&path).expect("valid config");
    path
}

/// Writes a relays' keys file at `path` pinning each table's public key, read from the key
/// file beside its database (the table makes it at its first start).
pub fn pin_keys<'a>(path: &Path, tables: impl IntoIterator<Item = (&'a str, &'a Path)>) {
    pin_public_keys(
        path,
        tables.into_iter().map(|(id, db)| {
            let keys = croupier::trust::TableKeys::load(&croupier::trust::keys::path_for(db))
                .expect("the table's key file");
            (id, keys.public_hex())
        }),
    );
}

/// Writes the keys file at `path` pinning each table's public key (hex).
pub fn pin_public_keys<'a>(path: &Path, tables: impl IntoIterator<Item = (&'a str, String)>) {
    let mut pinned = croupier::trust::pinned::PinnedKeys::default();
    for (id, hex_key) in tables {
        let key = croupier::trust::attest::verifying_key(&hex_key).expect("key");
        pinned.insert(id, key);
    }
    std::fs::write(path, pinned.to_text()).expect("write the keys file");
}

/// Pins `tables`' keys in `dir/table-keys.toml` (what the relays and the floor read) and
/// returns its path.
pub fn keys_file(dir: &Path, tables: &[&Table]) -> std::path::PathBuf {
    let path = dir.join("table-keys.toml");
    pin_keys(
        &path,
        tables.iter().map(|t| (t.id.as_str(), t.db.as_path())),
    );
    path
}

impl Table {
    /// Every committed row: (seq, kind, at_ms, hash, payload).
    pub async fn rows(&self) -> Vec<(i64, String, i64, Vec<u8>, String)> {
        let db = croupier::store::outbox::OutboxDb::open(&self.db, &self.id)
            .await
            .expect("open");
        db.rows_after(0, u32::MAX)
            .await
            .expect("rows")
            .into_iter()
            .map(|r| {
                (
                    r.row.seq as i64,
                    r.kind,
                    r.row.at_ms,
                    hex::decode(&r.hash).expect("hex"),
                    r.payload,
                )
            })
            .collect()
    }

    /// Table `id` under `dir`, publishing to `nats`; not started.
    pub fn new(dir: &Path, id: &str, nats: &str) -> Table {
        Table {
            id: id.into(),
            demo: table_config(dir, id, nats, true),
            idle: table_config(dir, id, nats, false),
            db: dir.join(format!("{id}.db")),
            log: dir.join(format!("{id}.log")),
            proc: None,
            prepare: None,
        }
    }

    /// Table `id` playing `game` with its streams on three replicas (a cluster's).
    pub fn clustered(dir: &Path, id: &str, game: &str, nats: &str) -> Table {
        let t = Table::new(dir, id, nats);
        t.edit(&[("variant = \"deluxe\"", &format!("variant = \"{game}\""))]);
        t.append("replicas = 3\n");
        t
    }

    /// Starts it, dealing (`demo`) or quiet.
    pub async fn start(&mut self, demo: bool) {
        self.spawn(demo, &[]).await;
    }

    /// Starts `run` with `extra` arguments on its dealing or quiet configuration.
    async fn spawn(&mut self, demo: bool, extra: &[&str]) {
        let cfg = if demo { &self.demo } else { &self.idle };
        let mut args: Vec<&std::ffi::OsStr> =
            vec!["run".as_ref(), "--config".as_ref(), cfg.as_os_str()];
        args.extend(extra.iter().map(std::ffi::OsStr::new));
        let mut command = command_args(&args, &self.log);
        if let Some(prepare) = &self.prepare {
            prepare(&mut command);
        }
        let child = command.spawn().expect("spawn croupier");
        self.proc = Some(announced(child).await);
    }

    /// Both configurations with `edits` (text replacements, each of which must find its
    /// text) applied.
    pub fn edit(&self, edits: &[(&str, &str)]) {
        for cfg in [&self.demo, &self.idle] {
            let mut text = std::fs::read_to_string(cfg).expect("config");
            for (from, to) in edits {
                assert!(text.contains(from), "{from} is in the configuration");
                text = text.replace(from, to);
            }
            std::fs::write(cfg, text).expect("write config");
            TableConfig::load(cfg).expect("valid config");
        }
    }

    /// Both configurations with `text` (TOML sections) appended.
    pub fn append(&self, text: &str) {
        for cfg in [&self.demo, &self.idle] {
            let whole = std::fs::read_to_string(cfg).expect("config") + text;
            std::fs::write(cfg, whole).expect("write config");
            TableConfig::load(cfg).expect("valid config");
        }
    }

    /// Its database gone (the Pi's card replaced, say) while its key file and anchor
    /// stay: started with `run --init`, a new table with a new log — dealing (`demo`) or
    /// quiet — beside the old key.
    pub async fn start_anew(&mut self, demo: bool) {
        assert!(self.proc.is_none(), "stopped first");
        for ext in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{ext}", self.db.display()));
        }
        self.spawn(demo, &["--init"]).await;
    }

    /// Where it serves.
    pub fn addr(&self) -> String {
        self.proc.as_ref().expect("running").addr.clone()
    }

    /// Restarted as its quiet twin (no demo players), returning once its log has stopped
    /// growing: a round left provisional gets its window again and then its `final` row.
    pub async fn quiesce(&mut self) {
        self.stop();
        self.start(false).await;
        let mut rows = self.rows().await.len();
        loop {
            tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
            let now = self.rows().await.len();
            if now == rows {
                return;
            }
            rows = now;
        }
    }

    /// SIGKILL.
    pub fn kill(&mut self) {
        if let Some(p) = self.proc.take() {
            p.kill();
        }
    }

    /// SIGTERM; it must stop cleanly.
    pub fn stop(&mut self) {
        if let Some(p) = self.proc.take() {
            assert!(p.terminate(), "{} stops cleanly on SIGTERM", self.id);
        }
    }
}
