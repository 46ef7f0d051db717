//! A real `nats-server` with JetStream for a test: its own free port and store directory,
//! so the test can SIGKILL it and start it again on the same port and store.
#![allow(dead_code)]

// The skip helper, declared once at the tests' root (tests/it/main.rs).
use crate::skip;

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Where Debian's package installs it.
const CANDIDATES: [&str; 2] = ["/usr/sbin/nats-server", "/usr/bin/nats-server"];

/// The `nats-server` binary: without it a test is skipped locally, and fails under CI
/// (`CI` set), where `.ci/run` installs Debian's `nats-server`.
pub fn nats_server() -> Option<PathBuf> {
    if let Some(p) = CANDIDATES.iter().map(Path::new).find(|p| p.exists()) {
        return Some(p.to_path_buf());
    }
    if std::env::var_os("CI").is_some() {
        panic!("CI: nats-server is missing (.ci/run installs Debian's nats-server)");
    }
    skip::skipped(format_args!(
        "nats-server is not installed (apt-get install nats-server)"
    ));
    None
}

/// A running (or killed) server.
pub struct Nats {
    bin: PathBuf,
    child: Option<Child>,
    /// Its client port.
    pub port: u16,
    store: PathBuf,
}

/// A port nothing listens on now, from below the kernel's ephemeral range and never the
/// same twice in one process.
///
/// A port the kernel hands out for `bind(0)` comes from the range it also takes the local
/// ports of outgoing connections from: between the moment a test picks one and the moment
/// its server binds it, a connection (a cluster node dialling its routes, a client polling
/// another server) can take it, and the server then exits on "address in use". CI's load
/// caught a three-node cluster's node that way. Below the range only a server that names
/// its port can hold one, and the bind check sees those.
pub fn free_port() -> u16 {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let ephemeral_low = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|r| {
            r.split_whitespace()
                .next()
                .and_then(|p| p.parse::<u32>().ok())
        })
        .unwrap_or(32768);
    const LOW: u32 = 10_000;
    if ephemeral_low <= LOW + 1_000 {
        return kernel_port();
    }
    let span = ephemeral_low - LOW;
    // Each test process starts at its own place, so two suites run side by side rarely
    // try the same ports.
    let start = std::process::id().wrapping_mul(7919) % span;
    for _ in 0..span {
        let step = NEXT.fetch_add(1, Ordering::Relaxed);
        let port = LOW + (start + step) % span;
        let Ok(port) = u16::try_from(port) else {
            continue;
        };
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
    kernel_port()
}

/// A port `bind(0)` gives, released.
fn kernel_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

impl Nats {
    /// Starts `bin` with JetStream, its store under `dir`.
    pub fn start(bin: &Path, dir: &Path) -> Nats {
        let mut n = Nats {
            bin: bin.to_path_buf(),
            child: None,
            port: free_port(),
            store: dir.join("jetstream"),
        };
        n.restart();
        n
    }

    /// Its process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// `nats://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    /// SIGKILL (the store stays).
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// SIGKILL, the store deleted, started again empty on the same port: a broker that
    /// lost its store.
    pub fn wipe(&mut self) {
        self.kill();
        let _ = std::fs::remove_dir_all(&self.store);
        self.restart();
    }

    /// Starts it (again) on the same port and store; returns once it accepts connections.
    pub fn restart(&mut self) {
        self.kill();
        let args = [
            "-js".into(),
            "-a".into(),
            "127.0.0.1".into(),
            "-p".into(),
            self.port.to_string().into(),
            "-sd".into(),
            self.store.clone().into_os_string(),
        ];
        self.child = Some(spawn_listening(&self.bin, &args, self.port));
    }
}

/// Writes under `dir/studio` the configuration `croupier studio nats-config` generates for
/// `tables` (comma-separated), listening on a free loopback port, its store in `dir/js`,
/// with `more` arguments: the studio directory and the port. The server is not started
/// (`nats-server -c <studio>/nats-server.conf`).
pub fn generated_config(dir: &Path, tables: &str, more: &[&str]) -> (PathBuf, u16) {
    let studio = dir.join("studio");
    let port = free_port();
    let (out, listen, store) = (
        studio.display().to_string(),
        format!("127.0.0.1:{port}"),
        dir.join("js").display().to_string(),
    );
    let mut args = vec![
        "studio",
        "nats-config",
        "--tables",
        tables,
        "--out",
        &out,
        "--listen",
        &listen,
        "--store-dir",
        &store,
    ];
    args.extend(more);
    croupier_ok(&args);
    (studio, port)
}

/// `croupier ARGS` run to its end, which must succeed: its stdout.
pub fn croupier_ok(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_croupier"))
        .args(args)
        .output()
        .expect("croupier");
    assert!(
        out.status.success(),
        "croupier {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Starts `bin` with `args`; returns once it accepts connections on `port`. Its log goes
/// to a file in the temporary directory, shown if it does not come up.
pub fn spawn_listening(bin: &Path, args: &[std::ffi::OsString], port: u16) -> Child {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    let log = std::env::temp_dir().join(format!(
        "croupier-test-nats-{}-{}-{port}.log",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let file = std::fs::File::create(&log).expect("create the nats-server log");
    let child = spawn_listening_logged(
        bin,
        args,
        ("127.0.0.1", port),
        file.into(),
        Some(&log),
        &|_| {},
    );
    let _ = std::fs::remove_file(&log);
    child
}

/// [`spawn_listening`] on `host` (the server's own address), the command first changed by
/// `prepare` (to run it in a network namespace, say); its log goes to `log`.
pub fn spawn_listening_on(
    bin: &Path,
    args: &[std::ffi::OsString],
    (host, port): (&str, u16),
    log: &Path,
    prepare: &dyn Fn(&mut Command),
) -> Child {
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .expect("open the nats-server log");
    spawn_listening_logged(bin, args, (host, port), file.into(), Some(log), prepare)
}

/// [`spawn_listening`] with the server's log to `stderr`.
pub fn spawn_listening_to(
    bin: &Path,
    args: &[std::ffi::OsString],
    port: u16,
    stderr: Stdio,
) -> Child {
    spawn_listening_logged(bin, args, ("127.0.0.1", port), stderr, None, &|_| {})
}

fn spawn_listening_logged(
    bin: &Path,
    args: &[std::ffi::OsString],
    (host, port): (&str, u16),
    stderr: Stdio,
    log: Option<&Path>,
    prepare: &dyn Fn(&mut Command),
) -> Child {
    let mut command = Command::new(bin);
    command
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(stderr);
    prepare(&mut command);
    let mut child = command.spawn().expect("spawn nats-server");
    let said = || {
        log.and_then(|l| std::fs::read_to_string(l).ok())
            .unwrap_or_default()
    };
    let started = Instant::now();
    while TcpStream::connect((host, port)).is_err() {
        if let Ok(Some(status)) = child.try_wait() {
            panic!(
                "nats-server {args:?} exited ({status}) before it listened on {port}:\n{}",
                said()
            );
        }
        if started.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("nats-server listens on {port} within 20 s:\n{}", said());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child
}

impl Drop for Nats {
    fn drop(&mut self) {
        self.kill();
    }
}
