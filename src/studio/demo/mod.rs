//! `croupier studio demo`: the whole studio on one machine, in one command, for evaluation
//! (issue #35 item 4).
//!
//! It starts, each as a process of its own (a studio *is* separate processes, and the demo
//! shows exactly the ones a studio runs): a `nats-server` with JetStream on a free port,
//! three simulated tables of different games publishing to it (`croupier run`), a relay
//! (`croupier relay`) and, when PostgreSQL answers, the floor (`croupier floor`) on a fresh
//! database with a demo pit account. Every process binds port 0 or a port just found free,
//! so the demo never publishes into a broker that already runs on the machine. It prints
//! every URL, then waits for Ctrl-C (SIGINT), SIGTERM or SIGHUP, stops the services, then
//! the broker, drops the database and removes its directory.
//!
//! The children live in their own process group, so a Ctrl-C in the terminal reaches the
//! demo alone and the demo stops them in order (services before the broker they publish
//! to); each child also gets SIGTERM if the demo itself dies (`PR_SET_PDEATHSIG`), so a
//! killed demo leaves nothing running.
//!
//! By file: `children` starts, watches and stops the processes; `database` makes, fills
//! and drops the floor's PostgreSQL database; `output` is what the demo prints. What stays
//! here is the order of it all and the tables' configurations.

mod children;
mod database;
mod output;

use crate::play::sessions;
use crate::table::config::DEFAULT_TOML;
use crate::table::TableConfig;
use crate::trust::pinned::PinnedKeys;
use crate::wallet::ledger::Ledger;
use children::Running;
use output::{print_urls, say, TableUrls};
use std::path::{Path, PathBuf};
use std::process::ExitStatus;

/// Where Debian's package installs `nats-server`, looked at after `PATH` (`/usr/sbin` is
/// not on an ordinary user's `PATH`).
const NATS_CANDIDATES: [&str; 2] = ["/usr/sbin/nats-server", "/usr/bin/nats-server"];

/// The demo's tables: id, the name shown, and the built-in variant. Three games that the
/// table's demo players deal on their own (a common draw waits for remote players, so
/// `multihand` would stand still).
const TABLES: [(&str, &str, &str); 3] = [
    ("demo-deluxe", "Demo: Deluxe", "deluxe"),
    ("demo-ultimate", "Demo: Ultimate", "ultimate"),
    ("demo-caribbean", "Demo: Caribbean 21", "caribbean21"),
];

/// The PostgreSQL server tried when `--pg` is not given (Debian's `postgresql`, user
/// `postgres`, trust on loopback).
pub const DEFAULT_PG: &str = "postgres://postgres@127.0.0.1:5432/postgres";

/// The demo pit account's badge.
pub const PIT_BADGE: &str = "100";

/// The remote player every table gets, with a link to its `/play` page.
const PLAYER: &str = "demo-player";

/// What `croupier studio demo` was asked for.
#[derive(Debug, Clone)]
pub struct DemoOptions {
    /// The `croupier` binary the services run from (the running one).
    pub exe: PathBuf,
    /// The `nats-server` binary; default: the first on `PATH`, else Debian's paths.
    pub nats_server: Option<PathBuf>,
    /// Use this directory (kept at the end) instead of a new temporary one.
    pub dir: Option<PathBuf>,
    /// Keep the temporary directory at the end (its logs, databases, broker store).
    pub keep: bool,
    /// The address the tables, the relay and the floor listen on (port 0 each); the broker
    /// stays on loopback whatever it is, since it runs without authentication.
    pub bind_host: String,
    /// The PostgreSQL server for the floor: a URL to a database the user may
    /// `CREATE DATABASE` from (the demo's own database is made and dropped there).
    pub pg: String,
}

