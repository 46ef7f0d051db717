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

use crate::floor::{accounts, FloorDb};
use crate::play::sessions;
use crate::table::config::DEFAULT_TOML;
use crate::table::TableConfig;
use crate::trust::pinned::PinnedKeys;
use crate::wallet::ledger::Ledger;
use sqlx::{Connection, PgConnection};
use std::ffi::OsString;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

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

/// How long a service may take to print its first line (a cold start on a busy machine).
const ANNOUNCE_WITHIN: Duration = Duration::from_secs(60);

/// How long a service may take to stop on SIGTERM before it is killed (a table finishes
/// its commit, the floor its batch).
const STOP_WITHIN: Duration = Duration::from_secs(15);

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

/// A process the demo started.
struct Running {
    name: String,
    child: Child,
    log: PathBuf,
}

/// What a started table offers.
struct TableUrls {
    id: String,
    game: String,
    page: String,
    player: String,
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

/// A port free on loopback now: for `nats-server`, which needs one named (the others bind
/// port 0 and say which they got).
fn free_port() -> Result<u16, DemoError> {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(io("find a free port"))
}

/// `host:port` as a browser on this machine reaches it: an address that listens everywhere
/// is reached on loopback.
fn reachable(addr: &str) -> String {
    if let Some(port) = addr.strip_prefix("0.0.0.0:") {
        format!("127.0.0.1:{port}")
    } else if let Some(port) = addr.strip_prefix("[::]:") {
        format!("[::1]:{port}")
    } else {
        addr.to_string()
    }
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

/// The address in a service's first line (`… serving http://ADDR/`, the floor's
/// `… pit page http://ADDR/`): after the last `://`.
fn announced_addr(line: &str) -> Option<String> {
    let (_, rest) = line.trim().rsplit_once("://")?;
    let addr = rest.trim_end_matches('/');
    (!addr.is_empty() && !addr.contains(char::is_whitespace)).then(|| reachable(addr))
}

/// `url` (`postgres://USER@HOST:PORT/DB?OPTIONS`) naming database `name` instead.
fn with_database(url: &str, name: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("postgres", url));
    let (rest, query) = match rest.split_once('?') {
        Some((r, q)) => (r, Some(q)),
        None => (rest, None),
    };
    let authority = rest.split_once('/').map_or(rest, |(a, _)| a);
    match query {
        Some(q) => format!("{scheme}://{authority}/{name}?{q}"),
        None => format!("{scheme}://{authority}/{name}"),
    }
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

/// Starts `program args…` in its own process group, stdout piped (for its first line),
/// stderr into `log`.
fn spawn(program: &Path, args: &[OsString], log: &Path) -> Result<Child, DemoError> {
    use std::os::unix::process::CommandExt;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .map_err(io(format!("open {}", log.display())))?;
    let parent = std::process::id();
    let mut command = Command::new(program);
    command
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(file))
        // Its own group: a Ctrl-C in the terminal reaches the demo alone, which then stops
        // the services before the broker.
        .process_group(0);
    // SAFETY: between fork and exec the closure makes two async-signal-safe system calls
    // and allocates nothing.
    unsafe {
        command.pre_exec(move || {
            // A demo that dies (even by SIGKILL) takes its children along.
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // The demo died before the line above: nobody would ever stop this one.
            if libc::getppid() as u32 != parent {
                return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
            }
            Ok(())
        });
    }
    command
        .spawn()
        .map_err(io(format!("start {}", program.display())))
}

/// Sends `signal` to `child` unless it has been reaped.
fn signal(child: &mut Child, signal: libc::c_int) {
    if matches!(child.try_wait(), Ok(None)) {
        let Ok(pid) = libc::pid_t::try_from(child.id()) else {
            return;
        };
        // SAFETY: kill(2) on a child not reaped yet, so its pid is still ours.
        unsafe {
            libc::kill(pid, signal);
        }
    }
}

/// Waits up to `within` for `child` to exit; kills it past that. Answers how it ended, and
/// whether it ended on its own.
async fn wait_or_kill(child: &mut Child, within: Duration) -> (Option<ExitStatus>, bool) {
    let started = Instant::now();
    while started.elapsed() < within {
        match child.try_wait() {
            Ok(Some(status)) => return (Some(status), true),
            Ok(None) => tokio::time::sleep(Duration::from_millis(50)).await,
            Err(_) => break,
        }
    }
    let _ = child.kill();
    (child.wait().ok(), false)
}

impl Running {
    /// Its first stdout line, within [`ANNOUNCE_WITHIN`]; then the rest of its stdout is
    /// read and dropped on a thread of its own, so a chatty child never blocks on a full
    /// pipe.
    async fn first_line(&mut self) -> Result<String, DemoError> {
        let (name, log) = (self.name.clone(), self.log.clone());
        let failed = |why: String| DemoError::Start {
            name: name.clone(),
            why,
            log: log.clone(),
        };
        let stdout = self
            .child
            .stdout
            .take()
            .ok_or_else(|| failed("its stdout was not piped".into()))?;
        let (tx, rx) = tokio::sync::oneshot::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            let mut line = String::new();
            let read = reader.read_line(&mut line).map(|_| line);
            let _ = tx.send(read);
            let _ = std::io::copy(&mut reader, &mut std::io::sink());
        });
        match tokio::time::timeout(ANNOUNCE_WITHIN, rx).await {
            Ok(Ok(Ok(line))) if !line.is_empty() => Ok(line),
            Ok(Ok(Ok(_))) | Ok(Err(_)) => {
                Err(failed("it exited before saying where it serves".into()))
            }
            Ok(Ok(Err(e))) => Err(failed(format!("its stdout: {e}"))),
            Err(_) => Err(failed(format!(
                "no address within {} s",
                ANNOUNCE_WITHIN.as_secs()
            ))),
        }
    }

    /// Where it serves, from its first line.
    async fn address(&mut self) -> Result<String, DemoError> {
        let line = self.first_line().await?;
        announced_addr(&line).ok_or_else(|| DemoError::Start {
            name: self.name.clone(),
            why: format!("no address in its first line {:?}", line.trim()),
            log: self.log.clone(),
        })
    }
}

