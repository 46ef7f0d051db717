//! The Debian package in a booted systemd (issue #62): `cargo deb` builds the amd64
//! package, a Debian root file system made by `debootstrap` (cached under
//! `target/deb-test/`) boots under `systemd-nspawn --boot`, and inside it the package is
//! installed, configured, upgraded, removed and purged with the commands the guide gives
//! (docs/src/operations.md, "Deploy on a Raspberry Pi"), while the table's service is
//! checked: ready, its status line, the watchdog restarting a hung table, a consistent
//! log after SIGTERM and `systemctl stop`, the sandbox refusing writes outside its
//! directories; the relay's and the floor's units start with their configuration, and the
//! floor takes the table's published log into PostgreSQL.
//!
//! Needs root, `cargo deb` (cargo-deb), debootstrap, systemd-nspawn (systemd-container),
//! Debian's mirror, the host's `nats-server` (bind-mounted into the container, where it
//! runs on the container's own loopback) and the host's PostgreSQL trusting user
//! `postgres` on its socket (`/var/run/postgresql`, bind-mounted: the container has no
//! network; a database of the test's own is made there and dropped): `.ci/run` installs
//! them; under CI a missing tool fails the test, elsewhere it is skipped with a note.

use crate::skip;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The Debian release the root file system is made of: the Raspberry Pi OS of the guide
/// is Bookworm's.
const SUITE: &str = "bookworm";
const MIRROR: &str = "http://deb.debian.org/debian";
/// debootstrap's packages on top of minbase: an init, D-Bus for systemctl, curl for the
/// probes.
const INCLUDE: &str = "systemd,systemd-sysv,dbus,curl";
/// Host paths of the tools.
const DEBOOTSTRAP: &str = "/usr/sbin/debootstrap";
const NSPAWN: &str = "/usr/bin/systemd-nspawn";
const NATS_SERVER: &str = "/usr/sbin/nats-server";
const PSQL: &str = "/usr/bin/psql";
/// The host's PostgreSQL socket directory, bind-mounted read-only at /run/postgresql.
const PG_SOCKETS: &str = "/var/run/postgresql";

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn work_dir() -> PathBuf {
    repo().join("target/deb-test")
}