/// Why the demo could not start or did not stop cleanly.
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    /// No `nats-server` binary.
    #[error("nats-server is not installed: not on PATH, nor in /usr/sbin or /usr/bin (Debian: apt-get install nats-server; or name it with --nats-server PATH)")]
    NatsServerMissing,
    /// The `nats-server` named is no file.
    #[error("--nats-server {0}: no such file")]
    NatsServerNotFound(PathBuf),
    /// A file or process operation failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// The built-in table configuration no longer has a line the demo changes.
    #[error("the built-in table configuration has no `{0}` line to change")]
    Config(String),
    /// A generated table configuration does not load.
    #[error("table {table}: {why}")]
    Table {
        /// The table.
        table: String,
        /// Why.
        why: String,
    },
    /// A process did not start or did not announce itself.
    #[error("{name} did not start: {why} (its log: {log})")]
    Start {
        /// The process.
        name: String,
        /// Why.
        why: String,
        /// Its stderr.
        log: PathBuf,
    },
    /// A process stopped while the demo ran.
    #[error("{name} stopped on its own ({status}); its log: {log}")]
    Died {
        /// The process.
        name: String,
        /// How it ended.
        status: ExitStatus,
        /// Its stderr.
        log: PathBuf,
    },
    /// The floor's database could not be prepared.
    #[error("the floor's database: {0}")]
    Floor(String),
}

fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> DemoError {
    let what = what.into();
    move |source| DemoError::Io { what, source }
}

/// The `nats-server` binary: `named` if given, else the first on `PATH`, else Debian's
/// paths.
pub fn find_nats_server(named: Option<&Path>) -> Result<PathBuf, DemoError> {
    if let Some(path) = named {
        return if path.is_file() {
            Ok(path.to_path_buf())
        } else {
            Err(DemoError::NatsServerNotFound(path.to_path_buf()))
        };
    }
    let on_path = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default();
    on_path
        .into_iter()
        .map(|d| d.join("nats-server"))
        .chain(NATS_CANDIDATES.iter().map(PathBuf::from))
        .find(|p| p.is_file())
        .ok_or(DemoError::NatsServerMissing)
}

/// Waits for what ends the demo: Ctrl-C (SIGINT), SIGTERM, or SIGHUP (a closed terminal:
/// the demo is nothing to keep alive without one, and stopping it cleanly beats leaving its
/// children to their death signal). The handlers are installed when this is called.
pub fn stop_signal() -> impl std::future::Future<Output = ()> {
    use tokio::signal::unix::{signal, SignalKind};
    let signals: Vec<_> = [
        SignalKind::interrupt(),
        SignalKind::terminate(),
        SignalKind::hangup(),
    ]
    .into_iter()
    .filter_map(|k| signal(k).ok())
    .collect();
    async move {
        if signals.is_empty() {
            return std::future::pending().await;
        }
        let waits = signals
            .into_iter()
            .map(|mut s| Box::pin(async move { s.recv().await }));
        futures::future::select_all(waits).await;
    }
}

/// The demo while it runs: what it started, and what to undo.
struct Demo {
    options: DemoOptions,
    dir: PathBuf,
    /// Whether the demo made `dir` (and so removes it).
    made_dir: bool,
    broker: Option<Running>,
    services: Vec<Running>,
    /// The floor's database on the server `options.pg`, dropped at the end.
    database: Option<String>,
}

/// Runs the demo until `stop` resolves (see [`stop_signal`]); prints its URLs on stdout.
pub async fn run(
    options: DemoOptions,
    stop: impl std::future::Future<Output = ()>,
) -> Result<(), DemoError> {
    let nats = find_nats_server(options.nats_server.as_deref())?;
    let (dir, made_dir) = match &options.dir {
        Some(d) => {
            std::fs::create_dir_all(d).map_err(io(format!("create {}", d.display())))?;
            (d.clone(), false)
        }
        None => (temp_dir()?, true),
    };
    let mut demo = Demo {
        options,
        dir,
        made_dir,
        broker: None,
        services: Vec::new(),
        database: None,
    };
    let mut stop = std::pin::pin!(stop);
    // A stop while starting stops what has started so far.
    let started = tokio::select! {
        started = demo.start(&nats) => Some(started),
        () = &mut stop => None,
    };
    let outcome = match started {
        Some(Ok(())) => demo.watch(stop).await,
        Some(Err(e)) => Err(e),
        None => Ok(()),
    };
    let stopped = demo.stop().await;
    outcome.and(stopped)
}

