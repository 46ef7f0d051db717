//! The demo's processes: each started in its own process group with a death signal, its
//! first stdout line read for the address it serves, watched while the demo runs, and
//! stopped in order — the services, then the broker they publish to. Apart from the
//! demo's plan (`mod.rs`), since this is the part that deals in pids and signals.

use super::{database::drop_database, io, output::tell, Demo, DemoError};
use std::ffi::OsString;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// How long a service may take to print its first line (a cold start on a busy machine).
const ANNOUNCE_WITHIN: Duration = Duration::from_secs(60);

/// How long a service may take to stop on SIGTERM before it is killed (a table finishes
/// its commit, the floor its batch).
const STOP_WITHIN: Duration = Duration::from_secs(15);

/// A process the demo started.
pub(super) struct Running {
    name: String,
    child: Child,
    log: PathBuf,
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

/// The address in a service's first line (`… serving http://ADDR/`, the floor's
/// `… pit page http://ADDR/`): after the last `://`.
fn announced_addr(line: &str) -> Option<String> {
    let (_, rest) = line.trim().rsplit_once("://")?;
    let addr = rest.trim_end_matches('/');
    (!addr.is_empty() && !addr.contains(char::is_whitespace)).then(|| reachable(addr))
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
    pub(super) async fn address(&mut self) -> Result<String, DemoError> {
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
    pub(super) fn start_service(
        &mut self,
        name: &str,
        args: Vec<OsString>,
    ) -> Result<usize, DemoError> {
        let log = self.dir.join(format!("{name}.log"));
        let child = spawn(&self.options.exe, &args, &log)?;
        self.services.push(Running {
            name: name.to_string(),
            child,
            log,
        });
        Ok(self.services.len() - 1)
    }

    /// `nats-server` with JetStream on a free loopback port, its store in the directory;
    /// answers its URL once it accepts connections.
    pub(super) async fn start_broker(&mut self, program: &Path) -> Result<String, DemoError> {
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

    /// Until `stop`, or until a process stops on its own (an error: the demo is no longer
    /// whole).
    pub(super) async fn watch(
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
    pub(super) async fn stop(&mut self) -> Result<(), DemoError> {
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
}
