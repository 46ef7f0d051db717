//! Running the real `croupier` binary: spawn, read the address it announces, talk HTTP,
//! SIGKILL or SIGTERM it.
#![allow(dead_code)]

use croupier::web::client;
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// The real binary run to its end in `dir` (stdin closed): what it printed and its status.
pub fn output_in<A: AsRef<std::ffi::OsStr>>(dir: &Path, args: &[A]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_croupier"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .expect("croupier runs")
}

/// A spawned `croupier run`.
pub struct Proc {
    /// The process.
    pub child: Child,
    /// The first stdout line.
    pub announce: String,
    /// `host:port` it serves on.
    pub addr: String,
    /// Sent with every `get`/`post`: the local token (see [`spawn`]) or a session cookie
    /// (see [`Proc::login`]).
    pub headers: Vec<(String, String)>,
}

/// Spawns `croupier run --config cfg` (stderr appended to `log`) without waiting.
pub fn spawn_raw(cfg: &Path, log: &Path) -> Child {
    spawn_raw_with(cfg, log, &[])
}

/// [`spawn_raw`] with more arguments to `run` (`--init`, say).
pub fn spawn_raw_with(cfg: &Path, log: &Path, extra: &[&str]) -> Child {
    let mut args: Vec<&std::ffi::OsStr> =
        vec!["run".as_ref(), "--config".as_ref(), cfg.as_os_str()];
    args.extend(extra.iter().map(|a| std::ffi::OsStr::new(*a)));
    spawn_args(&args, log)
}

/// Spawns `croupier ARGS...` (stderr appended to `log`, stdout piped for [`announced`])
/// without waiting.
pub fn spawn_args(args: &[&std::ffi::OsStr], log: &Path) -> Child {
    command_args(args, log).spawn().expect("spawn croupier")
}

/// The command [`spawn_args`] runs, to change before spawning it.
pub fn command_args(args: &[&std::ffi::OsStr], log: &Path) -> Command {
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .expect("log file");
    let mut command = Command::new(env!("CARGO_BIN_EXE_croupier"));
    command
        .args(args)
        .env("RUST_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(log));
    command
}

/// Gives `command`'s process a hard (and soft) limit of `n` open files, as a unit
/// (`LimitNOFILE=`) or a shell might set it.
pub fn with_file_limit(command: &mut Command, n: u64) {
    use std::os::unix::process::CommandExt;
    // SAFETY: setrlimit(2) between fork and exec touches only the child.
    unsafe {
        command.pre_exec(move || {
            let lim = libc::rlimit {
                rlim_cur: n,
                rlim_max: n,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &lim) == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        });
    }
}

/// Waits for the announce line of a spawned `croupier run`.
pub async fn announced(mut child: Child) -> Proc {
    let stdout = child.stdout.take().expect("piped stdout");
    let line = tokio::time::timeout(
        Duration::from_secs(30),
        tokio::task::spawn_blocking(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            line
        }),
    )
    .await
    .expect("croupier announces its address within 30 s")
    .expect("reader thread");
    // `serving http://ADDR/`, or `https://` under TLS; the floor's line names the broker
    // first (`… from nats://…, pit page http://ADDR/`): the address is after the last.
    let addr = line
        .rsplit("://")
        .next()
        .filter(|_| line.contains("://"))
        .map(|s| s.trim().trim_end_matches('/').to_string())
        .unwrap_or_else(|| panic!("no address in {line:?}"));
    Proc {
        child,
        announce: line,
        addr,
        headers: Vec::new(),
    }
}

/// Spawns and waits for the announce line; authenticates with the service's local token
/// (`<db>.token`, written before the announce), as `croupier alarm clear` does on the
/// table's machine — it works even when the database is too damaged to log anyone in.
pub async fn spawn(cfg: &Path, log: &Path) -> Proc {
    let mut p = announced(spawn_raw(cfg, log)).await;
    let db = croupier::table::TableConfig::load(cfg)
        .expect("config")
        .store
        .path;
    p.use_local_token(&db);
    p
}

