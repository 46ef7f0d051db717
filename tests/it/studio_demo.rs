//! `croupier studio demo` (issue #35 item 4), the real binary: it prints every URL, each
//! answers (every table's page and its player's link, the relay's lobby listing the three
//! games, the public pages and, with PostgreSQL, the pit page's login with the demo
//! account), and one SIGINT stops every process it started, drops the floor's database and
//! removes its directory.
//!
//! Needs Debian's `nats-server` (skipped locally without it, failing under `CI`); the
//! floor part needs PostgreSQL on 127.0.0.1:5432 (`CROUPIER_TEST_PG` overrides the server;
//! required under `CI`).

use crate::nats;

use croupier::web::client;
use sqlx::{Connection, PgConnection, Row};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What the demo printed.
#[derive(Debug, Default)]
struct Printed {
    dir: PathBuf,
    /// Table id → (game, page, player's link, public page).
    tables: BTreeMap<String, (String, String, String, String)>,
    lobby: String,
    /// The pit page, badge and password.
    pit: Option<(String, String, String)>,
}

/// Reads the demo's lines up to `Ctrl-C stops everything.`.
fn parse(lines: &[String]) -> Printed {
    let mut p = Printed::default();
    let mut current: Option<String> = None;
    let after = |line: &str, tag: &str| line.split_once(tag).map(|(_, r)| r.trim().to_string());
    for line in lines {
        if let Some(rest) = line.strip_prefix("croupier studio demo in ") {
            p.dir = PathBuf::from(rest.split(" (").next().expect("dir"));
        } else if let Some(rest) = line.strip_prefix("table ") {
            // `table ID (GAME): URL`
            let (id, rest) = rest.split_once(" (").expect("table line");
            let (game, page) = rest.split_once("): ").expect("table line");
            p.tables.insert(
                id.into(),
                (game.into(), page.into(), String::new(), String::new()),
            );
            current = Some(id.into());
        } else if line.starts_with("  ") {
            // A table's own lines, under it: its player's link and its public page.
            let t = p
                .tables
                .get_mut(current.as_deref().expect("a table"))
                .expect("t");
            if let Some(link) = after(line, "player's link: ") {
                t.2 = link;
            } else if let Some(page) = after(line, "public page: ") {
                t.3 = page;
            }
        } else if let Some(lobby) = line.strip_prefix("relay lobby: ") {
            p.lobby = lobby.trim().into();
        } else if let Some(rest) = line.strip_prefix("pit page: ") {
            // `pit page: URL (badge B, password S)`
            let (url, rest) = rest.split_once(" (badge ").expect("pit line");
            let (badge, rest) = rest.split_once(", password ").expect("pit line");
            p.pit = Some((url.into(), badge.into(), rest.trim_end_matches(')').into()));
        }
    }
    p
}

/// `http://ADDR/PATH…` → (`ADDR`, `/PATH…`).
fn split_url(url: &str) -> (String, String) {
    let rest = url.strip_prefix("http://").expect("an http URL");
    match rest.find('/') {
        Some(i) => (rest[..i].to_string(), rest[i..].to_string()),
        None => (rest.to_string(), "/".to_string()),
    }
}

async fn request(url: &str, method: &str, body: Option<&str>) -> (u16, String) {
    let (addr, path) = split_url(url);
    let r = client::request_with(&addr, method, &path, body, &[], Duration::from_secs(10))
        .await
        .unwrap_or_else(|e| panic!("{method} {url}: {e}"));
    (r.status, r.body)
}

/// The processes whose parent is `pid`, with their command lines.
fn children_of(pid: u32) -> Vec<(u32, String)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Some(child) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{child}/stat")) else {
            continue;
        };
        // `PID (COMM) STATE PPID …`: COMM may hold spaces, so after the last ')'.
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, r)| r.split_whitespace().nth(1))
            .and_then(|p| p.parse::<u32>().ok());
        if ppid == Some(pid) {
            found.push((child, cmdline(child).unwrap_or_default()));
        }
    }
    found
}