impl Demo {
    /// Starts the croupier binary with `args` as `name`, its stderr into `<dir>/<name>.log`.
    fn start_service(&mut self, name: &str, args: Vec<OsString>) -> Result<usize, DemoError> {
        let log = self.dir.join(format!("{name}.log"));
        let child = spawn(&self.options.exe, &args, &log)?;
        self.services.push(Running {
            name: name.to_string(),
            child,
            log,
        });
        Ok(self.services.len() - 1)
    }

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

    /// `nats-server` with JetStream on a free loopback port, its store in the directory;
    /// answers its URL once it accepts connections.
    async fn start_broker(&mut self, program: &Path) -> Result<String, DemoError> {
        let port = free_port()?;
        let log = self.dir.join("nats-server.log");
        let args: Vec<OsString> = vec![
            "-js".into(),
            "-a".into(),
            "127.0.0.1".into(),
            "-p".into(),
            port.to_string().into(),
            "-sd".into(),
            self.dir.join("jetstream").into_os_string(),
        ];
        let child = spawn(program, &args, &log)?;
        let broker = self.broker.insert(Running {
            name: "nats-server".into(),
            child,
            log,
        });
        let started = Instant::now();
        while tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_err()
        {
            // The port was free a moment ago; another process may have taken it since.
            if let Ok(Some(status)) = broker.child.try_wait() {
                return Err(DemoError::Start {
                    name: broker.name.clone(),
                    why: format!("it exited ({status})"),
                    log: broker.log.clone(),
                });
            }
            if started.elapsed() > Duration::from_secs(20) {
                return Err(DemoError::Start {
                    name: broker.name.clone(),
                    why: format!("port {port} not open within 20 s"),
                    log: broker.log.clone(),
                });
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        Ok(format!("nats://127.0.0.1:{port}"))
    }

    /// The floor on a fresh database of `options.pg`'s server, with the demo pit account,
    /// taking the tables pinned in `keys`; `None` (said on stdout) when the server does not
    /// answer.
    async fn start_floor(
        &mut self,
        nats: &str,
        host: &str,
        keys: &std::path::Path,
    ) -> Result<Option<(String, String)>, DemoError> {
        let admin = self.options.pg.clone();
        let connect = tokio::time::timeout(Duration::from_secs(5), PgConnection::connect(&admin));
        let mut conn = match connect.await {
            Ok(Ok(c)) => c,
            Ok(Err(e)) => {
                say(&format!("floor: not started, PostgreSQL does not answer ({e}); start it or name one with --pg URL"));
                return Ok(None);
            }
            Err(_) => {
                say("floor: not started, PostgreSQL did not answer within 5 s; start it or name one with --pg URL");
                return Ok(None);
            }
        };
        let mut raw = [0u8; 4];
        getrandom::fill(&mut raw).map_err(|e| DemoError::Floor(e.to_string()))?;
        let name = format!("croupier_demo_{}_{}", std::process::id(), hex::encode(raw));
        // The name is ours (digits and hex), so it is safe in the statement's text.
        sqlx::query(&format!("CREATE DATABASE {name}"))
            .execute(&mut conn)
            .await
            .map_err(|e| DemoError::Floor(format!("CREATE DATABASE {name}: {e}")))?;
        let _ = conn.close().await;
        self.database = Some(name.clone());
        let url = with_database(&admin, &name);
        let secret = pit_account(&url).await?;
        let floor = self.start_service(
            "floor",
            vec![
                "floor".into(),
                "--nats".into(),
                nats.into(),
                "--database".into(),
                url.into(),
                "--bind".into(),
                any_port(host).into(),
                "--table-keys".into(),
                keys.as_os_str().to_owned(),
            ],
        )?;
        let addr = self.services[floor].address().await?;
        Ok(Some((format!("http://{addr}/floor"), secret)))
    }

    /// Until `stop`, or until a process stops on its own (an error: the demo is no longer
    /// whole).
    async fn watch(
        &mut self,
        mut stop: std::pin::Pin<&mut impl std::future::Future<Output = ()>>,
    ) -> Result<(), DemoError> {
        loop {
            tokio::select! {
                () = stop.as_mut() => return Ok(()),
                () = tokio::time::sleep(Duration::from_millis(500)) => {}
            }
            for r in self.services.iter_mut().chain(self.broker.as_mut()) {
                if let Ok(Some(status)) = r.child.try_wait() {
                    return Err(DemoError::Died {
                        name: r.name.clone(),
                        status,
                        log: r.log.clone(),
                    });
                }
            }
        }
    }

    /// Stops the services (SIGTERM, then SIGKILL past [`STOP_WITHIN`]), then the broker;
    /// drops the floor's database; removes the directory the demo made unless `--keep`.
    async fn stop(&mut self) -> Result<(), DemoError> {
        tell("stopping the demo");
        for r in &mut self.services {
            signal(&mut r.child, libc::SIGTERM);
        }
        let mut unclean = Vec::new();
        for r in &mut self.services {
            let (status, on_time) = wait_or_kill(&mut r.child, STOP_WITHIN).await;
            if !on_time || !status.is_some_and(|s| s.success()) {
                unclean.push(format!("{} ({})", r.name, r.log.display()));
            }
        }
        // The broker last: the services publish to it until they stop.
        if let Some(r) = &mut self.broker {
            signal(&mut r.child, libc::SIGTERM);
            wait_or_kill(&mut r.child, Duration::from_secs(5)).await;
        }
        if let Some(name) = self.database.take() {
            if let Err(e) = drop_database(&self.options.pg, &name).await {
                tell(&format!("the floor's database {name} was not dropped: {e}"));
            }
        }
        if !unclean.is_empty() {
            tell(&format!(
                "did not stop cleanly: {} (their logs are kept)",
                unclean.join(", ")
            ));
        }
        if self.made_dir && !self.options.keep && unclean.is_empty() {
            std::fs::remove_dir_all(&self.dir)
                .map_err(io(format!("remove {}", self.dir.display())))?;
        } else {
            tell(&format!("the demo's files are in {}", self.dir.display()));
        }
        Ok(())
    }
}

impl Drop for Demo {
    /// An error or a panic half-way must not leave a process running.
    fn drop(&mut self) {
        for r in self.services.iter_mut().chain(self.broker.as_mut()) {
            let _ = r.child.kill();
            let _ = r.child.wait();
        }
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

/// Adds the demo pit account to the floor's database `url` (migrating it first); answers
/// its new random password.
async fn pit_account(url: &str) -> Result<String, DemoError> {
    let mut raw = [0u8; 6];
    getrandom::fill(&mut raw).map_err(|e| DemoError::Floor(e.to_string()))?;
    // Random: the pit page may listen beyond loopback (`--bind-host`).
    let secret = format!("demo-{}", hex::encode(raw));
    let db = FloorDb::open(url, 1)
        .await
        .map_err(|e| DemoError::Floor(e.to_string()))?;
    accounts::add(db.pool(), PIT_BADGE, "Demo pit boss", &secret)
        .await
        .map_err(|e| DemoError::Floor(e.to_string()))?;
    db.pool().close().await;
    Ok(secret)
}

/// `DROP DATABASE name` on the server of `admin` (its sessions ended first).
async fn drop_database(admin: &str, name: &str) -> Result<(), sqlx::Error> {
    let mut conn = PgConnection::connect(admin).await?;
    sqlx::query(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        .execute(&mut conn)
        .await?;
    conn.close().await
}

/// The demo's URLs, one per line, `label: URL` (scripts and the test read them).
fn print_urls(
    dir: &Path,
    nats: &str,
    tables: &[TableUrls],
    relay: &str,
    floor: Option<&(String, String)>,
) {
    let mut out = String::new();
    out += &format!(
        "croupier studio demo in {} (each process's log is there)\n",
        dir.display()
    );
    out += &format!("broker: {nats}\n");
    for t in tables {
        out += &format!("table {} ({}): {}\n", t.id, t.game, t.page);
        out += &format!("  player's link: {}\n", t.player);
        out += &format!("  public page: http://{relay}/public?table={}\n", t.id);
    }
    // The tables seed their demo accounts on a demo start: the panels need one of them.
    let accounts: Vec<String> = crate::auth::accounts::DEMO_USERS
        .iter()
        .map(|(badge, name, _, pin)| format!("badge {badge}, PIN {pin} ({name})"))
        .collect();
    out += &format!("tables' panels: {}\n", accounts.join("; "));
    out += &format!("relay lobby: http://{relay}/\n");
    if let Some((page, secret)) = floor {
        out += &format!("pit page: {page} (badge {PIT_BADGE}, password {secret})\n");
    }
    out += "Ctrl-C stops everything.";
    say(&out);
}

/// A line (or lines) on stdout. A closed stdout must not stop the demo half-way (where
/// `println!` would panic): its processes run on, and Ctrl-C still stops them.
fn say(text: &str) {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{text}");
    let _ = stdout.flush();
}

/// A line on stderr, `croupier: `-prefixed as the other commands' messages; never a panic.
fn tell(text: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "croupier: {text}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_come_from_the_first_lines() {
        assert_eq!(
            announced_addr("croupier: table t1 (open) serving http://127.0.0.1:4321/\n"),
            Some("127.0.0.1:4321".into())
        );
        assert_eq!(
            announced_addr(
                "croupier: floor ingesting from nats://127.0.0.1:1, pit page http://0.0.0.0:99/"
            ),
            Some("127.0.0.1:99".into())
        );
        assert_eq!(announced_addr("croupier: floor ingesting from"), None);
    }

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
    fn the_floor_gets_its_own_database_on_the_same_server() {
        assert_eq!(
            with_database("postgres://postgres@127.0.0.1:5432/postgres", "d"),
            "postgres://postgres@127.0.0.1:5432/d"
        );
        assert_eq!(
            with_database("postgres://u:p@h/x?sslmode=disable", "d"),
            "postgres://u:p@h/d?sslmode=disable"
        );
        assert_eq!(with_database("postgres://h:1", "d"), "postgres://h:1/d");
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
