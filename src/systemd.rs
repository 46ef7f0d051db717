//! The systemd service protocol through the `sd-notify` crate: `READY=1` (with a `STATUS=`
//! line) once start-up checks pass, `WATCHDOG=1` from a loop that proves the process is
//! alive (the table task's own loop, the relay's registry, the floor's discovery loop),
//! `STOPPING=1` on shutdown.
//!
//! Outside systemd (no `NOTIFY_SOCKET`) there is no notifier and nothing is sent.

use sd_notify::NotifyState;
use std::io;
use std::sync::Arc;
use std::time::Duration;

/// The service manager's notification socket, present when systemd gave one.
#[derive(Debug)]
pub struct Notifier {
    _private: (),
}

impl Notifier {
    /// The notifier systemd gave this process, if any (`NOTIFY_SOCKET`).
    pub fn from_env() -> Option<Notifier> {
        std::env::var_os("NOTIFY_SOCKET").map(|_| Notifier { _private: () })
    }

    /// Sends `states` in one datagram. Errors are the caller's to log or ignore: a lost
    /// notification must never stop the table.
    pub fn send(&self, states: &[NotifyState<'_>]) -> io::Result<()> {
        // `false`: keep NOTIFY_SOCKET, every later ping needs it.
        sd_notify::notify(false, states)
    }

    /// Start-up is complete: the store is verified, the log replayed, the shoe opened (or its
    /// absence alarmed).
    pub fn ready(&self, status: &str) -> io::Result<()> {
        self.send(&[NotifyState::Ready, NotifyState::Status(status)])
    }

    /// The table loop is alive.
    pub fn watchdog(&self) -> io::Result<()> {
        self.send(&[NotifyState::Watchdog])
    }

    /// Shutting down.
    pub fn stopping(&self) -> io::Result<()> {
        self.send(&[NotifyState::Stopping])
    }
}

/// How often to ping the watchdog: half the interval systemd expects (`WATCHDOG_USEC`), if
/// systemd asked for pings for this process (`WATCHDOG_PID`, when set, is ours).
///
/// Not `sd_notify::watchdog_enabled`: that one refuses when `WATCHDOG_PID` is absent,
/// where sd_watchdog_enabled(3) accepts it — and a supervisor that starts the binary (the
/// watchdog test, the resources bench) cannot know the pid beforehand.
pub fn watchdog_interval() -> Option<Duration> {
    if let Some(pid) = std::env::var_os("WATCHDOG_PID") {
        if pid.to_string_lossy().parse::<u32>().ok() != Some(std::process::id()) {
            return None;
        }
    }
    let usec: u64 = std::env::var("WATCHDOG_USEC").ok()?.parse().ok()?;
    (usec > 0).then(|| Duration::from_micros(usec / 2))
}

/// systemd's watchdog, for a loop to ping: each role pings from the loop whose progress
/// shows it works, so a hung process stops pinging and systemd restarts it.
#[derive(Debug, Clone)]
pub struct Watchdog {
    /// The notification socket.
    pub notifier: Arc<Notifier>,
    /// How often to ping (half of `WatchdogSec`).
    pub every: Duration,
}

impl Watchdog {
    /// The watchdog systemd asked this process to ping (`WATCHDOG_USEC` with a
    /// `NOTIFY_SOCKET`), if any.
    pub fn from_env() -> Option<Watchdog> {
        let every = watchdog_interval()?;
        Notifier::from_env().map(|n| Watchdog {
            notifier: Arc::new(n),
            every,
        })
    }

    /// Ticks every [`Watchdog::every`], on the process's grid (`clock::every`); after a
    /// stall the next tick is the next point of the grid (no burst of pings that would
    /// hide how long the loop was stuck).
    pub fn interval(&self) -> tokio::time::Interval {
        crate::clock::every(self.every)
    }
}

/// The next tick of `ticks`, or never without a watchdog.
pub async fn next_tick(ticks: &mut Option<tokio::time::Interval>) {
    match ticks {
        Some(t) => {
            t.tick().await;
        }
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::net::UnixDatagram;

    #[test]
    fn messages_arrive_as_datagrams() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("notify.sock");
        let manager = UnixDatagram::bind(&path).expect("bind");
        // The only test in this process that reads NOTIFY_SOCKET.
        std::env::set_var("NOTIFY_SOCKET", &path);
        let n = Notifier::from_env().expect("a notifier");
        n.ready("table t1 ready").expect("send");
        n.watchdog().expect("send");
        std::env::remove_var("NOTIFY_SOCKET");
        assert!(Notifier::from_env().is_none());
        let mut buf = [0u8; 256];
        let len = manager.recv(&mut buf).expect("recv");
        assert_eq!(&buf[..len], b"READY=1\nSTATUS=table t1 ready\n");
        let len = manager.recv(&mut buf).expect("recv");
        assert_eq!(&buf[..len], b"WATCHDOG=1\n");
    }
}