fn cmdline(pid: u32) -> Option<String> {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .ok()
        .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
}

/// Every process whose command line names `dir`.
fn naming(dir: &Path) -> Vec<(u32, String)> {
    let dir = dir.display().to_string();
    std::fs::read_dir("/proc")
        .expect("/proc")
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| Some((pid, cmdline(pid)?)))
        .filter(|(_, c)| c.contains(&dir))
        .collect()
}

/// The PostgreSQL server the floor part runs on.
fn pg_server() -> String {
    std::env::var("CROUPIER_TEST_PG")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432".into())
}

/// A demo started by a test, its URLs printed.
struct Demo {
    child: std::process::Child,
    pid: u32,
    printed: Printed,
    /// Its stdout up to the last line.
    text: String,
    stderr: PathBuf,
    /// Its TMPDIR: nothing of it outlives the test.
    scratch: tempfile::TempDir,
}

/// A demo a failed check left running is stopped as Ctrl-C stops it (its processes and
/// its directory with it), and killed if it does not stop.
impl Drop for Demo {
    fn drop(&mut self) {
        if self.stop_within(Duration::from_secs(30)).is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

impl Demo {
    /// `croupier studio demo ARGS`, once it printed its last line (within 90 s: a cold
    /// start of six processes on a busy two-core machine).
    async fn start(args: &[&str]) -> Demo {
        let scratch = tempfile::tempdir().expect("temp dir");
        let stderr = scratch.path().join("demo.log");
        let mut child = Command::new(env!("CARGO_BIN_EXE_croupier"))
            .args(["studio", "demo"])
            .args(args)
            .env("TMPDIR", scratch.path())
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(std::fs::File::create(&stderr).expect("log")))
            .spawn()
            .expect("spawn croupier studio demo");
        let pid = child.id();
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = Vec::new();
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let last = line.starts_with("Ctrl-C stops everything");
                lines.push(line);
                if last {
                    break;
                }
            }
            let _ = tx.send(lines);
        });
        let lines = tokio::task::spawn_blocking(move || rx.recv_timeout(Duration::from_secs(90)))
            .await
            .expect("reader");
        let lines = match lines {
            Ok(lines) if lines.last().is_some_and(|l| l.starts_with("Ctrl-C")) => lines,
            other => {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "the demo printed no full list of URLs: {other:?}\n{}",
                    std::fs::read_to_string(&stderr).unwrap_or_default()
                );
            }
        };
        let printed = parse(&lines);
        let text = lines.join("\n");
        // Built before anything is checked: a failed check drops it, and the drop stops
        // everything the demo started (a failed check once left a studio running).
        let demo = Demo {
            child,
            pid,
            printed,
            text,
            stderr,
            scratch,
        };
        let (printed, text) = (&demo.printed, &demo.text);
        assert!(
            printed.dir.starts_with(demo.scratch.path()),
            "its own temporary directory: {text}"
        );
        assert!(printed.dir.is_dir(), "{text}");
        // No fixed port: every URL names a port the system gave.
        // (The port itself, not a prefix of it: the system may give 42221.)
        for url in text.split_whitespace().filter(|w| w.contains("://")) {
            let authority = url.split("://").nth(1).and_then(|r| r.split('/').next());
            let port = authority
                .and_then(|a| a.rsplit_once(':'))
                .and_then(|(_, p)| p.parse::<u16>().ok());
            assert!(port.is_some(), "a port in {url}");
            assert!(
                !matches!(port, Some(4222 | 8080 | 8090 | 8070)),
                "a fixed port in {url}"
            );
        }
        demo
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    /// SIGINT to the demo, as Ctrl-C, unless it has already exited: its exit status once it
    /// exits, `None` if it is still running after `limit`.
    fn stop_within(&mut self, limit: Duration) -> Option<std::process::ExitStatus> {
        if let Ok(Some(status)) = self.child.try_wait() {
            return Some(status);
        }
        // SAFETY: kill(2) on our own child, not reaped yet.
        unsafe {
            libc::kill(self.pid as libc::pid_t, libc::SIGINT);
        }
        let started = Instant::now();
        while started.elapsed() < limit {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        None
    }

    /// SIGINT, as Ctrl-C: it exits 0 within 30 s, and none of the processes it started
    /// (`expected` of them: the broker, three tables, the relay and the floor if it ran)
    /// is left, nor its directory.
    async fn interrupt(mut self, expected: usize) {
        let children = children_of(self.pid);
        assert_eq!(children.len(), expected, "{children:#?}");
        assert!(
            children.iter().any(|(_, c)| c.contains("nats-server")),
            "{children:#?}"
        );
        let stopped = tokio::task::block_in_place(|| self.stop_within(Duration::from_secs(30)));
        let Some(status) = stopped else {
            panic!("the demo stops within 30 s of SIGINT\n{}", self.log());
        };
        assert!(status.success(), "exit {status}\n{}", self.log());
        for (child, command) in &children {
            assert_ne!(
                cmdline(*child).as_deref(),
                Some(command.as_str()),
                "still running after the demo: {child} {command}"
            );
        }
        assert_eq!(
            naming(&self.printed.dir),
            Vec::new(),
            "processes naming its directory"
        );
        assert!(!self.printed.dir.exists(), "its directory is removed");
        assert!(
            !self.log().contains("did not stop cleanly"),
            "{}",
            self.log()
        );
        let _ = &self.scratch;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_command_starts_the_studio_and_one_sigint_stops_all_of_it() {
    let Some(_) = nats::nats_server() else {
        return;
    };
    let pg = format!("{}/postgres", pg_server());
    let demo = Demo::start(&["--pg", &pg]).await;
    let (printed, text) = (&demo.printed, &demo.text);

    // Three tables of three games; each page and each player's link answers, and the link's
    // token opens the demo player's session at that table.
    let mut games: Vec<&str> = printed.tables.values().map(|t| t.0.as_str()).collect();
    assert_eq!(printed.tables.len(), 3, "{text}");
    games.sort_unstable();
    games.dedup();
    assert_eq!(games.len(), 3, "three different games: {text}");
    for (id, (_, page, link, public)) in &printed.tables {
        let (status, body) = request(page, "GET", None).await;
        assert_eq!(status, 200, "{id}'s page: {body}");
        let (play, token) = link.split_once("#t=").expect("a launch link");
        assert!(play.starts_with(page.trim_end_matches('/')), "{link}");
        assert_eq!(request(play, "GET", None).await.0, 200, "{id}'s /play");
        let pool = croupier::auth::open_pool(&printed.dir.join(format!("{id}.db")))
            .await
            .expect("the table's database");
        assert_eq!(
            croupier::play::sessions::player(&pool, token, id)
                .await
                .as_deref(),
            Some("demo-player"),
            "{id}'s link opens the demo player's session"
        );
        pool.close().await;
        assert!(
            public.starts_with(printed.lobby.trim_end_matches('/')),
            "{public}"
        );
        assert!(public.ends_with(&format!("/public?table={id}")), "{public}");
        assert_eq!(request(public, "GET", None).await.0, 200, "{public}");
    }

    // The tables' panels take the demo accounts the demo names.
    assert!(
        text.contains("tables' panels: badge 101, PIN 1111 (Demo dealer)"),
        "{text}"
    );
    for (id, (_, page, _, _)) in &printed.tables {
        let login = format!("{page}api/login");
        let body = serde_json::json!({"badge": "101", "secret": "1111"}).to_string();
        let (status, body) = request(&login, "POST", Some(&body)).await;
        assert_eq!(status, 200, "{id}: the demo dealer logs in: {body}");
    }

    // The relay's lobby lists all three with their games, once their first views arrive.
    assert_eq!(
        request(&printed.lobby, "GET", None).await.0,
        200,
        "the lobby page"
    );
    let api = format!("{}api/tables", printed.lobby);
    let expected: Vec<(String, String)> = printed
        .tables
        .iter()
        .map(|(id, t)| (id.clone(), t.0.clone()))
        .collect();
    let started = Instant::now();
    loop {
        let (status, body) = request(&api, "GET", None).await;
        let listed: Vec<(String, String)> = serde_json::from_str::<serde_json::Value>(&body)
            .ok()
            .and_then(|v| v.as_array().cloned())
            .unwrap_or_default()
            .iter()
            .map(|t| {
                (
                    t["table"].as_str().unwrap_or("").to_string(),
                    t["game"].as_str().unwrap_or("").to_string(),
                )
            })
            .collect();
        if status == 200 && expected.iter().all(|e| listed.contains(e)) {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the lobby lists the three tables: {status} {body}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    // The pit page and its demo account, when PostgreSQL answered (always under CI).
    match &printed.pit {
        Some((page, badge, secret)) => {
            assert_eq!(request(page, "GET", None).await.0, 200, "{page}");
            let login = page.replace("/floor", "/floor/api/login");
            let wrong = serde_json::json!({"badge": badge, "secret": "not-the-password"});
            let (status, _) = request(&login, "POST", Some(&wrong.to_string())).await;
            assert_eq!(status, 401, "a wrong password");
            let right = serde_json::json!({"badge": badge, "secret": secret});
            let (status, body) = request(&login, "POST", Some(&right.to_string())).await;
            assert_eq!(status, 200, "the demo account logs in: {body}");
        }
        None => {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI: the floor did not start (PostgreSQL at {pg}): {text}\n{}",
                demo.log()
            );
            assert!(text.contains("floor: not started"), "{text}");
        }
    }

    let floor = printed.pit.is_some();
    let pid = demo.pid;
    demo.interrupt(if floor { 6 } else { 5 }).await;

    // Its database is dropped.
    if floor {
        let mut conn = PgConnection::connect(&pg).await.expect("PostgreSQL");
        let left = sqlx::query("SELECT datname FROM pg_database WHERE datname LIKE $1")
            .bind(format!("croupier_demo_{pid}_%"))
            .fetch_all(&mut conn)
            .await
            .expect("pg_database");
        let names: Vec<String> = left.iter().map(|r| r.get(0)).collect();
        assert_eq!(
            names,
            Vec::<String>::new(),
            "the floor's database is dropped"
        );
    }
}

/// Without PostgreSQL the demo says so and runs the rest; it still stops cleanly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_postgresql_the_floor_is_left_out_with_a_clear_line() {
    let Some(_) = nats::nats_server() else {
        return;
    };
    // A port nothing listens on: the one a listener just gave back.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a port")
        .port();
    let pg = format!("postgres://postgres@127.0.0.1:{port}/postgres");
    let demo = Demo::start(&["--pg", &pg]).await;
    assert!(demo.printed.pit.is_none(), "{}", demo.text);
    assert!(
        demo.text
            .contains("floor: not started, PostgreSQL does not answer"),
        "{}",
        demo.text
    );
    assert_eq!(demo.printed.tables.len(), 3, "{}", demo.text);
    demo.interrupt(5).await;
}

/// A missing nats-server is a clear error, and nothing is left behind.
#[test]
fn a_missing_nats_server_is_a_clear_error() {
    let scratch = tempfile::tempdir().expect("temp dir");
    let out = Command::new(env!("CARGO_BIN_EXE_croupier"))
        .args(["studio", "demo", "--nats-server"])
        .arg(scratch.path().join("no-nats-server"))
        .env("TMPDIR", scratch.path())
        .output()
        .expect("run croupier studio demo");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--nats-server") && stderr.contains("no such file"),
        "{stderr}"
    );
    let left: Vec<_> = std::fs::read_dir(scratch.path())
        .expect("scratch")
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(left.is_empty(), "nothing made: {left:?}");
}