impl Drop for Proc {
    /// A test that fails half-way must not leave a table service running.
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Proc {
    /// Authenticates later requests with the local token of the database `db`.
    pub fn use_local_token(&mut self, db: &Path) {
        let token = croupier::auth::local_token::read(db).expect("the service's local token");
        self.headers = vec![("Authorization".into(), format!("Bearer {token}"))];
    }

    /// Logs in over HTTP; later requests carry the session cookie.
    pub async fn login(&mut self, badge: &str, secret: &str) {
        let body = serde_json::json!({"badge": badge, "secret": secret}).to_string();
        let reply = client::request_with(
            &self.addr,
            "POST",
            "/api/login",
            Some(&body),
            &[],
            Duration::from_secs(30),
        )
        .await
        .expect("login");
        assert_eq!(reply.status, 200, "login {badge}: {}", reply.body);
        self.headers = vec![("Cookie".into(), reply.session_cookie().expect("cookie"))];
    }

    /// Any request; returns status and body.
    pub async fn send(&self, method: &str, path: &str, body: Option<&str>) -> (u16, String) {
        let headers: Vec<(&str, &str)> = self
            .headers
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let reply = send_to(&self.addr, method, path, body, &headers).await;
        (reply.status, reply.body)
    }

    /// GET a JSON document.
    pub async fn get(&self, path: &str) -> Value {
        let (status, body) = self.send("GET", path, None).await;
        assert_eq!(status, 200, "GET {path}: {body}");
        serde_json::from_str(&body).expect("JSON")
    }

    /// POST a JSON body; returns status and body.
    pub async fn post(&self, path: &str, body: &str) -> (u16, String) {
        self.send("POST", path, Some(body)).await
    }

    /// POST a JSON body as the remote player whose launch token is `token` (this
    /// process's own credentials are left as they are); returns status and body.
    pub async fn post_as(&self, token: &str, path: &str, body: &str) -> (u16, String) {
        let bearer = format!("Bearer {token}");
        let reply = send_to(
            &self.addr,
            "POST",
            path,
            Some(body),
            &[("Authorization", bearer.as_str())],
        )
        .await;
        (reply.status, reply.body)
    }

    /// GETs `path` every 50 ms until `f` holds for the document (at most 10 s), and returns
    /// it; panics with `what` and the last document otherwise.
    pub async fn until(&self, path: &str, what: &str, f: impl Fn(&Value) -> bool) -> Value {
        for _ in 0..200 {
            let doc = self.get(path).await;
            if f(&doc) {
                return doc;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("{what}: {}", self.get(path).await);
    }

    /// SIGKILL, and reap.
    pub fn kill(self) {
        drop(self);
    }

    /// SIGTERM; returns whether it exited 0 within 15 s.
    pub fn terminate(mut self) -> bool {
        let _ = Command::new("kill")
            .arg("-TERM")
            .arg(self.child.id().to_string())
            .status();
        for _ in 0..150 {
            if let Ok(Some(status)) = self.child.try_wait() {
                return status.success();
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        false
    }
}

/// Resident memory of `pid` in KiB (`VmRSS` in `/proc/PID/status`).
pub fn rss_kb(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS")
}

/// Drops `storm` (connections `pid` holds, taken since it measured `before` KiB) and
/// asserts that `pid` gives at least half of what the storm took back within 30 s (its
/// trim runs once a second).
pub async fn assert_storm_memory_given_back<T>(pid: u32, before: u64, storm: Vec<T>) {
    tokio::time::sleep(Duration::from_secs(1)).await;
    let peak = rss_kb(pid);
    assert!(
        peak >= before + 4 * 1024,
        "the storm took too little memory to tell anything: {before} → {peak} KiB"
    );
    let held = storm.len();
    drop(storm);
    let halfway = before + (peak - before) / 2;
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let mut now = rss_kb(pid);
    while now > halfway && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(500)).await;
        now = rss_kb(pid);
    }
    assert!(
        now <= halfway,
        "memory not given back: {before} KiB before, {peak} KiB with {held} connections, \
         {now} KiB 30 s after they left (halfway is {halfway})"
    );
}

/// A raw WebSocket upgrade of `path` (`/ws/public?table=T`): the answer's status and the
/// open connection — a viewer that never reads, the lightest a storm can be.
pub async fn raw_upgrade(addr: &str, path: &str) -> (u16, tokio::net::TcpStream) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut s = tokio::net::TcpStream::connect(addr).await.expect("connect");
    s.write_all(
        format!(
            "GET {path} HTTP/1.1\r\nHost: croupier\r\nUpgrade: websocket\r\n\
             Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\
             Sec-WebSocket-Version: 13\r\n\r\n"
        )
        .as_bytes(),
    )
    .await
    .expect("handshake");
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = s.read(&mut buf).await.expect("read");
        assert!(n > 0, "closed during the handshake");
        head.extend_from_slice(&buf[..n]);
    }
    let status = String::from_utf8_lossy(&head)
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .expect("status");
    (status, s)
}

/// A request to the server at `addr` (`host:port`) with `headers`, answered within 30 s.
pub async fn send_to(
    addr: &str,
    method: &str,
    path: &str,
    body: Option<&str>,
    headers: &[(&str, &str)],
) -> client::Reply {
    client::request_with(addr, method, path, body, headers, Duration::from_secs(30))
        .await
        .unwrap_or_else(|e| panic!("{method} {path}: {e}"))
}