/// Whether this machine can run the test: root, cargo-deb, debootstrap, systemd-nspawn.
/// Without them the test is skipped locally and fails under CI (`CI` set), where
/// `.ci/run` installs them.
fn tools_present() -> bool {
    let mut missing = Vec::new();
    if !nix::unistd::Uid::effective().is_root() {
        missing.push("root (systemd-nspawn boots a container)".to_string());
    }
    for tool in [DEBOOTSTRAP, NSPAWN] {
        if !Path::new(tool).exists() {
            missing.push(format!(
                "{tool} (apt-get install debootstrap systemd-container)"
            ));
        }
    }
    let cargo_deb = Command::new(env!("CARGO"))
        .args(["deb", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !cargo_deb {
        missing.push("cargo deb (cargo install cargo-deb --locked)".to_string());
    }
    if !Path::new(NATS_SERVER).exists() {
        missing.push(format!("{NATS_SERVER} (apt-get install nats-server)"));
    }
    let postgres = Command::new(PSQL)
        .args(["-h", PG_SOCKETS, "-U", "postgres", "-Atc", "SELECT 1"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !postgres {
        missing.push(format!(
            "PostgreSQL on {PG_SOCKETS} trusting user postgres (psql; pg_hba.conf `local all postgres trust`)"
        ));
    }
    if missing.is_empty() {
        return true;
    }
    if std::env::var_os("CI").is_some() {
        panic!("CI: missing {} (.ci/run installs them)", missing.join(", "));
    }
    skip::skipped(format_args!("missing {}", missing.join(", ")));
    false
}

/// Runs `cmd`, panicking with its output unless it succeeds; returns its stdout.
fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?}: {}\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The amd64 packages of the release build (`target/release/croupier`, which `.ci/run`'s
/// `cargo deb` has just built): as version `0.1.0-1`, and the same build as a newer
/// `0.1.0-2` for the upgrade, in `target/deb-test/debs/`. `--no-build`: a cargo started
/// from a test would wait for the build directory's lock, which `cargo test` holds.
fn build_packages() -> (PathBuf, PathBuf) {
    let binary = repo().join("target/release/croupier");
    assert!(
        binary.exists(),
        "no {} to package: build it first (cargo deb, or cargo build --release)",
        binary.display()
    );
    let debs = work_dir().join("debs");
    let _ = std::fs::remove_dir_all(&debs);
    std::fs::create_dir_all(&debs).expect("debs dir");
    let build = |version: &str| {
        let out = debs.join(format!("croupier_{version}_amd64.deb"));
        run(Command::new(env!("CARGO"))
            .current_dir(repo())
            .args([
                "deb",
                "--no-build",
                "--fast",
                "--deb-version",
                version,
                "-o",
            ])
            .arg(&out));
        out
    };
    (build("0.1.0-1"), build("0.1.0-2"))
}

/// A database of the test's own on the host's PostgreSQL (through its socket), for the
/// floor in the container; dropped at the end, whatever happened.
struct FloorDatabase {
    name: String,
}

impl FloorDatabase {
    fn create() -> FloorDatabase {
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis())
            .unwrap_or(0);
        let db = FloorDatabase {
            name: format!("croupier_deb_test_{}_{stamp}", std::process::id()),
        };
        db.psql("postgres", &format!("CREATE DATABASE {}", db.name));
        db
    }

    /// Runs `sql` in `database` as postgres: its rows, unaligned.
    fn psql(&self, database: &str, sql: &str) -> String {
        run(Command::new(PSQL).args([
            "-h", PG_SOCKETS, "-U", "postgres", "-d", database, "-Atc", sql,
        ]))
    }

    /// Runs `sql` in the floor's database.
    fn query(&self, sql: &str) -> String {
        self.psql(&self.name, sql)
    }
}

impl Drop for FloorDatabase {
    fn drop(&mut self) {
        let _ = Command::new(PSQL)
            .args(["-h", PG_SOCKETS, "-U", "postgres", "-d", "postgres", "-Atc"])
            .arg(format!(
                "DROP DATABASE IF EXISTS {} WITH (FORCE)",
                self.name
            ))
            .output();
    }
}

/// The cached base root file system (debootstrap of [`SUITE`] minbase with [`INCLUDE`]),
/// made once: a partial one is never taken (made aside, renamed when complete).
fn base_rootfs() -> PathBuf {
    let base = work_dir().join(format!("rootfs-{SUITE}"));
    if base.join("usr/bin/systemctl").exists() {
        return base;
    }
    let partial = work_dir().join(format!("rootfs-{SUITE}.partial"));
    let _ = std::fs::remove_dir_all(&partial);
    std::fs::create_dir_all(work_dir()).expect("work dir");
    let started = Instant::now();
    run(Command::new(DEBOOTSTRAP)
        .args(["--variant=minbase", &format!("--include={INCLUDE}"), SUITE])
        .arg(&partial)
        .arg(MIRROR));
    std::fs::rename(&partial, &base).expect("rename the root file system");
    eprintln!("debootstrap {SUITE}: {:.0?}", started.elapsed());
    base
}

/// A booted container: systemd-nspawn's child, its init's pid for nsenter.
struct Machine {
    nspawn: Child,
    leader: u32,
    root: PathBuf,
}

impl Machine {
    /// Copies the base root file system and boots it, with `debs` read-only at /debs.
    fn boot(base: &Path, debs: &Path) -> Machine {
        let root = work_dir().join("machine");
        if root.exists() {
            run(Command::new("rm").arg("-rf").arg(&root));
        }
        run(Command::new("cp")
            .args(["-a", "--reflink=auto"])
            .arg(base)
            .arg(&root));
        let log = std::fs::File::create(work_dir().join("machine.log")).expect("log");
        let nspawn = Command::new(NSPAWN)
            .arg("-D")
            .arg(&root)
            // --register=no: no machined here; --keep-unit: no scope of its own either.
            // --private-network: its ports (8080, 8090) are its own; apt needs no network,
            // the package's dependencies are all in the base system.
            .args([
                "--boot",
                "--register=no",
                "--keep-unit",
                "--private-network",
            ])
            .arg("--machine=croupier-test")
            .arg(format!("--bind-ro={}:/debs", debs.display()))
            // The studio's services the floor needs, the host's: its broker's binary (run
            // inside, on the container's loopback) and its PostgreSQL's socket.
            .arg(format!(
                "--bind-ro={NATS_SERVER}:/usr/local/sbin/nats-server"
            ))
            .arg(format!("--bind-ro={PG_SOCKETS}:/run/postgresql"))
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log"))
            .stderr(log)
            .spawn()
            .expect("systemd-nspawn");
        let mut machine = Machine {
            leader: 0,
            nspawn,
            root,
        };
        // The container's init is nspawn's child (nspawn forks once more for it).
        let deadline = Instant::now() + Duration::from_secs(60);
        while machine.leader == 0 {
            assert!(Instant::now() < deadline, "no init under systemd-nspawn");
            if let Some(pid) = descendant_named(machine.nspawn.id(), "systemd") {
                machine.leader = pid;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        machine.wait_for(Duration::from_secs(90), "the boot", |m| {
            let state = m.sh_status("systemctl is-system-running").1;
            matches!(state.trim(), "running" | "degraded")
        });
        machine
    }

    /// Runs `script` with `sh -c` inside the container (all its namespaces, a clean
    /// environment): (success, stdout + stderr).
    fn sh_status(&self, script: &str) -> (bool, String) {
        let out = Command::new("nsenter")
            .args(["-t", &self.leader.to_string(), "-a", "--"])
            .args([
                "env",
                "-i",
                "PATH=/usr/sbin:/usr/bin:/sbin:/bin",
                "LANG=C.UTF-8",
            ])
            .args(["DEBIAN_FRONTEND=noninteractive", "sh", "-c", script])
            .output()
            .expect("nsenter");
        let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
        text.push_str(&String::from_utf8_lossy(&out.stderr));
        (out.status.success(), text)
    }

    /// As [`Machine::sh_status`], panicking unless it succeeds: its output.
    fn sh(&self, script: &str) -> String {
        let (ok, out) = self.sh_status(script);
        assert!(ok, "in the container: {script}\n{out}");
        out
    }

    /// Polls `check` until it holds, panicking with the journal after `limit`.
    fn wait_for(&self, limit: Duration, what: &str, check: impl Fn(&Machine) -> bool) {
        let deadline = Instant::now() + limit;
        loop {
            if check(self) {
                return;
            }
            if Instant::now() > deadline {
                let journal = self.sh_status("journalctl --no-pager -n 60").1;
                panic!("{what}: not within {limit:?}\n{journal}");
            }
            std::thread::sleep(Duration::from_millis(300));
        }
    }

    /// The table service's main pid (0 when not running).
    fn main_pid(&self, unit: &str) -> u32 {
        self.sh(&format!("systemctl show -P MainPID {unit}"))
            .trim()
            .parse()
            .unwrap_or(0)
    }

    /// Whether `url` answers 200 inside the container.
    fn http_ok(&self, url: &str) -> bool {
        self.sh_status(&format!("curl -sf -o /dev/null {url}")).0
    }
}

impl Drop for Machine {
    fn drop(&mut self) {
        // Powered off from inside; nspawn then exits. Killed only if it does not.
        let _ = self.sh_status("systemctl poweroff");
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if matches!(self.nspawn.try_wait(), Ok(Some(_))) {
                let _ = std::fs::remove_dir_all(&self.root);
                return;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        let _ = self.nspawn.kill();
        let _ = self.nspawn.wait();
    }
}

/// A descendant of `pid` whose command is `name` (breadth first).
fn descendant_named(pid: u32, name: &str) -> Option<u32> {
    let mut queue = vec![pid];
    while let Some(p) = queue.pop() {
        let tasks = std::fs::read_dir(format!("/proc/{p}/task")).ok()?;
        for task in tasks.flatten() {
            let children =
                std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
            for child in children
                .split_whitespace()
                .filter_map(|c| c.parse::<u32>().ok())
            {
                let comm =
                    std::fs::read_to_string(format!("/proc/{child}/comm")).unwrap_or_default();
                if comm.trim() == name {
                    return Some(child);
                }
                queue.push(child);
            }
        }
    }
    None
}

/// The table's configuration as the guide has the admin edit it for this machine: the
/// simulated shoe and buttons (a container has neither a shoe nor GPIO).
const EDIT_CONFIG: &str = "sed -i -e 's/^simulated = false/simulated = true/' \
     -e 's/^driver = \"rppal\"/driver = \"fake\"/' \
     -e 's/^decks = 0/decks = 6/' /etc/croupier/table.toml";

const READYZ: &str = "http://127.0.0.1:8080/readyz";

/// The log checks the guide gives after a stop: the audit chain, and a verified backup
/// (integrity and every hash chain), as the service's user.
fn log_is_consistent(m: &Machine, name: &str) {
    m.sh(&format!(
        "runuser -u croupier -- croupier audit verify --config /etc/croupier/table.toml && \
         runuser -u croupier -- croupier backup /var/lib/croupier/backups/{name}.db --config /etc/croupier/table.toml"
    ));
}

/// The newest modification time under `path` (a file, or a directory walked whole).
fn newest(path: &Path) -> Option<std::time::SystemTime> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_dir() {
        return meta.modified().ok();
    }
    std::fs::read_dir(path)
        .ok()?
        .filter_map(|e| e.ok())
        .filter_map(|e| newest(&e.path()))
        .max()
}

/// Whether `target/release/croupier` is there and newer than every source it is built
/// from. The test packages that binary (`--no-build`, see [`build_packages`]), so a
/// missing or stale one is skipped locally with what to run, and fails under CI, where
/// `.ci/run`'s `cargo deb` builds it first.
fn release_binary_fresh() -> bool {
    let binary = repo().join("target/release/croupier");
    let built = std::fs::metadata(&binary).and_then(|m| m.modified()).ok();
    // What the binary is compiled from, as cargo rebuilds it: not `Cargo.toml` (its
    // packaging sections change no build, and cargo then leaves the binary as it is) nor
    // the configuration files the binary does not embed.
    let sources = [
        "src",
        "drivers/src",
        "dealer-ui",
        "config/table.toml",
        "config/variants",
        "Cargo.lock",
        "build.rs",
    ]
    .iter()
    .filter_map(|p| newest(&repo().join(p)))
    .max();
    let why = match (built, sources) {
        (None, _) => "is missing",
        (Some(b), Some(s)) if s > b => "is older than its sources",
        _ => return true,
    };
    if std::env::var_os("CI").is_some() {
        panic!(
            "CI: {} {why} (.ci/run's cargo deb builds it)",
            binary.display()
        );
    }
    skip::skipped(format_args!(
        "{} {why}; run `cargo deb` first",
        binary.display()
    ));
    false
}

#[test]
fn the_package_installs_runs_upgrades_and_purges_in_a_booted_systemd() {
    if !tools_present() || !release_binary_fresh() {
        return;
    }
    let started = Instant::now();
    let (first, second) = build_packages();
    eprintln!("cargo deb: {:.0?}", started.elapsed());
    let base = base_rootfs();
    // Made before the machine, so dropped after it (the floor disconnected).
    let floor_db = FloorDatabase::create();
    let booting = Instant::now();
    let m = Machine::boot(&base, first.parent().expect("debs dir"));
    eprintln!("boot: {:.0?}", booting.elapsed());
    let deb1 = format!(
        "/debs/{}",
        first.file_name().expect("name").to_string_lossy()
    );
    let deb2 = format!(
        "/debs/{}",
        second.file_name().expect("name").to_string_lossy()
    );

    // Install: asks nothing; the user, the directories, the conffiles, the units.
    m.sh(&format!("apt-get install -y {deb1}"));
    m.sh("id croupier | grep -q '(dialout)' && id croupier | grep -q '(gpio)'");
    let conf = m.sh("stat -c '%U:%G %a' /etc/croupier/table.toml /var/lib/croupier");
    assert_eq!(conf, "root:croupier 640\ncroupier:croupier 750\n", "{conf}");
    assert_eq!(
        m.sh("stat -c '%U:%G %a' /etc/croupier/relay.env /etc/croupier/floor.env"),
        "root:root 600\nroot:root 600\n"
    );
    assert_eq!(
        m.sh("systemctl is-enabled croupier.service croupier-backup.timer"),
        "enabled\nenabled\n"
    );
    assert_eq!(
        m.sh_status("systemctl is-enabled croupier-relay.service croupier-floor.service")
            .1,
        "disabled\ndisabled\n"
    );
    // Not started before it is configured: no log, no key yet.
    assert_eq!(
        m.sh_status("systemctl is-active croupier.service").1.trim(),
        "inactive"
    );
    m.sh("test ! -e /var/lib/croupier/croupier.db");
    // The package carries no key: the table makes its own at its first start.
    assert!(
        !m.sh("dpkg -L croupier").contains(".key"),
        "a key in the package"
    );

    // Configure the shoe and buttons, start: ready, with its status line.
    m.sh(EDIT_CONFIG);
    m.sh("croupier check-config /etc/croupier/table.toml");
    m.sh("systemctl start croupier.service");
    m.wait_for(Duration::from_secs(60), "/readyz 200", |m| {
        m.http_ok(READYZ)
    });
    let status = m
        .sh_status("systemctl status --no-pager croupier.service")
        .1;
    assert!(
        status.contains("Status: \"table table-1 serving http://127.0.0.1:8080/\""),
        "systemctl status: {status}"
    );
    m.sh("test -s /var/lib/croupier/croupier.db.key");
    let key_sum = m.sh("sha256sum /var/lib/croupier/croupier.db.key");
    // An account, as the guide adds them (the secret on stdin).
    m.sh("echo 4711-4711 | runuser -u croupier -- croupier user add --config /etc/croupier/table.toml \
          --badge sup-1 --name 'Sam Super' --role supervisor --secret-stdin");

    // The sandbox: in the service's own mount namespace, even root cannot write outside
    // its directories (ProtectSystem=strict, ProtectHome=yes: read-only or inaccessible
    // mounts, whoever writes), and its user can write its state directory. /tmp and
    // /var/tmp are writable but its own (PrivateTmp=yes): a file there is not the
    // machine's.
    let pid = m.main_pid("croupier.service");
    assert_ne!(pid, 0);
    for path in [
        "/usr/bin/croupier-x",
        "/etc/x",
        "/var/lib/dpkg/x",
        "/var/log/x",
        "/root/x",
        "/home/x",
        "/boot/x",
    ] {
        let (ok, out) = m.sh_status(&format!("nsenter -t {pid} -m -- sh -c 'echo x > {path}'"));
        assert!(!ok, "the service's namespace let root write {path}: {out}");
        m.sh(&format!("test ! -e {path}"));
    }
    m.sh(&format!(
        "nsenter -t {pid} -m -- sh -c 'echo x > /tmp/croupier-private' && test ! -e /tmp/croupier-private"
    ));
    // Its configuration directory is writable in its namespace (ConfigurationDirectory=),
    // but not by its user: root's, group croupier read-only (the package's statoverride).
    let (ok, out) = m.sh_status(&format!(
        "nsenter -t {pid} -m -S $(id -u croupier) -G $(id -g croupier) -- sh -c 'echo x > /etc/croupier/x'"
    ));
    assert!(!ok, "the service's user wrote /etc/croupier/x: {out}");
    m.sh(&format!(
        "nsenter -t {pid} -m -S $(id -u croupier) -G $(id -g croupier) -- sh -c 'echo x > /var/lib/croupier/probe && rm /var/lib/croupier/probe'"
    ));
    let proc_status = m.sh(&format!(
        "grep -E '^(NoNewPrivs|CapEff):' /proc/{pid}/status"
    ));
    assert!(proc_status.contains("NoNewPrivs:\t1"), "{proc_status}");
    assert!(
        proc_status.contains("CapEff:\t0000000000000000"),
        "{proc_status}"
    );

    // A hung table (SIGSTOP): the watchdog (10 s) kills it, systemd starts a new one.
    let hung = Instant::now();
    m.sh(&format!("kill -STOP {pid}"));
    m.wait_for(
        Duration::from_secs(45),
        "a new table after the watchdog",
        |m| {
            let now = m.main_pid("croupier.service");
            now != 0 && now != pid && m.http_ok(READYZ)
        },
    );
    eprintln!("watchdog restart: {:.0?}", hung.elapsed());
    let journal = m.sh("journalctl --no-pager -u croupier.service");
    assert!(journal.contains("Watchdog timeout"), "{journal}");

    // SIGTERM: a clean stop (no restart: Restart=on-failure), the log consistent.
    let pid = m.main_pid("croupier.service");
    m.sh(&format!("kill -TERM {pid}"));
    m.wait_for(Duration::from_secs(30), "inactive after SIGTERM", |m| {
        m.sh_status("systemctl is-active croupier.service").1.trim() == "inactive"
    });
    log_is_consistent(&m, "after-sigterm");
    m.sh("systemctl start croupier.service");
    m.wait_for(Duration::from_secs(60), "/readyz 200", |m| {
        m.http_ok(READYZ)
    });
    m.sh("systemctl stop croupier.service");
    log_is_consistent(&m, "after-stop");
    m.sh("systemctl start croupier.service");
    m.wait_for(Duration::from_secs(60), "/readyz 200", |m| {
        m.http_ok(READYZ)
    });

    // Upgrade: the database, the key, the account and the edited conffile stay; the
    // table is restarted on the new build.
    let edited = m.sh("sha256sum /etc/croupier/table.toml");
    let pid = m.main_pid("croupier.service");
    m.sh(&format!("apt-get install -y {deb2}"));
    assert!(m.sh("dpkg-query -W croupier").contains("0.1.0-2"));
    assert_eq!(m.sh("sha256sum /etc/croupier/table.toml"), edited);
    assert_eq!(m.sh("sha256sum /var/lib/croupier/croupier.db.key"), key_sum);
    assert!(m
        .sh("runuser -u croupier -- croupier user list --config /etc/croupier/table.toml")
        .contains("sup-1"));
    m.wait_for(Duration::from_secs(60), "the upgraded table ready", |m| {
        let now = m.main_pid("croupier.service");
        now != 0 && now != pid && m.http_ok(READYZ)
    });

    // The relay: configured, enabled, started; it listens (its broker need not be up).
    // The table's key pinned for the relay, as `croupier table-key` prints the line.
    m.sh("runuser -u croupier -- croupier table-key --config /etc/croupier/table.toml > /etc/croupier/table-keys.toml \
          && chgrp croupier /etc/croupier/table-keys.toml && chmod 0640 /etc/croupier/table-keys.toml");
    m.sh("echo 'CROUPIER_RELAY_ARGS=--nats nats://127.0.0.1:4222 --table-keys /etc/croupier/table-keys.toml --bind 127.0.0.1:8090' > /etc/croupier/relay.env");
    m.sh("systemctl enable --now croupier-relay.service || { journalctl --no-pager -u croupier-relay -n 30; exit 1; }");
    m.wait_for(Duration::from_secs(30), "the relay's /healthz", |m| {
        m.http_ok("http://127.0.0.1:8090/healthz")
    });
    let status = m
        .sh_status("systemctl status --no-pager croupier-relay.service")
        .1;
    assert!(
        status.contains("Status: \"relay serving http://127.0.0.1:8090/\""),
        "systemctl status: {status}"
    );

    // The floor: a broker with JetStream on the container's loopback (the host's
    // nats-server, as a transient unit), the table publishing to it ([publish]), the
    // floor configured (the broker, its database, the pinned table keys), enabled,
    // started; READY means its database migrated, the broker connected and the pit page
    // listening. Then the floor's database holds the table's signed rows, each checked.
    m.sh(
        "systemd-run --unit=nats-server --property=StateDirectory=nats \
          /usr/local/sbin/nats-server --jetstream --store_dir /var/lib/nats \
          --addr 127.0.0.1 --port 4222 --http_port 8222",
    );
    m.wait_for(Duration::from_secs(30), "the broker's /healthz", |m| {
        m.http_ok("http://127.0.0.1:8222/healthz")
    });
    // Its demo players bet and the simulated shoe deals: rounds, rows to publish.
    m.sh(
        "sed -i 's/^players = false/players = true/' /etc/croupier/table.toml \
          && printf '\n[publish]\nnats_url = \"nats://127.0.0.1:4222\"\n' >> /etc/croupier/table.toml \
          && croupier check-config /etc/croupier/table.toml && systemctl restart croupier.service",
    );
    let published = |m: &Machine| -> Option<u64> {
        let (ok, body) = m.sh_status(&format!("curl -sf {READYZ}"));
        let r: serde_json::Value = serde_json::from_str(&body).ok().filter(|_| ok)?;
        let p = &r["publish"];
        if p["state"] == "publishing" && p["lag"] == 0 {
            p["acked"].as_u64()
        } else {
            None
        }
    };
    m.wait_for(Duration::from_secs(60), "the table's log published", |m| {
        published(m).is_some_and(|acked| acked > 0)
    });
    m.sh(&format!(
        "echo 'CROUPIER_FLOOR_ARGS=--nats nats://127.0.0.1:4222 --table-keys /etc/croupier/table-keys.toml \
         --database postgres://postgres@localhost/{}?host=/run/postgresql --bind 127.0.0.1:8091' > /etc/croupier/floor.env",
        floor_db.name
    ));
    m.sh("systemctl enable --now croupier-floor.service || { journalctl --no-pager -u croupier-floor -n 30; exit 1; }");
    let status = m
        .sh_status("systemctl status --no-pager croupier-floor.service")
        .1;
    assert!(
        status.contains("Status: \"floor ingesting\""),
        "systemctl status: {status}"
    );
    assert!(m.http_ok("http://127.0.0.1:8091/floor"));
    // The table deals on: a sample may catch a row between its commit and its
    // acknowledgement (lag 1), so the count is taken at a moment with nothing waiting.
    let acked = std::cell::Cell::new(0);
    m.wait_for(
        Duration::from_secs(60),
        "the table publishing, nothing waiting",
        |m| {
            acked.set(published(m).unwrap_or(0));
            acked.get() > 0
        },
    );
    let acked = acked.get();
    let floor_rows = || {
        floor_db.query(
            "SELECT t.head_seq, count(e.seq), count(e.seq) FILTER (WHERE e.verified = 'ok') \
             FROM floor_tables t LEFT JOIN floor_events e USING (table_id) \
             WHERE t.table_id = 'table-1' GROUP BY t.head_seq",
        )
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let rows = floor_rows();
        let counts: Vec<u64> = rows
            .trim()
            .split('|')
            .filter_map(|n| n.parse().ok())
            .collect();
        if let [head, all, ok] = counts[..] {
            if head >= acked {
                assert_eq!(
                    (all, ok),
                    (head, head),
                    "the floor's rows of table-1: {rows}"
                );
                break;
            }
        }
        assert!(
            Instant::now() < deadline,
            "the floor's database behind the table's {acked} published rows: {rows:?}\n{}",
            m.sh_status("journalctl --no-pager -u croupier-floor -n 40")
                .1
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    eprintln!("floor: {acked} rows of table-1 in PostgreSQL");

    // Remove: the service and the binary go; configuration and data stay.
    m.sh("systemctl disable --now croupier-relay.service croupier-floor.service");
    m.sh("apt-get remove -y croupier");
    assert_eq!(
        m.sh_status("systemctl is-active croupier.service").1.trim(),
        "inactive"
    );
    m.sh("test ! -e /usr/bin/croupier && test -e /etc/croupier/table.toml && test -s /var/lib/croupier/croupier.db && test -s /var/lib/croupier/croupier.db.key");
    // Purge, not told to remove data: configuration goes, the table's data stays.
    m.sh("apt-get purge -y croupier");
    m.sh("test ! -e /etc/croupier/table.toml && test -s /var/lib/croupier/croupier.db && test -s /var/lib/croupier/croupier.db.key");
    // Installed again, it is the same table (its key and database); purged with the
    // admin's word, the data goes too.
    m.sh(&format!("apt-get install -y {deb2}"));
    assert_eq!(m.sh("sha256sum /var/lib/croupier/croupier.db.key"), key_sum);
    m.sh("echo 'croupier croupier/purge-data boolean true' | debconf-set-selections");
    m.sh("apt-get purge -y croupier");
    // Its conffiles go, a file the admin added (the relay's pinned keys) stays.
    m.sh("test ! -e /var/lib/croupier && test ! -e /etc/croupier/table.toml && test ! -e /etc/croupier/relay.env \
          && test -s /etc/croupier/table-keys.toml");
    eprintln!("whole test: {:.0?}", started.elapsed());
}
