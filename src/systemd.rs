//! The systemd service protocol (`sd_notify`), spoken directly over the notification
//! socket: `READY=1` once start-up checks pass, `WATCHDOG=1` from the table task's own loop,
//! `STOPPING=1` on shutdown. No libsystemd: the protocol is one datagram per message.
//!
//! Outside systemd (no `NOTIFY_SOCKET`) every call is a no-op.

use std::io;
use std::os::unix::net::UnixDatagram;
use std::path::PathBuf;
use std::time::Duration;

/// A connection to the service manager's notification socket.
#[derive(Debug)]
pub struct Notifier {
    socket: UnixDatagram,
    target: Target,
}

#[derive(Debug, Clone)]
enum Target {
    Path(PathBuf),
    /// A Linux abstract socket (`NOTIFY_SOCKET=@name`).
    Abstract(Vec<u8>),
}

impl Notifier {
    /// The notifier systemd gave this process, if any (`NOTIFY_SOCKET`).
    pub fn from_env() -> Option<Notifier> {
        let addr = std::env::var_os("NOTIFY_SOCKET")?;
        Notifier::to(addr.to_string_lossy().as_ref()).ok()
    }

    /// A notifier for the socket at `addr` (a path, or `@name` for an abstract socket).
    pub fn to(addr: &str) -> io::Result<Notifier> {
        let target = match addr.strip_prefix('@') {
            Some(name) => Target::Abstract(name.as_bytes().to_vec()),
            None => Target::Path(PathBuf::from(addr)),
        };
        Ok(Notifier {
            socket: UnixDatagram::unbound()?,
            target,
        })
    }

    /// Sends one message (`KEY=VALUE` lines). Errors are the caller's to log or ignore: a
    /// lost notification must never stop the table.
    pub fn send(&self, message: &str) -> io::Result<()> {
        match &self.target {
            Target::Path(p) => self.socket.send_to(message.as_bytes(), p).map(|_| ()),
            Target::Abstract(name) => {
                use std::os::linux::net::SocketAddrExt;
                let addr = std::os::unix::net::SocketAddr::from_abstract_name(name)?;
                self.socket
                    .send_to_addr(message.as_bytes(), &addr)
                    .map(|_| ())
            }
        }
    }

    /// Start-up is complete: the store is verified, the log replayed, the shoe opened (or its
    /// absence alarmed).
    pub fn ready(&self, status: &str) -> io::Result<()> {
        self.send(&format!("READY=1\nSTATUS={status}"))
    }

    /// The table loop is alive.
    pub fn watchdog(&self) -> io::Result<()> {
        self.send("WATCHDOG=1")
    }

    /// Shutting down.
    pub fn stopping(&self) -> io::Result<()> {
        self.send("STOPPING=1")
    }
}

/// How often to ping the watchdog: half the interval systemd expects (`WATCHDOG_USEC`), if
/// systemd asked for pings for this process (`WATCHDOG_PID`, when set, is ours).
pub fn watchdog_interval() -> Option<Duration> {
    if let Some(pid) = std::env::var_os("WATCHDOG_PID") {
        if pid.to_string_lossy().parse::<u32>().ok() != Some(std::process::id()) {
            return None;
        }
    }
    let usec: u64 = std::env::var("WATCHDOG_USEC").ok()?.parse().ok()?;
    (usec > 0).then(|| Duration::from_micros(usec / 2))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_arrive_as_datagrams() {
        let dir = std::env::temp_dir().join(format!("croupier-notify-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let path = dir.join("notify.sock");
        let _ = std::fs::remove_file(&path);
        let manager = UnixDatagram::bind(&path).expect("bind");
        let n = Notifier::to(path.to_str().expect("utf-8")).expect("notifier");
        n.ready("table t1 ready").expect("send");
        n.watchdog().expect("send");
        let mut buf = [0u8; 256];
        let len = manager.recv(&mut buf).expect("recv");
        assert_eq!(&buf[..len], b"READY=1\nSTATUS=table t1 ready");
        let len = manager.recv(&mut buf).expect("recv");
        assert_eq!(&buf[..len], b"WATCHDOG=1");
    }
}