/// A new private directory under the system's temporary one.
fn temp_dir() -> Result<PathBuf, DemoError> {
    use std::os::unix::fs::DirBuilderExt;
    let mut raw = [0u8; 6];
    getrandom::fill(&mut raw).map_err(|e| DemoError::Io {
        what: "random name".into(),
        source: std::io::Error::other(e.to_string()),
    })?;
    let dir = std::env::temp_dir().join(format!("croupier-demo-{}", hex::encode(raw)));
    // 0700: the tables' databases, keys and tokens are in it.
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&dir)
        .map_err(io(format!("create {}", dir.display())))?;
    Ok(dir)
}

/// `host` with port 0 (any free port), an IPv6 address in brackets.
fn any_port(host: &str) -> String {
    if host.contains(':') && !host.starts_with('[') {
        format!("[{host}]:0")
    } else {
        format!("{host}:0")
    }
}

/// Whether `host` (an address or a name) is this machine alone.
fn is_loopback(host: &str) -> bool {
    host == "localhost"
        || host
            .trim_matches(['[', ']'])
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// `text` with its one line `from` replaced by `to`; an error when `from` is missing (the
/// built-in configuration changed under the demo).
fn replace_line(text: &str, from: &str, to: &str) -> Result<String, DemoError> {
    if text.contains(from) {
        Ok(text.replacen(from, to, 1))
    } else {
        Err(DemoError::Config(from.to_string()))
    }
}

/// Table `id`'s configuration: the built-in one with its own id, name, game, database
/// under `dir`, port 0 on `host`, publishing to `nats`.
fn table_toml(
    dir: &Path,
    (id, name, variant): (&str, &str, &str),
    host: &str,
    nats: &str,
) -> Result<String, DemoError> {
    let db = dir.join(format!("{id}.db"));
    let mut text = DEFAULT_TOML.to_string();
    for (from, to) in [
        ("id = \"table-1\"".to_string(), format!("id = {id:?}")),
        (
            "name = \"Demo table\"".to_string(),
            format!("name = {name:?}"),
        ),
        (
            "variant = \"deluxe\"".to_string(),
            format!("variant = {variant:?}"),
        ),
        (
            "path = \"data/croupier.db\"".to_string(),
            format!("path = {:?}", db.display().to_string()),
        ),
        (
            "bind = \"127.0.0.1:8080\"".to_string(),
            format!("bind = {:?}", any_port(host)),
        ),
    ] {
        text = replace_line(&text, &from, &to)?;
    }
    Ok(text + &format!("\n[publish]\nnats_url = {nats:?}\n"))
}

impl Demo {
    /// Everything, in order: broker, tables (and their players), relay, floor; then the
    /// URLs.
    async fn start(&mut self, nats_server: &Path) -> Result<(), DemoError> {
        let nats = self.start_broker(nats_server).await?;
        let host = self.options.bind_host.clone();
        // The tables start together (each has a slow first start: its store, its key, its
        // streams) and are read one after the other.
        let mut started = Vec::new();
        for table in TABLES {
            let path = self.dir.join(format!("{}.toml", table.0));
            let text = table_toml(&self.dir, table, &host, &nats)?;
            std::fs::write(&path, &text).map_err(io(format!("write {}", path.display())))?;
            let config = TableConfig::load(&path).map_err(|e| DemoError::Table {
                table: table.0.into(),
                why: e.to_string(),
            })?;
            let index = self.start_service(
                table.0,
                vec!["run".into(), "--config".into(), path.into_os_string()],
            )?;
            started.push((index, config, table));
        }
        let mut tables = Vec::new();
        for (index, config, (id, _, variant)) in started {
            let addr = self.services[index].address().await?;
            let page = format!("http://{addr}/");
            let player = player_link(&config, &page)
                .await
                .map_err(|why| DemoError::Table {
                    table: id.into(),
                    why: format!("the demo player's link: {why}"),
                })?;
            tables.push(TableUrls {
                id: id.into(),
                game: crate::engine::Variant::built_in_name(variant)
                    .unwrap_or(variant)
                    .to_string(),
                page,
                player,
            });
        }
        // The relay serves only tables whose keys it pins; each table made its key at its
        // first start, before it announced itself.
        let keys = self.dir.join("table-keys.toml");
        pin_keys(&keys, &self.dir)?;
        let relay = self.start_service(
            "relay",
            vec![
                "relay".into(),
                "--nats".into(),
                nats.clone().into(),
                "--bind".into(),
                any_port(&host).into(),
                "--table-keys".into(),
                keys.clone().into_os_string(),
            ],
        )?;
        let relay = self.services[relay].address().await?;
        let floor = self.start_floor(&nats, &host, &keys).await?;
        if !is_loopback(&host) {
            // Everyone on the network may log in with the demo accounts (their PINs are in
            // the README) and play with the demo players' money.
            say(&format!("warning: listening on {host}: the demo accounts' PINs are public, so use only a trusted network"));
        }
        print_urls(&self.dir, &nats, &tables, &relay, floor.as_ref());
        Ok(())
    }
}

/// The table's demo player (added once, with 1,000.00) and a new launch link to its
/// `/play` page at `page`.
async fn player_link(config: &TableConfig, page: &str) -> Result<String, String> {
    let pool = crate::auth::open_pool(&config.store.path)
        .await
        .map_err(|e| e.to_string())?;
    let ledger = Ledger::new(pool.clone());
    // A directory used again (`--dir`) has the player already.
    if ledger
        .player(PLAYER)
        .await
        .map_err(|e| e.to_string())?
        .is_none()
    {
        let balance = config.table.currency().parse("1000")?;
        ledger.add_player(PLAYER, "Demo player", balance).await?;
    }
    let token = sessions::open(&pool, PLAYER, &config.table.id, config.play.launch_hours)
        .await
        .map_err(|e| e.to_string())?;
    pool.close().await;
    Ok(sessions::link(page, &token))
}

/// Writes the relays' keys file pinning every demo table's public key, read from the key
/// file beside its database.
fn pin_keys(path: &Path, dir: &Path) -> Result<(), DemoError> {
    let mut pinned = PinnedKeys::default();
    for (id, _, _) in TABLES {
        let file = crate::trust::keys::path_for(&dir.join(format!("{id}.db")));
        let keys = crate::trust::TableKeys::load(&file).map_err(|e| DemoError::Table {
            table: id.into(),
            why: format!("its key: {e}"),
        })?;
        pinned.insert(id, keys.verifying_key());
    }
    std::fs::write(path, pinned.to_text()).map_err(io(format!("write {}", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_hosts_are_quiet() {
        for host in ["127.0.0.1", "::1", "[::1]", "localhost", "127.0.0.2"] {
            assert!(is_loopback(host), "{host}");
        }
        for host in ["0.0.0.0", "::", "192.168.1.4", "demo.example"] {
            assert!(!is_loopback(host), "{host}");
        }
    }

    #[test]
    fn every_table_config_loads_with_its_own_game_and_no_fixed_port() {
        let dir = std::env::temp_dir();
        for table in TABLES {
            let text = table_toml(&dir, table, "127.0.0.1", "nats://127.0.0.1:1").unwrap();
            let config = TableConfig::parse("demo", &text).unwrap();
            assert_eq!(config.table.id, table.0);
            assert_eq!(config.http.bind, "127.0.0.1:0");
            assert!(text.contains(&format!("variant = {:?}", table.2)));
        }
    }
}
